// How entries become what the log stores, and how a tail of them goes: a
// row each, or a commit record for a run of plain increments of one commit,
// each with its checksum, and (on a primary) the same bytes laid out for the
// replication wire. Runs inside the caller's transaction; it neither checks
// entries (ShardLog does, before) nor moves the log's tail.
import type { CommitWireWriter } from './commit-wire.ts';
import { recordChecksum, rowChecksum } from './checksums.ts';
import type { prepareLogStatements } from './log-statements.ts';
import { decodeRecord, encodeRecord, isPlainEntry, recordEntriesMin, type RawRecord } from './records/commit-records.ts';
import { extraColumns, type LogEntry } from './records/log-entry.ts';

export class EntryWriter {
  constructor(private readonly statements: ReturnType<typeof prepareLogStatements>) {}

  /** One entry as a log row at lsn. */
  insertRow(lsn: bigint, epoch: bigint, entry: LogEntry, atMs: number, wire?: CommitWireWriter): void {
    const key = entry.idempotencyKey.length > 0 ? entry.idempotencyKey : null;
    const fence = entry.fenceShardCount || null;
    if (entry.kind === undefined && entry.member === undefined && entry.payload === undefined) {
      const crc = rowChecksum(lsn, epoch, entry.shardId, entry.amount, key, fence, atMs, null, null, null);
      this.statements.insertPlain.run(lsn, epoch, entry.shardId, entry.amount, key, fence, atMs, crc);
      wire?.row(lsn, epoch, entry.shardId, entry.amount, key, fence, atMs, null, null, null, crc);
    } else {
      const extra = extraColumns(entry);
      const crc = rowChecksum(lsn, epoch, entry.shardId, entry.amount, key, fence, atMs, ...extra);
      this.statements.insert.run(lsn, epoch, entry.shardId, entry.amount, key, fence, atMs, ...extra, crc);
      wire?.row(lsn, epoch, entry.shardId, entry.amount, key, fence, atMs, ...extra, crc);
    }
  }

  /**
   * Writes entries from firstLsn on (inside the caller's transaction): each
   * maximal run of plain entries that `sameCommit` joins, of recordEntriesMin
   * or more, as one record; every other entry as a log row.
   */
  writeEntries(
    entries: readonly LogEntry[],
    firstLsn: bigint,
    sameCommit: (previous: number, index: number) => boolean,
    stampOf: (entry: LogEntry, index: number) => [epoch: bigint, atMs: number],
    wire?: CommitWireWriter,
  ): void {
    let index = 0;
    // Bounded: each pass writes at least one entry.
    while (index < entries.length) {
      let end = index;
      while (end < entries.length && isPlainEntry(entries[end]!) && (end === index || sameCommit(end - 1, end))) end++;
      const [epoch, atMs] = stampOf(entries[index]!, index);
      if (end - index >= recordEntriesMin) {
        const [recordFirst, recordLast, data] = [firstLsn + BigInt(index), firstLsn + BigInt(end - 1), encodeRecord(entries, index, end)];
        const crc = recordChecksum(recordFirst, recordLast, epoch, atMs, data);
        this.statements.insertRecord.run(recordFirst, recordLast, epoch, atMs, data, crc);
        wire?.record(recordFirst, recordLast, epoch, atMs, data, crc);
        index = end;
      } else {
        this.insertRow(firstLsn + BigInt(index), epoch, entries[index]!, atMs, wire);
        index++;
      }
    }
  }

  /**
   * Deletes every entry after lsn (inside the caller's transaction) and
   * returns how many went. The record straddling lsn, if any, keeps its
   * prefix (never empty: it starts at or before lsn), unless the checkpoint
   * holds all of that (atCheckpoint): then it goes, as a fold would take it.
   */
  deleteAfter(lsn: bigint, straddling: RawRecord | undefined, atCheckpoint: boolean): number {
    const { deleteAfter, selectRecordEntriesAfter, deleteRecordsAfter, updateRecord } = this.statements;
    let entriesDropped = BigInt(deleteAfter.run(lsn).changes) + selectRecordEntriesAfter.get(lsn)!;
    deleteRecordsAfter.run(lsn);
    if (straddling !== undefined && straddling[1] > lsn) {
      if (atCheckpoint) {
        deleteRecordsAfter.run(straddling[0] - 1n);
      } else {
        const kept = decodeRecord(straddling).filter((entry) => entry.lsn <= lsn);
        const data = encodeRecord(kept, 0, kept.length);
        updateRecord.run(lsn, data, recordChecksum(straddling[0], lsn, straddling[2], straddling[3], data), straddling[0]);
      }
      entriesDropped += straddling[1] - lsn;
    }
    return Number(entriesDropped);
  }
}
