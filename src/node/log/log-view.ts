// A consistent read-only view of the log at one moment (see LogView).
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { replayBatchRows } from '../../common/index.ts';
import { EntryKind, entryOfRow, rowColumns, type RawRow, type StoredEntry } from './records/log-entry.ts';
import { checkpointPartsSql, rowsOf } from './log-statements.ts';
import { checkedPart } from './checksums.ts';
import { MergedReader } from './records/commit-records.ts';
import { blockRowsOf, checkpointTotalsOf, decodeBlock } from './checkpoint/checkpoint-blocks.ts';
import type { SnapshotChunk } from './log-types.ts';

/**
 * A read transaction on its own connection: a fixed view of the log for as
 * long as it is open (WAL lets the writer go on meanwhile). Used where a
 * read spans many event-loop turns: reconciliation and snapshot install,
 * which must not see the checkpointer fold rows away halfway through.
 * Its statements are prepared where they run, not when it opens: a view
 * runs each once, and preparing them all up front only made opening slower.
 */
export class LogView {
  private readonly db: Database.Database;
  private readonly reader: MergedReader;
  /** Every entry up to here is folded into the view's checkpoint. */
  readonly checkpointLsn: bigint;
  /** Epoch of the entry at checkpointLsn (0 for none). */
  readonly checkpointEpoch: bigint;
  /** The last entry in the view. */
  readonly lastLsn: bigint;

  constructor(file: string) {
    this.db = new Database(file, { readonly: true, fileMustExist: true });
    try {
      this.db.exec('BEGIN');
      // The first read fixes the view.
      const meta = new Map(
        (
          this.db.prepare("SELECT key, value FROM meta WHERE key IN ('checkpoint_lsn', 'checkpoint_epoch')").all() as {
            key: string;
            value: string;
          }[]
        ).map((row) => [row.key, row.value]),
      );
      this.checkpointLsn = BigInt(meta.get('checkpoint_lsn') ?? '0');
      this.checkpointEpoch = BigInt(meta.get('checkpoint_epoch') ?? '0');
      this.reader = new MergedReader(this.db);
      const lastLsn = this.reader.tail()?.lsn ?? 0n;
      this.lastLsn = lastLsn < this.checkpointLsn ? this.checkpointLsn : lastLsn;
    } catch (error) {
      this.db.close();
      throw error;
    }
  }

  /** The view's checkpoint totals (optionally only some shards). */
  checkpointTotals(shardIds?: readonly number[]): Map<number, bigint> {
    return checkpointTotalsOf(this.db, shardIds);
  }

  /**
   * Entries after the view's checkpoint up to uptoLsn, in slices with the
   * event loop free between them: each one's shard, amount and kind (a drop
   * resets its shard to nothing).
   */
  async replaySliced(
    onEntry: (lsn: bigint, shardId: number, amount: bigint, kind: EntryKind) => void,
    uptoLsn: bigint,
    shardIds?: readonly number[],
  ): Promise<void> {
    // Rows and records merged, filtered here: records are not searchable by shard (the filter was a scan of the range before too).
    const wanted = shardIds === undefined ? undefined : new Set(shardIds);
    let afterLsn = this.checkpointLsn;
    const stepsMax = Number(uptoLsn / BigInt(replayBatchRows)) + 2;
    for (let step = 0; step < stepsMax; step++) {
      const entries = this.reader.entriesAfter(afterLsn, uptoLsn, replayBatchRows);
      for (const entry of entries)
        if (wanted === undefined || wanted.has(entry.shardId))
          onEntry(entry.lsn, entry.shardId, entry.amount, entry.kind ?? EntryKind.increment);
      if (entries.length < replayBatchRows) return;
      afterLsn = entries[entries.length - 1]!.lsn;
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  /** Entries after afterLsn up to uptoLsn, at most limit, checked as read: the tail past the checkpoint a backup carries. */
  entriesAfter(afterLsn: bigint, uptoLsn: bigint, limit: number): StoredEntry[] {
    return this.reader.entriesAfter(afterLsn, uptoLsn, limit);
  }

  /**
   * The view's checkpoint as snapshot chunks of at most about chunkBytesMax:
   * every shard's total, every part (split into pieces when large), then the
   * keyed entries up to the checkpoint written since keepKeysSinceMs.
   */
  *snapshotChunks(chunkBytesMax: number, keepKeysSinceMs: number): Generator<SnapshotChunk> {
    assert.ok(chunkBytesMax >= 1024, 'snapshot chunks of at least 1 KiB');
    let chunk: SnapshotChunk = { shards: [], parts: [], keys: [] };
    let sizeBytes = 0;
    const full = (): boolean => sizeBytes >= chunkBytesMax;
    const take = (): SnapshotChunk => {
      const done = chunk;
      chunk = { shards: [], parts: [], keys: [] };
      sizeBytes = 0;
      return done;
    };
    for (const [firstShard, data] of blockRowsOf(this.db)) {
      const block = decodeBlock(firstShard, data);
      for (let index = 0; index < block.ids.length; index++) {
        chunk.shards.push([block.ids[index]!, block.totals[index]!]);
        sizeBytes += 24;
        if (full()) yield take();
      }
    }
    const pieceBytesMax = Math.floor(chunkBytesMax / 2);
    for (const [shardId, part, stored, crc] of rowsOf<[], [bigint, string, Buffer, bigint | null]>(
      this.db,
      `${checkpointPartsSql} ORDER BY shard_id, part`,
    ).iterate()) {
      const data = checkedPart(shardId, part, stored, crc);
      for (let offset = 0; offset === 0 || offset < data.length; offset += pieceBytesMax) {
        const piece = data.subarray(offset, offset + pieceBytesMax);
        chunk.parts.push({ shardId: Number(shardId), part, data: piece });
        sizeBytes += 32 + piece.length;
        if (full()) yield take();
      }
    }
    const keyRows = rowsOf<[uptoLsn: bigint, sinceMs: number], RawRow>(
      this.db,
      `SELECT ${rowColumns} FROM log WHERE idem_key IS NOT NULL AND lsn <= ? AND at_ms >= ? ORDER BY lsn`,
    );
    for (const row of keyRows.iterate(this.checkpointLsn, keepKeysSinceMs)) {
      const entry = entryOfRow(row);
      chunk.keys.push(entry);
      sizeBytes += 64 + entry.idempotencyKey.length;
      if (full()) yield take();
    }
    yield take();
  }

  close(): void {
    if (!this.db.open) return;
    this.db.exec('COMMIT');
    this.db.close();
  }
}
