// `tally directory export|import` for the embedded store: the whole
// directory as one document, out of a data directory no router holds, or
// into an empty one, keeping every shard id, epoch and identity.
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { ErrorCode, TallyError, storageError } from '../../../wire/index.ts';
import type { PairAddresses } from '../contract.ts';
import { pairInfoOf, type DirectorySnapshot } from '../snapshot.ts';
import { directoryFileName, openDirectoryFile, rowOfPair, upsertPair } from './schema.ts';
import { SqliteDirectory } from './store.ts';

const noLimits = { countersMax: Number.MAX_SAFE_INTEGER, shardsTotalMax: Number.MAX_SAFE_INTEGER };

/** The directory in dataDir as an export, its pairs as stored (no --pairs to check them against). Refused while a router holds it. */
// eslint-disable-next-line no-restricted-properties -- the export's stored and shown timestamp
export async function exportFromSqlite(dataDir: string, now: () => number = Date.now): Promise<DirectorySnapshot> {
  const file = path.join(dataDir, directoryFileName);
  if (!fs.existsSync(file)) throw new TallyError(ErrorCode.notFound, `there is no directory in ${dataDir} (no ${directoryFileName})`);
  const probe = new Database(file, { readonly: true, timeout: 0, fileMustExist: true });
  let stored: PairAddresses[];
  try {
    stored = probe
      .prepare('SELECT primary_addr AS "primary", follower_addr AS follower FROM pairs ORDER BY pair_index')
      .all() as PairAddresses[];
  } catch (error) {
    if ((error as { code?: string }).code === 'SQLITE_BUSY')
      throw new TallyError(ErrorCode.failedPrecondition, `the directory ${file} is in use by a router: stop it first`);
    throw storageError(error, 'router');
  } finally {
    probe.close();
  }
  const directory = SqliteDirectory.open(dataDir, stored, now, noLimits);
  try {
    return await directory.exportSnapshot();
  } finally {
    await directory.close();
  }
}

/**
 * Writes an export into a new directory in dataDir (refused when one
 * with any pair or counter is there), keeping every shard id, epoch and
 * identity, and the next shard id. A growth another store had announced
 * but not activated is completed: with one router nobody else must see it.
 */
// eslint-disable-next-line no-restricted-properties -- the clock of the rows an import stores
export function importIntoSqlite(dataDir: string, snapshot: DirectorySnapshot, now: () => number = Date.now): void {
  const db = openDirectoryFile(dataDir);
  try {
    const used = db.prepare('SELECT (SELECT COUNT(*) FROM pairs) + (SELECT COUNT(*) FROM counters)').pluck(true).get() as number;
    if (used > 0) throw new TallyError(ErrorCode.failedPrecondition, `${dataDir} already holds a directory: import into an empty one`);
    const insertPair = db.prepare(upsertPair);
    const insertCounter = db.prepare(
      'INSERT INTO counters (name, shard_count, created_ms, kind, autoscale, window_bucket_ms, window_retention_ms, generation, ttl_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
    );
    const insertShard = db.prepare('INSERT INTO shards (shard_id, counter, shard_index, pair_index, created_ms) VALUES (?, ?, ?, ?, ?)');
    const insertGrowth = db.prepare('INSERT INTO growths (counter, previous_shard_count, new_shard_count, grown_ms) VALUES (?, ?, ?, ?)');
    const insertTask = db.prepare('INSERT INTO shard_tasks (shard_id, pair_index, kind, generation, created_ms) VALUES (?, ?, ?, ?, ?)');
    const write = db.transaction(() => {
      for (const pair of snapshot.pairs) insertPair.run(...rowOfPair(pairInfoOf(pair)));
      for (const counter of snapshot.counters) {
        insertCounter.run(
          counter.name,
          counter.shards.length,
          counter.createdMs,
          counter.kind,
          counter.autoscale ? 1 : 0,
          counter.window.bucketMs,
          counter.window.retentionMs,
          counter.generation,
          counter.ttlMs,
        );
        counter.shards.forEach(([shardId, pairIndex], shardIndex) =>
          insertShard.run(shardId, counter.name, shardIndex, pairIndex, counter.createdMs),
        );
        const growths = [...counter.growths];
        if (counter.writableShardCount < counter.shards.length)
          growths.push({ previousShardCount: counter.writableShardCount, grownMs: now() });
        growths.forEach((growth, index) =>
          insertGrowth.run(
            counter.name,
            growth.previousShardCount,
            growths[index + 1]?.previousShardCount ?? counter.shards.length,
            growth.grownMs,
          ),
        );
      }
      for (const task of snapshot.shardTasks) insertTask.run(task.shardId, task.pairIndex, task.kind, task.generation, task.createdMs);
      // AUTOINCREMENT continues from here: no id below shardIdNext is given out again.
      db.prepare("DELETE FROM sqlite_sequence WHERE name = 'shards'").run();
      db.prepare("INSERT INTO sqlite_sequence (name, seq) VALUES ('shards', ?)").run(snapshot.shardIdNext - 1);
    });
    try {
      write();
    } catch (error) {
      throw storageError(error, 'router');
    }
  } finally {
    db.close();
  }
}
