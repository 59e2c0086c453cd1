// The checkpoint a log folds into, as the log's own store reads and writes
// it: its position (the lsn and epoch folded up to), its shard totals in
// blocks and every other kind's parts, and the fold round that moves it.
// Runs on the log's connection, inside the log's transactions; it never
// writes a log entry (ShardLog appends, truncates and installs).
import assert from 'node:assert/strict';
import type Database from 'better-sqlite3';
import { INT64_MAX, INT64_MIN } from '../../../wire/index.ts';
import { blockChecksum, checkedPart, partChecksum } from '../checksums.ts';
import { checkpointPartsSql, rowsOf, rowsOfShards, type prepareLogStatements } from '../log-statements.ts';
import type { CheckpointFolder, CheckpointState, SnapshotChunk } from '../log-types.ts';
import { EntryKind, ShardLogError, entryRowCount, entryShardIds, type StoredEntry } from '../records/log-entry.ts';
import {
  blockOf,
  blockRowsOf,
  checkBlocksAfter,
  checkedBlock,
  checkpointTotalsOf,
  decodeBlock,
  indexBlock,
  mergeBlockBytes,
  totalInBlock,
} from './checkpoint-blocks.ts';
import { FoldRound } from './fold-round.ts';

/** A block with no row yet: no shard in it has a total. */
export const noBlock = Buffer.alloc(0);

/** What the checkpoint uses of its log: the connection, its statements, and the log's guarded reads and writes. */
export interface CheckpointLog {
  db: Database.Database;
  statements: ReturnType<typeof prepareLogStatements>;
  folder: CheckpointFolder | undefined;
  /** Runs write in one transaction (a savepoint inside an open one), guarded as every log write. */
  transact<T>(write: () => T): T;
  /** Runs read; damage is told to the log's onDamage first. */
  checkedRead<T>(read: () => T): T;
  /** Entries after afterLsn up to uptoLsn, at most rowsMax, checked to have no gap. */
  entriesAfter(afterLsn: bigint, uptoLsn: bigint, rowsMax: number): StoredEntry[];
  setMeta(key: string, value: string): void;
}

export class CheckpointStore {
  /** Every entry up to this lsn is folded into the checkpoint. */
  lsn = 0n;
  /** Epoch of the entry at lsn (meta checkpoint_epoch). */
  epoch = 0n;
  /** Changes whenever the checkpoint moves or entries it has not folded go: a fold round begun before is stale. */
  private generation = 0;

  constructor(private readonly log: CheckpointLog) {}

  /** The checkpoint now stands at lsn written by epoch (a fold, an install, an emptied log): rounds begun before are stale. */
  moveTo(lsn: bigint, epoch: bigint): void {
    this.lsn = lsn;
    this.epoch = epoch;
    this.generation++;
  }

  /** Entries the checkpoint has not folded changed (a truncation, a failed batch): rounds begun before are stale. */
  invalidateRounds(): void {
    this.generation++;
  }

  /** The checkpoint's shard totals (the fold of every entry up to checkpointLsn). */
  totals(shardIds?: readonly number[]): Map<number, bigint> {
    return this.log.checkedRead(() => checkpointTotalsOf(this.log.db, shardIds));
  }

  /**
   * Visits every shard total of the checkpoint, one row at a time: a rebuild
   * streams millions of them into memory without first holding them all in a
   * Map (garbage several times the size of the totals, the node's peak memory).
   */
  forEachTotal(visit: (shardId: number, total: bigint) => void): void {
    this.log.checkedRead(() => {
      for (const [firstShard, data, crc] of this.log.statements.selectBlocks.iterate()) {
        const block = decodeBlock(Number(firstShard), checkedBlock(Number(firstShard), data, crc));
        for (let index = 0; index < block.ids.length; index++) visit(block.ids[index]!, block.totals[index]!);
      }
    });
  }

  /** The checkpoint's parts (every kind's state but totals) for some shards (default: all). */
  parts(shardIds?: readonly number[]): CheckpointState['parts'] {
    return this.log.checkedRead(() => {
      const rows = rowsOfShards(this.log.db, checkpointPartsSql, shardIds, this.log.statements.selectParts);
      const parts = new Map<number, Map<string, Buffer>>();
      for (const [shardId, part, data, crc] of rows) {
        let shardParts = parts.get(Number(shardId));
        if (shardParts === undefined) parts.set(Number(shardId), (shardParts = new Map()));
        shardParts.set(part, checkedPart(shardId, part, data, crc));
      }
      return parts;
    });
  }

  /** The checkpoint's state for some shards (default: all): totals and the other kinds' parts. */
  state(shardIds?: readonly number[]): CheckpointState {
    return { totals: this.totals(shardIds), parts: this.parts(shardIds) };
  }

  /**
   * Starts a checkpoint round: foldRead gathers entries into it a slice at a
   * time (the event loop may run between), foldCommit writes the checkpoint
   * once. The checkpoint ends exactly as if each slice had been folded in its
   * own transaction; only the writes are fewer.
   */
  beginFold(): FoldRound {
    return new FoldRound(this.lsn, this.generation);
  }

  /**
   * Reads the next entries of the round, up to uptoLsn and carrying at most
   * sliceRows rows (a packed component entry carries many; at least one
   * entry is read), and applies them to the round's state in memory (totals summed
   * here, every other kind through the folder). Writes nothing. Returns the
   * rows read (0 at uptoLsn, or when the round is stale).
   */
  // eslint-disable-next-line no-restricted-properties -- tests' default: the node passes its log clock (steadyWallClock)
  foldRead(round: FoldRound, uptoLsn: bigint, sliceRows: number, nowMs: number = Date.now()): number {
    assert.ok(round.blockChanges === undefined, 'a fold round read after its commit was prepared');
    if (this.isStale(round) || uptoLsn <= round.lastLsn) return 0;
    const read = this.log.entriesAfter(round.lastLsn, uptoLsn, sliceRows);
    if (read.length === 0) return 0;
    let rows = 0;
    let taken = 0;
    while (taken < read.length && (taken === 0 || rows + entryRowCount(read[taken]!) <= sliceRows)) rows += entryRowCount(read[taken++]!);
    const entries = taken === read.length ? read : read.slice(0, taken);
    const last = entries[entries.length - 1]!;
    const touched = entryShardIds(entries);
    // A shard's checkpoint state is read once per round, the first time it is touched.
    const unseen = touched.filter((shardId) => !round.touched.has(shardId));
    if (unseen.length > 0) {
      // Totals from the round's indexed blocks, each block read and scanned once per round (its commit merges into its bytes).
      const unread = [...new Set(unseen.map(blockOf))].filter((firstShard) => !round.blocks.has(firstShard));
      this.log.checkedRead(() => {
        const stored = new Map(blockRowsOf(this.log.db, unread));
        for (const firstShard of unread) round.blocks.set(firstShard, indexBlock(firstShard, stored.get(firstShard) ?? noBlock));
      });
      const beforeParts = this.parts(unseen);
      for (const shardId of unseen) {
        round.touched.add(shardId);
        // Only the unseen shards' totals are decoded; a block's others are skipped.
        const total = this.log.checkedRead(() => totalInBlock(round.blocks.get(blockOf(shardId))!, shardId));
        const parts = beforeParts.get(shardId);
        if (total !== undefined) {
          round.before.totals.set(shardId, total);
          round.after.totals.set(shardId, total);
        }
        if (parts !== undefined) {
          round.before.parts.set(shardId, parts);
          round.after.parts.set(shardId, new Map(parts));
        }
      }
    }
    const withParts = entries.some((entry) => (entry.kind ?? EntryKind.increment) !== EntryKind.increment);
    if (withParts && this.log.folder === undefined)
      throw new ShardLogError('this log holds entries beyond increments but was opened without a checkpoint folder');
    // Plain increments to shards with no other state (most folds) are summed
    // here; anything else goes through the folder, which applies entries as
    // memory does (a drop leaves no total row at all), from the round's state.
    const viaFolder = withParts || touched.some((shardId) => round.after.parts.has(shardId));
    if (!viaFolder) {
      for (const entry of entries) round.after.totals.set(entry.shardId, (round.after.totals.get(entry.shardId) ?? 0n) + entry.amount);
    } else {
      const state: CheckpointState = { totals: new Map(), parts: new Map() };
      for (const shardId of touched) {
        const total = round.after.totals.get(shardId);
        const parts = round.after.parts.get(shardId);
        if (total !== undefined) state.totals.set(shardId, total);
        if (parts !== undefined) state.parts.set(shardId, parts);
      }
      const after = this.log.folder!.fold(state, entries, nowMs);
      for (const shardId of touched) {
        const total = after.totals.get(shardId);
        if (total === undefined) round.after.totals.delete(shardId);
        else round.after.totals.set(shardId, total);
        const parts = after.parts.get(shardId);
        if (parts === undefined || parts.size === 0) round.after.parts.delete(shardId);
        else round.after.parts.set(shardId, parts);
      }
      // A dropped shard's keyed rows are no use to idempotency (the tombstone refuses every write): they go at commit.
      for (const entry of entries) if (entry.kind === EntryKind.drop) round.droppedUpto.set(entry.shardId, last.lsn);
    }
    for (const shardId of touched) {
      const total = round.after.totals.get(shardId);
      assert.ok(total === undefined || (total <= INT64_MAX && total >= INT64_MIN), 'a folded shard total left int64');
    }
    round.rows += rows;
    round.lastLsn = last.lsn;
    round.lastEpoch = last.epoch;
    return rows;
  }

  /**
   * Merges the round's new totals into the bytes of at most blocksMax of
   * its changed blocks, in memory (no read or write of the file), so that
   * the commit only writes them: the caller runs the event loop between
   * calls. Returns the blocks left to merge. No foldRead after the first call.
   */
  foldPrepare(round: FoldRound, blocksMax: number): number {
    const changes = this.blockChangesOf(round);
    round.mergeCursor ??= changes.entries();
    // The checksum too: the commit, one transaction that holds the event loop, then only writes.
    for (let mergedNow = 0; mergedNow < blocksMax; mergedNow++) {
      const next = round.mergeCursor.next();
      if (next.done === true) break;
      const [firstShard, blockChanges] = next.value;
      const data = mergeBlockBytes(firstShard, round.blocks.get(firstShard)!.data, blockChanges);
      round.merged.set(firstShard, { data, crc: blockChecksum(firstShard, data) });
    }
    return changes.size - round.merged.size;
  }

  /** The round's changed totals by block, in shard order (made once, after the last read). */
  private blockChangesOf(round: FoldRound): Map<number, Map<number, bigint | undefined>> {
    if (round.blockChanges !== undefined) return round.blockChanges;
    const changes = new Map<number, Map<number, bigint | undefined>>();
    for (const shardId of Float64Array.from(round.touched).sort()) {
      const total = round.after.totals.get(shardId);
      if (total === round.before.totals.get(shardId)) continue;
      const firstShard = blockOf(shardId);
      let blockChanges = changes.get(firstShard);
      if (blockChanges === undefined) changes.set(firstShard, (blockChanges = new Map()));
      blockChanges.set(shardId, total);
    }
    round.blockChanges = changes;
    return changes;
  }

  /**
   * Writes what the round read into the checkpoint and deletes the folded
   * rows (keeping keyed rows younger than keepKeysSinceMs) in one
   * transaction, each touched shard's rows once, in shard order. Returns the
   * rows folded: 0 for an empty round, and for a stale one (the log was
   * emptied, installed, truncated or folded since it began), whose reads are
   * dropped for the next round to make again.
   */
  foldCommit(round: FoldRound, keepKeysSinceMs: number): number {
    if (round.rows === 0 || this.isStale(round)) return 0;
    // Shard order: neighbouring shards share B-tree pages, so each page is changed in one run.
    // Only shards with parts before or after: a sort of every touched shard here held the event loop for nothing.
    const shardIds = Float64Array.from(new Set([...round.before.parts.keys(), ...round.after.parts.keys()])).sort();
    const { upsertPart, deletePart, deleteFolded, deleteShardKeys } = this.log.statements;
    const changes = this.blockChangesOf(round);
    this.log.transact(() => {
      for (const shardId of shardIds) {
        const beforeParts = round.before.parts.get(shardId);
        const afterParts = round.after.parts.get(shardId);
        if (beforeParts === undefined && afterParts === undefined) continue;
        for (const [part, data] of afterParts ?? [])
          if (!beforeParts?.get(part)?.equals(data)) upsertPart.run(shardId, part, data, partChecksum(shardId, part, data));
        for (const part of beforeParts?.keys() ?? []) if (!afterParts?.has(part)) deletePart.run(shardId, part);
      }
      // Each block the round changed, rewritten once: merged by foldPrepare, or here.
      for (const [firstShard, blockChanges] of changes) {
        const merged = round.merged.get(firstShard);
        if (merged !== undefined) this.putBlock(firstShard, merged.data, round.lastLsn, merged.crc);
        else this.putBlock(firstShard, mergeBlockBytes(firstShard, round.blocks.get(firstShard)!.data, blockChanges), round.lastLsn);
      }
      for (const [shardId, uptoLsn] of round.droppedUpto) deleteShardKeys.run(shardId, uptoLsn);
      deleteFolded.run(round.fromLsn, round.lastLsn, keepKeysSinceMs);
      this.log.statements.deleteFoldedRecords.run(round.lastLsn, round.lastLsn);
      this.log.setMeta('checkpoint_lsn', round.lastLsn.toString());
      this.log.setMeta('checkpoint_epoch', round.lastEpoch.toString());
    });
    this.moveTo(round.lastLsn, round.lastEpoch);
    return round.rows;
  }

  /**
   * Writes changed totals (ascending shard ids; undefined: no total) into
   * their blocks, each block once, merged into its state from `blockAt`;
   * a block left with no shard goes. Inside the caller's transaction.
   */
  writeBlocks(totals: ReadonlyMap<number, bigint | undefined>, blockAt: (firstShard: number) => Buffer, foldedLsn: bigint): void {
    let firstShard = -1;
    const changes = new Map<number, bigint | undefined>();
    const flush = (): void => {
      if (changes.size === 0) return;
      const data = mergeBlockBytes(firstShard, blockAt(firstShard), changes);
      this.putBlock(firstShard, data, foldedLsn);
      changes.clear();
    };
    for (const [shardId, total] of totals) {
      assert.ok(blockOf(shardId) >= firstShard, 'block writes in shard order');
      if (blockOf(shardId) !== firstShard) {
        flush();
        firstShard = blockOf(shardId);
      }
      changes.set(shardId, total);
    }
    flush();
  }

  /** Stores a block's merged bytes; a block left with no shard goes. Inside the caller's transaction. */
  private putBlock(firstShard: number, data: Buffer, foldedLsn: bigint, crc: number = blockChecksum(firstShard, data)): void {
    if (data.length === 0) this.log.statements.deleteBlock.run(firstShard);
    else this.log.statements.upsertBlock.run(firstShard, foldedLsn, data, crc);
  }

  /** True when the log changed under the round since it began: its reads no longer follow the checkpoint. */
  private isStale(round: FoldRound): boolean {
    return round.generation !== this.generation || round.fromLsn !== this.lsn;
  }

  /** The scrubber's read of checkpoint parts after (afterShardId, afterPart), in that order; damage throws, as scrubEntries. */
  scrubParts(afterShardId: number, afterPart: string, limit: number): { count: number; lastShardId: number; lastPart: string } {
    const rows = rowsOf<[number, string, number], [bigint, string, Buffer, bigint | null]>(
      this.log.db,
      `${checkpointPartsSql} WHERE (shard_id, part) > (?, ?) ORDER BY shard_id, part LIMIT ?`,
    ).all(afterShardId, afterPart, limit);
    for (const [shardId, part, data, crc] of rows) checkedPart(shardId, part, data, crc);
    const last = rows.at(-1);
    return { count: rows.length, lastShardId: last === undefined ? afterShardId : Number(last[0]), lastPart: last?.[1] ?? afterPart };
  }

  /** The scrubber's read of checkpoint blocks after afterFirstShard (checkBlocksAfter); damage throws, as scrubEntries. */
  scrubBlocks(afterFirstShard: number, blocksMax: number): { count: number; lastFirstShard: number } {
    return checkBlocksAfter(this.log.db, afterFirstShard, blocksMax);
  }

  /**
   * One chunk of a snapshot install: its shard totals merged into their
   * blocks and its parts appended (a part in several pieces is
   * concatenated). Inside the caller's transaction.
   */
  installPieces(chunk: SnapshotChunk): void {
    const { appendPart, selectBlock } = this.log.statements;
    const totals = new Map<number, bigint>();
    for (const [shardId, total] of chunk.shards) {
      assert.ok(
        Number.isSafeInteger(shardId) && shardId > 0 && total <= INT64_MAX && total >= INT64_MIN,
        `snapshot shard ${shardId} is invalid`,
      );
      totals.set(shardId, total);
    }
    // A block may span chunks: each chunk merges into what the last left. Not folded by this log: lsn 0.
    const storedBlock = (firstShard: number): Buffer => {
      const row = selectBlock.get(firstShard);
      return row === undefined ? noBlock : checkedBlock(firstShard, row[0], row[1]);
    };
    this.writeBlocks(new Map([...totals].sort(([a], [b]) => a - b)), storedBlock, 0n);
    for (const piece of chunk.parts)
      appendPart.run(piece.shardId, piece.part, piece.data, partChecksum(piece.shardId, piece.part, piece.data));
  }
}
