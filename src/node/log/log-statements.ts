// The log's SQL: every statement of fixed SQL the store runs, prepared once
// when it opens, and the helpers that read shard rows as bigints.
import type Database from 'better-sqlite3';
import { partChecksumFunction } from './checksums.ts';
import { type extraColumns, type RawRow, rowColumns } from './records/log-entry.ts';

export const checkpointPartsSql = 'SELECT shard_id, part, data, crc FROM checkpoint_parts';

/** A statement whose rows come back as arrays, integers as bigint (a log lsn or total may pass 2^53). */
export function rowsOf<Params extends unknown[], Row>(db: Database.Database, sql: string): Database.Statement<Params, Row> {
  return db.prepare<Params, Row>(sql).safeIntegers(true).raw(true);
}

/** A statement that reads one column of one row, integers as bigint. */
export function valueOf<Params extends unknown[], Value>(db: Database.Database, sql: string): Database.Statement<Params, Value> {
  return db.prepare<Params, Value>(sql).safeIntegers(true).pluck(true);
}

/**
 * Every statement of fixed SQL the store runs, prepared once when the log
 * opens (the schema is current by then): a prepare parses and plans its SQL,
 * and replication, the checkpointer and metrics run these again and again.
 * The few run once per process (the key replay) are here too: one rule.
 * @internal the node's own: its statement types have no name a declaration
 * file could use, so the build leaves it out of them (stripInternal).
 */
export function prepareLogStatements(db: Database.Database) {
  return { ...entryStatements(db), ...keyStatements(db), ...checkpointStatements(db) };
}

/** Writing and finding entries: rows, records, epochs. */
function entryStatements(db: Database.Database) {
  return {
    insert: db.prepare<
      [
        lsn: bigint,
        epoch: bigint,
        shardId: number,
        amount: bigint,
        key: Buffer | null,
        fenceShardCount: number | null,
        atMs: number,
        ...extra: ReturnType<typeof extraColumns>,
        crc: number,
      ]
    >(`INSERT INTO log (${rowColumns}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
    // A replicated row as the primary stored it, every column verbatim.
    insertRaw: db.prepare<RawRow>(`INSERT INTO log (${rowColumns}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
    // Most rows are plain increments: no kind, member or payload to bind.
    insertPlain: db.prepare<
      [
        lsn: bigint,
        epoch: bigint,
        shardId: number,
        amount: bigint,
        key: Buffer | null,
        fenceShardCount: number | null,
        atMs: number,
        crc: number,
      ]
    >('INSERT INTO log (lsn, epoch, shard_id, amount, idem_key, fence_shard_count, at_ms, crc) VALUES (?, ?, ?, ?, ?, ?, ?, ?)'),
    insertRecord: db.prepare<[firstLsn: bigint, lastLsn: bigint, epoch: bigint, atMs: number, data: Buffer, crc: number]>(
      'INSERT INTO records (first_lsn, last_lsn, epoch, at_ms, data, crc) VALUES (?, ?, ?, ?, ?, ?)',
    ),
    updateRecord: db.prepare<[lastLsn: bigint, data: Buffer, crc: number, firstLsn: bigint]>(
      'UPDATE records SET last_lsn = ?, data = ?, crc = ? WHERE first_lsn = ?',
    ),
    // Entries in the records that start after lsn (what deleteRecordsAfter drops).
    selectRecordEntriesAfter: valueOf<[lsn: bigint], bigint>(
      db,
      'SELECT coalesce(sum(last_lsn - first_lsn + 1), 0) FROM records WHERE first_lsn > ?',
    ),
    deleteRecordsAfter: db.prepare<[lsn: bigint]>('DELETE FROM records WHERE first_lsn > ?'),
    // A record straddling the fold's end stays until a later fold passes it: readers skip its folded entries.
    deleteFoldedRecords: db.prepare<[uptoLsn: bigint, uptoLsnAgain: bigint]>('DELETE FROM records WHERE first_lsn <= ? AND last_lsn <= ?'),
    selectRecordsMaxEpochAfter: valueOf<[lsn: bigint, lsnAgain: bigint], bigint | null>(
      db,
      'SELECT max(epoch) FROM records WHERE first_lsn >= coalesce((SELECT first_lsn FROM records WHERE first_lsn <= ? ORDER BY first_lsn DESC LIMIT 1), 0) AND last_lsn > ?',
    ),
    selectLast: rowsOf<[], [lsn: bigint, epoch: bigint]>(db, 'SELECT lsn, epoch FROM log ORDER BY lsn DESC LIMIT 1'),
    selectEpoch: valueOf<[lsn: bigint], bigint>(db, 'SELECT epoch FROM log WHERE lsn = ?'),
    selectMaxEpochAfter: valueOf<[lsn: bigint], bigint | null>(db, 'SELECT max(epoch) AS epoch FROM log WHERE lsn > ?'),
  };
}

/** Keyed rows within the dedup window, and deleting rows the checkpoint folded. */
function keyStatements(db: Database.Database) {
  return {
    // A point lookup in log_keys (`idem_key = ?` implies the index's IS NOT NULL);
    // the run of one key is a few rows at most (fences, then one increment).
    selectKey: rowsOf<[shardId: number, key: Buffer, sinceMs: number], [lsn: bigint, atMs: bigint, fenceShardCount: bigint | null]>(
      db,
      'SELECT lsn, at_ms, fence_shard_count FROM log WHERE shard_id = ? AND idem_key = ? AND at_ms >= ? ORDER BY lsn DESC LIMIT 1',
    ),
    // Walking back from the end of the log (rowid order, not the key index)
    // finds the newest keyed row that does not fit in memory.
    selectKeyLeftOut: rowsOf<[sinceMs: number, rowsMax: number], [lsn: bigint, atMs: bigint]>(
      db,
      'SELECT lsn, at_ms FROM log NOT INDEXED WHERE idem_key IS NOT NULL AND at_ms >= ? ORDER BY lsn DESC LIMIT 1 OFFSET ?',
    ),
    selectKeysAfter: rowsOf<
      [afterLsn: bigint, sinceMs: number],
      [lsn: bigint, shardId: bigint, key: Buffer, atMs: bigint, fenceShardCount: bigint | null]
    >(
      db,
      'SELECT lsn, shard_id, idem_key, at_ms, fence_shard_count FROM log NOT INDEXED WHERE lsn > ? AND idem_key IS NOT NULL AND at_ms >= ? ORDER BY lsn',
    ),
    selectKeysNewestAtMs: valueOf<[sinceMs: number, uptoLsn: bigint], bigint | null>(
      db,
      'SELECT max(at_ms) AS at_ms FROM log NOT INDEXED WHERE idem_key IS NOT NULL AND at_ms >= ? AND lsn <= ?',
    ),
    deleteAfter: db.prepare<[lsn: bigint]>('DELETE FROM log WHERE lsn > ?'),
    deleteFolded: db.prepare<[afterLsn: bigint, uptoLsn: bigint, keepKeysSinceMs: number]>(
      'DELETE FROM log WHERE lsn > ? AND lsn <= ? AND (idem_key IS NULL OR at_ms < ?)',
    ),
    deleteFoldedKeys: db.prepare<[foldedLsn: bigint, rowsMax: number, keepKeysSinceMs: number]>(
      'DELETE FROM log WHERE lsn IN (SELECT lsn FROM log WHERE lsn <= ? ORDER BY lsn LIMIT ?) AND at_ms < ?',
    ),
  };
}

/** The checkpoint's blocks and parts, meta, and the file's size. */
function checkpointStatements(db: Database.Database) {
  return {
    selectBlock: rowsOf<[firstShard: number], [data: Buffer, crc: bigint | null]>(
      db,
      'SELECT data, crc FROM checkpoint_blocks WHERE first_shard = ?',
    ),
    selectBlocks: rowsOf<[], [firstShard: bigint, data: Buffer, crc: bigint | null]>(
      db,
      'SELECT first_shard, data, crc FROM checkpoint_blocks ORDER BY first_shard',
    ),
    selectBlocksFoldedLsnMax: valueOf<[], bigint | null>(db, 'SELECT max(folded_lsn) FROM checkpoint_blocks'),
    upsertBlock: db.prepare<[firstShard: number, foldedLsn: bigint, data: Buffer, crc: number]>(
      'INSERT INTO checkpoint_blocks (first_shard, folded_lsn, data, crc) VALUES (?, ?, ?, ?) ON CONFLICT (first_shard) DO UPDATE SET folded_lsn = excluded.folded_lsn, data = excluded.data, crc = excluded.crc',
    ),
    deleteBlock: db.prepare<[firstShard: number]>('DELETE FROM checkpoint_blocks WHERE first_shard = ?'),
    selectParts: rowsOf<[], [shardId: bigint, part: string, data: Buffer, crc: bigint | null]>(db, checkpointPartsSql),
    // Through the log_keys index (keyed rows only): a dropped shard's keys, folded.
    deleteShardKeys: db.prepare<[shardId: number, uptoLsn: bigint]>(
      'DELETE FROM log WHERE shard_id = ? AND idem_key IS NOT NULL AND lsn <= ?',
    ),
    // Through the checkpoint_tombstones partial index; a tombstone's data is its drop time, big-endian, so blobs compare as times.
    deleteTombstones: db.prepare<[before: Buffer, rowsMax: number]>(
      "DELETE FROM checkpoint_parts WHERE rowid IN (SELECT rowid FROM checkpoint_parts WHERE part = 'dropped' AND data < ? LIMIT ?)",
    ),
    upsertPart: db.prepare<[shardId: number, part: string, data: Buffer, crc: number]>(
      'INSERT INTO checkpoint_parts (shard_id, part, data, crc) VALUES (?, ?, ?, ?) ON CONFLICT (shard_id, part) DO UPDATE SET data = excluded.data, crc = excluded.crc',
    ),
    // (|| makes TEXT even of two BLOBs: without the CAST a part in several pieces would read back as a string.)
    // A piece joins what earlier pieces left; the checksum is computed over the whole, in SQL.
    appendPart: db.prepare<[shardId: number, part: string, data: Buffer, crc: number]>(
      `INSERT INTO checkpoint_parts (shard_id, part, data, crc) VALUES (?, ?, ?, ?) ON CONFLICT (shard_id, part) DO UPDATE SET data = CAST(data || excluded.data AS BLOB), crc = ${partChecksumFunction}(shard_id, part, CAST(data || excluded.data AS BLOB))`,
    ),
    deletePart: db.prepare<[shardId: number, part: string]>('DELETE FROM checkpoint_parts WHERE shard_id = ? AND part = ?'),
    selectMeta: db.prepare<[key: string], string>('SELECT value FROM meta WHERE key = ?').pluck(true),
    upsertMeta: db.prepare<[key: string, value: string]>(
      'INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
    ),
    deleteMeta: db.prepare<[key: string]>('DELETE FROM meta WHERE key = ?'),
    selectSizeBytes: db
      .prepare<[], number>('SELECT page_count * page_size AS bytes FROM pragma_page_count(), pragma_page_size()')
      .pluck(true),
  };
}

/**
 * `shard_id IN (?, …)`, one parameter per shard id, for a query narrowed to
 * some shards. Its SQL changes with the list's length, which nothing bounds
 * usefully (a fold touches up to sliceRows shards, a Reconcile names any
 * number), so statements that use it are prepared per call, not kept per length.
 */
export function shardIdsFilter(shardIds: readonly number[]): string {
  return `shard_id IN (${shardIds.map(() => '?').join(',')})`;
}

/**
 * The rows of `sql` (a bare `SELECT … FROM table`) for the given shards, or
 * for all of them: through `all` when the caller keeps that query prepared.
 */
export function rowsOfShards<Row>(
  db: Database.Database,
  sql: string,
  shardIds: readonly number[] | undefined,
  all?: Database.Statement<[], Row>,
): Row[] {
  if (shardIds === undefined) return all !== undefined ? all.all() : rowsOf<[], Row>(db, sql).all();
  // SQLite binds at most 32,766 variables per statement: a longer list (a
  // Reconcile naming many shards) is read a chunk at a time.
  const rows: Row[] = [];
  for (let from = 0; from < shardIds.length; from += shardIdsPerQueryMax) {
    const chunk = shardIds.slice(from, from + shardIdsPerQueryMax);
    for (const row of rowsOf<number[], Row>(db, `${sql} WHERE ${shardIdsFilter(chunk)}`).all(...chunk)) rows.push(row);
  }
  return rows;
}

/** Shard ids bound in one `shard_id IN (…)` query: under SQLite's 32,766 variables. */
export const shardIdsPerQueryMax = 30_000;
