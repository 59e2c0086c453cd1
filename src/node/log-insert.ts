// The two INSERTs that write log rows, shared by the log's own connection and
// the writer thread's (log-writer-thread.ts): one place says how a row is stored.
import type Database from 'better-sqlite3';
import { extraColumns, rowColumns, type LogEntry } from './log-entry.ts';

export function prepareInserts(db: Database.Database) {
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
      ]
    >(`INSERT INTO log (${rowColumns}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
    // Most rows are plain increments: no kind, member or payload to bind.
    insertPlain: db.prepare<
      [lsn: bigint, epoch: bigint, shardId: number, amount: bigint, key: Buffer | null, fenceShardCount: number | null, atMs: number]
    >('INSERT INTO log (lsn, epoch, shard_id, amount, idem_key, fence_shard_count, at_ms) VALUES (?, ?, ?, ?, ?, ?, ?)'),
  };
}

export type LogInserts = ReturnType<typeof prepareInserts>;

export function insertRow(inserts: LogInserts, lsn: bigint, epoch: bigint, entry: LogEntry, atMs: number): void {
  const key = entry.idempotencyKey.length > 0 ? entry.idempotencyKey : null;
  if (entry.kind === undefined && entry.member === undefined && entry.payload === undefined) {
    inserts.insertPlain.run(lsn, epoch, entry.shardId, entry.amount, key, entry.fenceShardCount || null, atMs);
  } else {
    inserts.insert.run(lsn, epoch, entry.shardId, entry.amount, key, entry.fenceShardCount || null, atMs, ...extraColumns(entry));
  }
}
