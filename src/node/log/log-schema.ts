// The log file's tables, and the upgrade of an older file to schemaVersion in
// one transaction. Runs once at open, before the store prepares a statement;
// it never reads or writes entries, and refuses a version it does not know.
import type Database from 'better-sqlite3';
import { ShardLogError, rowColumns, type RawRow } from './records/log-entry.ts';
import { blockOf, encodeBlock } from './checkpoint/checkpoint-blocks.ts';
import { blockChecksum, partChecksum, recordChecksum, rowChecksum } from './checksums.ts';
import { rowsOf } from './log-statements.ts';

/**
 * 9: a CRC-32 (crc column) on every log row, commit record, checkpoint block and part (checksums.ts).
 * 8: runs of a commit's plain increments packed as commit records (the records table).
 * 7: shard totals packed in blocks of consecutive shard ids (checkpoint_blocks); the checkpoint table goes.
 * 6: tombstones of dropped shards are found by time (a partial index on checkpoint_parts).
 * 5: keys are looked up on disk (a partial index on shard and key).
 * 4: entry kinds (kind, member, payload columns).
 */
const schemaVersion = 9;

/**
 * Keyed rows only: unkeyed rows (most of a log) cost the index nothing.
 * Entries are (shard_id, idem_key, lsn), so the newest row of a key is the
 * last entry of its run.
 */
const keyIndexSql = 'CREATE INDEX IF NOT EXISTS log_keys ON log (shard_id, idem_key) WHERE idem_key IS NOT NULL';

/** Tombstone rows only (a dropped shard's 'dropped' part, its drop time big-endian): pruning finds expired ones without a scan. */
const tombstoneIndexSql = "CREATE INDEX IF NOT EXISTS checkpoint_tombstones ON checkpoint_parts (data) WHERE part = 'dropped'";

/**
 * Indented as it was first written: SQLite keeps this text in sqlite_master,
 * so a new file stays byte for byte what older nodes made.
 */
const tablesSql = `
        CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE IF NOT EXISTS log (
          lsn INTEGER PRIMARY KEY,
          epoch INTEGER NOT NULL,
          shard_id INTEGER NOT NULL,
          amount INTEGER NOT NULL,
          idem_key BLOB,
          fence_shard_count INTEGER,
          at_ms INTEGER NOT NULL,
          kind INTEGER,
          member INTEGER,
          payload BLOB
        );
        -- The same fold for the other kinds: window buckets, sketches, member sets.
        CREATE TABLE IF NOT EXISTS checkpoint_parts (shard_id INTEGER NOT NULL, part TEXT NOT NULL, data BLOB NOT NULL, PRIMARY KEY (shard_id, part));
      `;

/**
 * Shard totals folded from every entry up to meta checkpoint_lsn, packed
 * (checkpoint-blocks.ts). folded_lsn: the lsn of the fold that last wrote
 * the block (0 from an install or the upgrade); never past checkpoint_lsn.
 */
const blocksSql =
  'CREATE TABLE IF NOT EXISTS checkpoint_blocks (first_shard INTEGER PRIMARY KEY, folded_lsn INTEGER NOT NULL, data BLOB NOT NULL)';

/**
 * A run of consecutive lsns first_lsn..last_lsn, all plain increments (no
 * key, fence, member or payload) of one epoch and commit time, packed
 * (commit-records.ts): entry i is lsn first_lsn + i. Found by lsn through
 * the rowid (the last record starting at or before it), no other index.
 */
const recordsSql =
  'CREATE TABLE IF NOT EXISTS records (first_lsn INTEGER PRIMARY KEY, last_lsn INTEGER NOT NULL, epoch INTEGER NOT NULL, at_ms INTEGER NOT NULL, data BLOB NOT NULL)';

/**
 * 6 -> 7: the checkpoint table's rows become blocks (a million rows: a few
 * seconds, once), and the table goes. A file made new has no such table.
 */
function packCheckpointTable(db: Database.Database): void {
  const exists = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'checkpoint'").get();
  if (exists === undefined) return;
  const insert = db.prepare<[firstShard: number, data: Buffer]>(
    'INSERT INTO checkpoint_blocks (first_shard, folded_lsn, data) VALUES (?, 0, ?)',
  );
  let firstShard = -1;
  const ids: number[] = [];
  const totals: bigint[] = [];
  // Inserted after the read: a connection cannot write while it iterates (a million shards: ~4 MB of blocks held).
  const blocks: [firstShard: number, data: Buffer][] = [];
  const flush = (): void => {
    if (ids.length > 0) blocks.push([firstShard, encodeBlock(firstShard, ids, totals)]);
    ids.length = 0;
    totals.length = 0;
  };
  const rows = db
    .prepare('SELECT shard_id, total FROM checkpoint ORDER BY shard_id')
    .safeIntegers(true)
    .raw(true)
    .iterate() as IterableIterator<[bigint, bigint]>;
  for (const [shardId, total] of rows) {
    if (blockOf(Number(shardId)) !== firstShard) {
      flush();
      firstShard = blockOf(Number(shardId));
    }
    ids.push(Number(shardId));
    totals.push(total);
  }
  flush();
  for (const [first, data] of blocks) insert.run(first, data);
  db.exec('DROP TABLE checkpoint');
}

/** Rows read per step of the 8 -> 9 backfill: a connection cannot write while it iterates. */
const backfillRowsPerStep = 10_000;

/**
 * 8 -> 9: the crc column on the log, records and checkpoint_blocks tables,
 * filled in place for what the file already holds (a million rows: seconds,
 * once). The bytes are trusted as they are at the upgrade: the start-up
 * check (quick_check) has just passed, and replay checks every entry after.
 */
function addChecksums(db: Database.Database): void {
  for (const table of ['log', 'records', 'checkpoint_blocks', 'checkpoint_parts']) {
    const columns = db.prepare(`SELECT name FROM pragma_table_info('${table}')`).pluck().all() as string[];
    if (!columns.includes('crc')) db.exec(`ALTER TABLE ${table} ADD COLUMN crc INTEGER`);
  }
  const rowsAfter = rowsOf<[afterLsn: bigint, rowsMax: number], RawRow>(
    db,
    `SELECT ${rowColumns} FROM log WHERE lsn > ? ORDER BY lsn LIMIT ?`,
  );
  const setRow = db.prepare<[crc: number, lsn: bigint]>('UPDATE log SET crc = ? WHERE lsn = ?');
  // Bounded: each step moves past at least one row or stops.
  for (let after = 0n; ;) {
    const rows = rowsAfter.all(after, backfillRowsPerStep);
    if (rows.length === 0) break;
    for (const [lsn, epoch, shardId, amount, key, fence, atMs, kind, member, payload] of rows)
      setRow.run(rowChecksum(lsn, epoch, shardId, amount, key, fence, atMs, kind, member, payload), lsn);
    after = rows[rows.length - 1]![0];
  }
  const recordsAfter = rowsOf<[afterLsn: bigint, rowsMax: number], [bigint, bigint, bigint, bigint, Buffer]>(
    db,
    'SELECT first_lsn, last_lsn, epoch, at_ms, data FROM records WHERE first_lsn > ? ORDER BY first_lsn LIMIT ?',
  );
  const setRecord = db.prepare<[crc: number, firstLsn: bigint]>('UPDATE records SET crc = ? WHERE first_lsn = ?');
  for (let after = 0n; ;) {
    const records = recordsAfter.all(after, backfillRowsPerStep);
    if (records.length === 0) break;
    for (const [firstLsn, lastLsn, epoch, atMs, data] of records)
      setRecord.run(recordChecksum(firstLsn, lastLsn, epoch, atMs, data), firstLsn);
    after = records[records.length - 1]![0];
  }
  const blocks = rowsOf<[], [bigint, Buffer]>(db, 'SELECT first_shard, data FROM checkpoint_blocks ORDER BY first_shard').all();
  const setBlock = db.prepare<[crc: number, firstShard: bigint]>('UPDATE checkpoint_blocks SET crc = ? WHERE first_shard = ?');
  for (const [firstShard, data] of blocks) setBlock.run(blockChecksum(Number(firstShard), data), firstShard);
  const parts = rowsOf<[], [bigint, string, Buffer]>(db, 'SELECT shard_id, part, data FROM checkpoint_parts').all();
  const setPart = db.prepare<[crc: number, shardId: bigint, part: string]>(
    'UPDATE checkpoint_parts SET crc = ? WHERE shard_id = ? AND part = ?',
  );
  for (const [shardId, part, data] of parts) setPart.run(partChecksum(shardId, part, data), shardId, part);
}

/**
 * Creates the tables of a new file, or brings a file of version 3 to 8 to
 * schemaVersion. Throws ShardLogError for any other version: a newer node's
 * file must not be read as if this node understood it.
 */
export function createOrUpgradeSchema(db: Database.Database, file: string): void {
  db.exec(tablesSql);
  const version = db.prepare("SELECT value FROM meta WHERE key = 'schema_version'").get() as { value: string } | undefined;
  const from = version === undefined ? 3 : Number(version.value);
  if (from !== schemaVersion && !(from >= 3 && from <= 8)) {
    throw new ShardLogError(`log ${file} has schema version ${version!.value}; this node reads ${schemaVersion} (and upgrades 3 to 8)`);
  }
  if (from === schemaVersion) return;
  // One transaction (SQLite DDL is transactional): a crash leaves the old
  // version or the new one, never half. A new file takes the same path: its
  // tables already have every column.
  db.transaction(() => {
    // 3 -> 4: the kind, member and payload columns.
    const columns = new Set(
      (db.prepare("SELECT name FROM pragma_table_info('log')").all() as { name: string }[]).map((column) => column.name),
    );
    for (const [column, type] of [
      ['kind', 'INTEGER'],
      ['member', 'INTEGER'],
      ['payload', 'BLOB'],
    ]) {
      if (!columns.has(column!)) db.exec(`ALTER TABLE log ADD COLUMN ${column} ${type}`);
    }
    // 4 -> 5: the key index; builds over every keyed row the log holds (the window's).
    db.exec(keyIndexSql);
    // 5 -> 6: the tombstone index (no tombstones exist before 6).
    db.exec(tombstoneIndexSql);
    // 6 -> 7: totals in blocks.
    db.exec(blocksSql);
    packCheckpointTable(db);
    // 7 -> 8: commit records (no entry moves: rows stay rows, new commits write records).
    db.exec(recordsSql);
    // 8 -> 9: checksums, filled in for what is there.
    addChecksums(db);
    db.prepare("INSERT INTO meta (key, value) VALUES ('schema_version', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value").run(
      String(schemaVersion),
    );
  })();
}
