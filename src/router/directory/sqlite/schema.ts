// The embedded directory's file: opened under an exclusive lock (a second
// router on the same data directory refuses to start), its tables, and the
// columns later releases added, added to older files on open.
import path from 'node:path';
import Database from 'better-sqlite3';
import { ErrorCode, TallyError, storageError } from '../../../wire/index.ts';
import { preparePrivateDir, preparePrivateFile } from '../../../common/index.ts';
import { parseAdvertised, type PairInfo } from '../contract.ts';

export const directoryFileName = 'directory.sqlite';

/** Opens (creating) dataDir's directory file, locked, at the current schema. */
export function openDirectoryFile(dataDir: string): Database.Database {
  preparePrivateDir(dataDir);
  const file = path.join(dataDir, directoryFileName);
  preparePrivateFile(file);
  // No busy wait: a lock held now is held by a live router, not by one finishing a write.
  const db = new Database(file, { timeout: 0 });
  try {
    // Held from the first access until close (the OS releases it when the
    // process dies): a second router on this file would hand out the same
    // shard ids and fight over roles, so it must not start.
    db.pragma('locking_mode = EXCLUSIVE');
    db.exec('BEGIN IMMEDIATE; COMMIT');
  } catch (error) {
    db.close();
    if ((error as { code?: string }).code === 'SQLITE_BUSY')
      throw new TallyError(
        ErrorCode.failedPrecondition,
        `the directory ${file} is in use by another router: one SQLite directory serves one router (run several routers on etcd: --etcd)`,
      );
    throw storageError(error, 'router');
  }
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    createTables(db);
    migrate(db);
  } catch (error) {
    db.close();
    throw storageError(error, 'router');
  }
  return db;
}

function createTables(db: Database.Database): void {
  db.exec(`
    CREATE TABLE IF NOT EXISTS pairs (
      pair_index INTEGER PRIMARY KEY,
      primary_addr TEXT NOT NULL,
      follower_addr TEXT NOT NULL,
      epoch INTEGER NOT NULL,
      in_sync INTEGER NOT NULL DEFAULT 0
    );
    CREATE TABLE IF NOT EXISTS counters (
      name TEXT PRIMARY KEY,
      shard_count INTEGER NOT NULL,
      created_ms INTEGER NOT NULL
    );
    -- AUTOINCREMENT: a shard id is never reused, even after a crash.
    CREATE TABLE IF NOT EXISTS shards (
      shard_id INTEGER PRIMARY KEY AUTOINCREMENT,
      counter TEXT NOT NULL,
      shard_index INTEGER NOT NULL,
      pair_index INTEGER NOT NULL,
      created_ms INTEGER NOT NULL,
      UNIQUE (counter, shard_index)
    );
    CREATE TABLE IF NOT EXISTS growths (
      counter TEXT NOT NULL,
      previous_shard_count INTEGER NOT NULL,
      new_shard_count INTEGER NOT NULL,
      grown_ms INTEGER NOT NULL
    );
    CREATE INDEX IF NOT EXISTS growths_by_counter ON growths (counter);
    -- Drops and clears owed by nodes, until the shard's primary confirms.
    CREATE TABLE IF NOT EXISTS shard_tasks (
      shard_id INTEGER PRIMARY KEY,
      pair_index INTEGER NOT NULL,
      kind TEXT NOT NULL,
      created_ms INTEGER NOT NULL
    );
    -- Keys of recent clears: a retry of a keyed clear clears nothing more.
    CREATE TABLE IF NOT EXISTS clear_keys (
      counter TEXT NOT NULL,
      idem_key BLOB NOT NULL,
      generation INTEGER NOT NULL,
      cleared_ms INTEGER NOT NULL,
      PRIMARY KEY (counter, idem_key)
    );
    CREATE INDEX IF NOT EXISTS clear_keys_by_time ON clear_keys (cleared_ms);
    -- Deleted names, for the regions that peer: how many deletes of each this region applied.
    CREATE TABLE IF NOT EXISTS tombstones (
      name TEXT PRIMARY KEY,
      incarnation INTEGER NOT NULL,
      deleted_ms INTEGER NOT NULL
    );
  `);
}

/** Columns added after the first release: added to older directories. */
function migrate(db: Database.Database): void {
  const addColumn = (table: string, column: string, definition: string): void => {
    const columns = db.prepare(`SELECT name FROM pragma_table_info('${table}')`).all() as { name: string }[];
    if (!columns.some((entry) => entry.name === column)) db.exec(`ALTER TABLE ${table} ADD COLUMN ${column} ${definition}`);
  };
  addColumn('pairs', 'in_sync', 'INTEGER NOT NULL DEFAULT 0');
  addColumn('pairs', 'primary_id', "TEXT NOT NULL DEFAULT ''");
  addColumn('pairs', 'follower_id', "TEXT NOT NULL DEFAULT ''");
  addColumn('pairs', 'acked_lsn', 'INTEGER NOT NULL DEFAULT 0');
  // Rows from before identities are legacy (1); new pairs are inserted with 0.
  addColumn('pairs', 'legacy', 'INTEGER NOT NULL DEFAULT 1');
  addColumn('pairs', 'replaced', 'INTEGER NOT NULL DEFAULT 0');
  addColumn('pairs', 'added_online', 'INTEGER NOT NULL DEFAULT 0');
  addColumn('pairs', 'draining', 'INTEGER NOT NULL DEFAULT 0');
  addColumn('pairs', 'config_version', 'INTEGER NOT NULL DEFAULT 0');
  // JSON of PairInfo.advertised: what each member reported of itself (zone, replication address).
  addColumn('pairs', 'advertised', "TEXT NOT NULL DEFAULT '{}'");
  addColumn('counters', 'autoscale', 'INTEGER NOT NULL DEFAULT 1');
  addColumn('counters', 'kind', "TEXT NOT NULL DEFAULT 'total'");
  addColumn('counters', 'window_bucket_ms', 'INTEGER NOT NULL DEFAULT 0');
  addColumn('counters', 'window_retention_ms', 'INTEGER NOT NULL DEFAULT 0');
  addColumn('counters', 'generation', 'INTEGER NOT NULL DEFAULT 0');
  addColumn('shard_tasks', 'generation', 'INTEGER NOT NULL DEFAULT 0');
  // NULL: the router default applies; 0: never expires; else milliseconds.
  addColumn('counters', 'ttl_ms', 'INTEGER');
}

// ---- The pair codec: one row per pair ---------------------------------------

const pairColumns =
  'pair_index, primary_addr, follower_addr, epoch, in_sync, primary_id, follower_id, acked_lsn, legacy, replaced, added_online, draining, config_version, advertised';

/** Reads every pair row (safe integers: epochs, lsns and versions are bigints). */
export const selectPairs = `SELECT ${pairColumns} FROM pairs ORDER BY pair_index`;
/** Writes a whole pair: insert or replace its row. */
export const upsertPair = `INSERT OR REPLACE INTO pairs (${pairColumns}) VALUES (${pairColumns
  .split(', ')
  .map(() => '?')
  .join(', ')})`;

export interface PairRow {
  pair_index: bigint;
  primary_addr: string;
  follower_addr: string;
  epoch: bigint;
  in_sync: bigint;
  primary_id: string;
  follower_id: string;
  acked_lsn: bigint;
  legacy: bigint;
  replaced: bigint;
  added_online: bigint;
  draining: bigint;
  config_version: bigint;
  advertised: string;
}

export function pairOfRow(row: PairRow): PairInfo {
  return {
    pairIndex: Number(row.pair_index),
    primary: row.primary_addr,
    follower: row.follower_addr,
    epoch: row.epoch,
    inSync: row.in_sync === 1n,
    primaryId: row.primary_id,
    followerId: row.follower_id,
    ackedLsn: row.acked_lsn,
    legacy: row.legacy === 1n,
    replaced: row.replaced === 1n,
    addedOnline: row.added_online === 1n,
    draining: row.draining === 1n,
    configVersion: row.config_version,
    advertised: parseAdvertised(`pair ${row.pair_index}`, row.advertised, row.primary_addr, row.follower_addr),
  };
}

/** upsertPair's parameters for a pair. */
export function rowOfPair(pair: PairInfo): unknown[] {
  const flag = (value: boolean): number => (value ? 1 : 0);
  return [
    pair.pairIndex,
    pair.primary,
    pair.follower,
    pair.epoch,
    flag(pair.inSync),
    pair.primaryId,
    pair.followerId,
    pair.ackedLsn,
    flag(pair.legacy),
    flag(pair.replaced),
    flag(pair.addedOnline),
    flag(pair.draining),
    pair.configVersion,
    JSON.stringify(pair.advertised),
  ];
}
