// The node's write-ahead log in SQLite and the checkpoint it folds into. An
// entry is one accepted change to one shard (EntryKind: an increment, keyed or
// not, a key fence, a member flip, raised sketch registers, window settings),
// a log row, or one of a commit record's packed plain increments
// (commit-records.ts), fsync'd before it is acknowledged and tagged with its
// primary's epoch. It never holds
// an entry that was not accepted, and a log that fails its checks is never served
// (log-check.ts sets it aside at start; onDamage stops a running node).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { INT64_MAX, INT64_MIN, storageError } from '../../wire/index.ts';
import { replayBatchRows, preparePrivateDir, preparePrivateFile } from '../../common/index.ts';
import { createOrUpgradeSchema } from './log-schema.ts';
import { isDamagedLog } from './log-check.ts';
import { EntryKind, ShardLogError, checkEntry, encodeDroppedAt, extraColumns, type LogEntry, type StoredEntry } from './log-entry.ts';
import { MergedReader, decodeRecord, encodeRecord, isPlainEntry, recordEntriesMin } from './commit-records.ts';
import { CommitWireWriter, type CommitWire } from './commit-wire.ts';

/** The log's file in a node's data directory. */
export function logFileOf(dataDir: string): string {
  return path.join(dataDir, 'node.sqlite');
}

const nodeIdMetaKey = 'node_id';
/** Present while a snapshot install is under way (holds its id). */
const installMetaKey = 'install';

import { LogView } from './log-view.ts';
import type { CheckpointFolder, CheckpointState, KeyRecord, SnapshotChunk } from './log-types.ts';
import { FoldRound } from './fold-round.ts';
import { checkpointPartsSql, prepareLogStatements, rowsOf, rowsOfShards } from './log-statements.ts';
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
import { blockChecksum, checkedPart, partChecksum, recordChecksum, registerChecksumFunctions, rowChecksum } from './checksums.ts';

export { LogView } from './log-view.ts';

const noBytes = Buffer.alloc(0);
/** A block with no row yet: no shard in it has a total. */
const noBlock = Buffer.alloc(0);
export type { CheckpointFolder, CheckpointState, KeyRecord, SnapshotChunk } from './log-types.ts';

export class ShardLog {
  private readonly db: Database.Database;
  private readonly statements: ReturnType<typeof prepareLogStatements>;
  private readonly reader: MergedReader;
  private readonly appendTransaction: (entries: readonly LogEntry[], firstLsn: bigint, epoch: bigint, atMs: number) => void;
  private nextLsn: bigint;
  private lastEntryEpoch: bigint;
  /** Where append writes what it stores in the replication wire's layout (takeCommitWire). */
  private readonly wire = new CommitWireWriter();
  private lastCommit: Buffer = noBytes;
  private foldedLsn: bigint;
  /** Changes whenever the checkpoint moves or entries it has not folded go: a fold round begun before is stale. */
  private generation = 0;

  private constructor(
    db: Database.Database,
    readonly file: string,
    private readonly folder: CheckpointFolder | undefined,
    private readonly owner: string,
  ) {
    this.db = db;
    this.statements = prepareLogStatements(db);
    this.reader = new MergedReader(db);
    this.appendTransaction = db.transaction((entries: readonly LogEntry[], firstLsn: bigint, epoch: bigint, atMs: number) =>
      this.writeEntries(
        entries,
        firstLsn,
        () => true,
        () => [epoch, atMs],
        this.wire,
      ),
    );
    this.nextLsn = 1n;
    this.lastEntryEpoch = 0n;
    // A snapshot install cut short leaves a log that is neither the old one
    // nor the primary's: start again from empty (the install restarts).
    this.abandonedInstall = this.getMeta(installMetaKey) !== undefined;
    if (this.abandonedInstall) this.emptyAll(undefined);
    this.foldedLsn = BigInt(this.getMeta('checkpoint_lsn') ?? '0');
    this.foldedEpoch = BigInt(this.getMeta('checkpoint_epoch') ?? '0');
    // This node writes a block in the transaction that moves checkpoint_lsn past it: one ahead is not its file.
    const blocksFoldedLsn = this.statements.selectBlocksFoldedLsnMax.get() ?? 0n;
    if (blocksFoldedLsn > this.foldedLsn)
      throw new ShardLogError(
        `log ${file} has checkpoint blocks folded to lsn ${blocksFoldedLsn}, past its checkpoint at ${this.foldedLsn}`,
      );
    let nodeId = this.getMeta(nodeIdMetaKey);
    if (nodeId === undefined) this.setMeta(nodeIdMetaKey, (nodeId = randomUUID()));
    this.nodeId = nodeId;
    this.refreshTail();
  }

  /**
   * This log's identity, made when the data directory was first initialised.
   * A node that lost its disk comes back with another: the router knows a
   * node by it, never by its address alone.
   */
  readonly nodeId: string;
  /** True when the open found a snapshot install cut short and emptied the log. */
  readonly abandonedInstall: boolean;
  /**
   * Told of a read or write that found the log damaged (SQLITE_CORRUPT, a
   * row or gap it could not have written) before the error is thrown: the
   * node stops rather than go on over a log it can no longer trust.
   */
  onDamage: ((error: unknown) => void) | undefined;
  /** Mirrors meta: asked on every read and status, so kept in memory rather than queried. */
  private installUnderWay = false;
  /** Epoch of the entry at foldedLsn (meta checkpoint_epoch). */
  private foldedEpoch = 0n;

  /** Deletes every entry and the checkpoint, in one transaction; marks an install under way when given its id. */
  private emptyAll(installId: string | undefined): void {
    this.transact(() => {
      this.db.exec('DELETE FROM log; DELETE FROM records; DELETE FROM checkpoint_blocks; DELETE FROM checkpoint_parts;');
      this.setMeta('checkpoint_lsn', '0');
      this.setMeta('checkpoint_epoch', '0');
      if (installId === undefined) this.statements.deleteMeta.run(installMetaKey);
      else this.setMeta(installMetaKey, installId);
    });
    this.installUnderWay = installId !== undefined;
    this.generation++;
    this.foldedLsn = 0n;
    this.foldedEpoch = 0n;
    this.refreshTail();
  }

  /** True while a snapshot install is under way: the log is incomplete. */
  get installing(): boolean {
    return this.installUnderWay;
  }

  /** Follower side, chunk 0 of an install: the log is emptied, to be replaced by the snapshot. */
  beginInstall(installId: string): void {
    this.emptyAll(installId);
  }

  /** Follower side: one chunk of the snapshot, in one transaction. Parts in several pieces are concatenated. */
  installChunk(chunk: SnapshotChunk): void {
    assert.ok(this.installing, 'install chunk without an install under way');
    const { appendPart, selectBlock } = this.statements;
    this.transact(() => {
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
      for (const entry of chunk.keys) {
        checkEntry(entry);
        assert.ok(entry.idempotencyKey.length > 0, 'a snapshot key entry carries a key');
        this.insertRow(entry.lsn, entry.epoch, entry, entry.atMs);
      }
    });
  }

  /** Follower side, the last chunk: the snapshot becomes the checkpoint, at lsn written by epoch. */
  finishInstall(lsn: bigint, epoch: bigint): void {
    assert.ok(this.installing, 'install finished without an install under way');
    this.transact(() => {
      const newestKey = this.statements.selectLast.get();
      assert.ok(newestKey === undefined || newestKey[0] <= lsn, 'a snapshot key lies past the snapshot');
      this.setMeta('checkpoint_lsn', lsn.toString());
      this.setMeta('checkpoint_epoch', epoch.toString());
      this.statements.deleteMeta.run(installMetaKey);
    });
    this.installUnderWay = false;
    this.generation++;
    this.foldedLsn = lsn;
    this.foldedEpoch = epoch;
    this.refreshTail();
  }

  /**
   * The epoch of the entry at lsn, where this log can still tell: 0 at the
   * start, the checkpoint's epoch at the checkpoint, a row's own epoch;
   * undefined past the end or inside the folded part (rows gone).
   */
  entryEpoch(lsn: bigint): bigint | undefined {
    if (lsn === 0n) return 0n;
    if (lsn > this.lastLsn) return undefined;
    if (lsn === this.foldedLsn) return this.foldedEpoch;
    return this.epochAt(lsn);
  }

  /**
   * A consistent read of the log as it is now (a read transaction on its own
   * connection): later commits and checkpoint folds do not change what it
   * sees, however long it is held. Close it when done.
   */
  openView(): LogView {
    return new LogView(this.file);
  }

  private insertRow(lsn: bigint, epoch: bigint, entry: LogEntry, atMs: number, wire?: CommitWireWriter): void {
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
  private writeEntries(
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

  private refreshTail(): void {
    const last = this.reader.tail();
    // Every entry may have been folded into the checkpoint: the tail is then the checkpoint's.
    if (last === undefined || last.lsn < this.foldedLsn) {
      this.nextLsn = this.foldedLsn + 1n;
      this.lastEntryEpoch = this.foldedEpoch;
    } else {
      this.nextLsn = last.lsn + 1n;
      this.lastEntryEpoch = last.epoch;
    }
  }

  /** Every entry up to this lsn is folded into the checkpoint's shard totals. */
  get checkpointLsn(): bigint {
    return this.foldedLsn;
  }

  /** The checkpoint's shard totals (the fold of every entry up to checkpointLsn). */
  checkpointTotals(shardIds?: readonly number[]): Map<number, bigint> {
    return this.checkedRead(() => checkpointTotalsOf(this.db, shardIds));
  }

  /**
   * Visits every shard total of the checkpoint, one row at a time: a rebuild
   * streams millions of them into memory without first holding them all in a
   * Map (garbage several times the size of the totals, the node's peak memory).
   */
  forEachCheckpointTotal(visit: (shardId: number, total: bigint) => void): void {
    this.checkedRead(() => {
      for (const [firstShard, data, crc] of this.statements.selectBlocks.iterate()) {
        const block = decodeBlock(Number(firstShard), checkedBlock(Number(firstShard), data, crc));
        for (let index = 0; index < block.ids.length; index++) visit(block.ids[index]!, block.totals[index]!);
      }
    });
  }

  /** The checkpoint's parts (every kind's state but totals) for some shards (default: all). */
  checkpointParts(shardIds?: readonly number[]): CheckpointState['parts'] {
    return this.checkedRead(() => {
      const rows = rowsOfShards(this.db, checkpointPartsSql, shardIds, this.statements.selectParts);
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
  checkpointState(shardIds?: readonly number[]): CheckpointState {
    return { totals: this.checkpointTotals(shardIds), parts: this.checkpointParts(shardIds) };
  }

  /**
   * Folds entries after the checkpoint, up to uptoLsn and at most sliceRows
   * of them, into the checkpoint (totals here, every other kind's state
   * through the folder), then deletes them — except keyed rows younger than
   * keepKeysSinceMs, which idempotency still needs. One transaction: a crash
   * leaves either the old checkpoint with its rows or the new one without
   * them. Returns the rows folded. A round of one slice (beginFold).
   */
  // eslint-disable-next-line no-restricted-properties -- tests' default: the node passes its log clock (steadyWallClock)
  foldSlice(uptoLsn: bigint, sliceRows: number, keepKeysSinceMs: number, nowMs: number = Date.now()): number {
    const round = this.beginFold();
    this.foldRead(round, uptoLsn, sliceRows, nowMs);
    return this.foldCommit(round, keepKeysSinceMs);
  }

  /**
   * Starts a checkpoint round: foldRead gathers entries into it a slice at a
   * time (the event loop may run between), foldCommit writes the checkpoint
   * once. The checkpoint ends exactly as if each slice had been folded in its
   * own transaction; only the writes are fewer.
   */
  beginFold(): FoldRound {
    return new FoldRound(this.foldedLsn, this.generation);
  }

  /**
   * Reads the next entries of the round, up to uptoLsn and at most sliceRows
   * of them, and applies them to the round's state in memory (totals summed
   * here, every other kind through the folder). Writes nothing. Returns the
   * rows read (0 at uptoLsn, or when the round is stale).
   */
  // eslint-disable-next-line no-restricted-properties -- tests' default: the node passes its log clock (steadyWallClock)
  foldRead(round: FoldRound, uptoLsn: bigint, sliceRows: number, nowMs: number = Date.now()): number {
    assert.ok(round.blockChanges === undefined, 'a fold round read after its commit was prepared');
    if (this.isStale(round) || uptoLsn <= round.lastLsn) return 0;
    const entries = this.entriesAfter(round.lastLsn, uptoLsn, sliceRows);
    if (entries.length === 0) return 0;
    const last = entries[entries.length - 1]!;
    const touched = [...new Set(entries.map((entry) => entry.shardId))];
    // A shard's checkpoint state is read once per round, the first time it is touched.
    const unseen = touched.filter((shardId) => !round.touched.has(shardId));
    if (unseen.length > 0) {
      // Totals from the round's indexed blocks, each block read and scanned once per round (its commit merges into its bytes).
      const unread = [...new Set(unseen.map(blockOf))].filter((firstShard) => !round.blocks.has(firstShard));
      this.checkedRead(() => {
        const stored = new Map(blockRowsOf(this.db, unread));
        for (const firstShard of unread) round.blocks.set(firstShard, indexBlock(firstShard, stored.get(firstShard) ?? noBlock));
      });
      const beforeParts = this.checkpointParts(unseen);
      for (const shardId of unseen) {
        round.touched.add(shardId);
        // Only the unseen shards' totals are decoded; a block's others are skipped.
        const total = this.checkedRead(() => totalInBlock(round.blocks.get(blockOf(shardId))!, shardId));
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
    if (withParts && this.folder === undefined)
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
      const after = this.folder!.fold(state, entries, nowMs);
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
    round.rows += entries.length;
    round.lastLsn = last.lsn;
    round.lastEpoch = last.epoch;
    return entries.length;
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
    const { upsertPart, deletePart, deleteFolded, deleteShardKeys } = this.statements;
    const changes = this.blockChangesOf(round);
    this.transact(() => {
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
      this.statements.deleteFoldedRecords.run(round.lastLsn, round.lastLsn);
      this.setMeta('checkpoint_lsn', round.lastLsn.toString());
      this.setMeta('checkpoint_epoch', round.lastEpoch.toString());
    });
    this.foldedLsn = round.lastLsn;
    this.foldedEpoch = round.lastEpoch;
    this.generation++;
    return round.rows;
  }

  /**
   * Writes changed totals (ascending shard ids; undefined: no total) into
   * their blocks, each block once, merged into its state from `blockAt`;
   * a block left with no shard goes. Inside the caller's transaction.
   */
  private writeBlocks(totals: ReadonlyMap<number, bigint | undefined>, blockAt: (firstShard: number) => Buffer, foldedLsn: bigint): void {
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
    if (data.length === 0) this.statements.deleteBlock.run(firstShard);
    else this.statements.upsertBlock.run(firstShard, foldedLsn, data, crc);
  }

  /** True when the log changed under the round since it began: its reads no longer follow the checkpoint. */
  private isStale(round: FoldRound): boolean {
    return round.generation !== this.generation || round.fromLsn !== this.foldedLsn;
  }

  /**
   * Deletes checkpointed tombstones of drops committed before beforeMs, at
   * most `limit`; memory forgets them on its own schedule (a tombstone is
   * only ever consulted by the primary, and only inside its retention).
   */
  pruneTombstones(beforeMs: number, limit: number): number {
    return this.guarded(() => this.statements.deleteTombstones.run(encodeDroppedAt(Math.max(0, beforeMs)), limit).changes);
  }

  /** Deletes folded keyed rows older than the dedup window, oldest first, at most `limit`. */
  pruneFoldedKeys(keepKeysSinceMs: number, limit: number): number {
    return this.guarded(() => this.statements.deleteFoldedKeys.run(this.foldedLsn, limit, keepKeysSinceMs).changes);
  }

  /**
   * The newest row of `key` at `shardId` committed at or after sinceMs, or
   * undefined: the key's state within the window, read from disk. Rows are
   * kept for the window even after the checkpoint folds them.
   */
  findKey(shardId: number, key: Buffer, sinceMs: number): KeyRecord | undefined {
    return this.checkedRead(() => {
      const row = this.statements.selectKey.get(shardId, key, sinceMs);
      if (row === undefined) return undefined;
      const [lsn, atMs, fenceShardCount] = row;
      // The paired check: a keyed row read back is what append could have written.
      if (
        lsn <= 0n ||
        atMs < BigInt(sinceMs) ||
        atMs > BigInt(Number.MAX_SAFE_INTEGER) ||
        (fenceShardCount ?? 0n) < 0n ||
        (fenceShardCount ?? 0n) > BigInt(Number.MAX_SAFE_INTEGER)
      ) {
        throw new ShardLogError(`log entry ${lsn} is invalid (shard ${shardId}): bad key row (at ${atMs}, fence ${fenceShardCount})`);
      }
      return { lsn, atMs: Number(atMs), fenceShardCount: Number(fenceShardCount ?? 0n) };
    });
  }

  /**
   * The newest keyed rows written since sinceMs, at most rowsMax of them,
   * folded or not, in lsn order: what the dedup index's memory is rebuilt
   * from. Returns the commit time of the newest row in the window it left
   * out (undefined when it left none out): keys up to then are on disk only.
   * Reads about 2 x rowsMax rows whatever the window holds.
   */
  replayKeys(
    sinceMs: number,
    rowsMax: number,
    onKey: (lsn: bigint, shardId: number, key: Buffer, atMs: number, fenceShardCount: number) => void,
  ): number | undefined {
    assert.ok(Number.isSafeInteger(rowsMax) && rowsMax >= 0, 'rowsMax must be a count');
    const leftOut = this.statements.selectKeyLeftOut.get(sinceMs, rowsMax);
    const rows = this.statements.selectKeysAfter.iterate(leftOut?.[0] ?? 0n, sinceMs);
    for (const [lsn, shardId, key, atMs, fenceShardCount] of rows)
      onKey(lsn, Number(shardId), key, Number(atMs), Number(fenceShardCount ?? 0n));
    if (leftOut === undefined) return undefined;
    // Commit times follow lsns only as far as the primaries' clocks agree (a
    // failover between two machines): the newest of all rows left out, not
    // the time of the last one, says until when the disk alone holds keys.
    const newestAtMs = this.statements.selectKeysNewestAtMs.get(sinceMs, leftOut[0]);
    return Number(newestAtMs ?? leftOut[1]);
  }

  /**
   * Opens (or creates) the log in dataDir. Throws ShardLogError when it
   * cannot be trusted. owner names the node in errors that reach clients.
   */
  static open(dataDir: string, folder?: CheckpointFolder, owner = 'node'): ShardLog {
    preparePrivateDir(dataDir);
    const file = logFileOf(dataDir);
    preparePrivateFile(file);
    let db: Database.Database | undefined;
    try {
      db = new Database(file);
      // WAL + FULL: every commit is fsync'd before better-sqlite3 returns.
      // better-sqlite3 leaves WAL at synchronous=NORMAL, which can lose the
      // last commits on power loss; we set what we mean.
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = FULL');
      registerChecksumFunctions(db);
      createOrUpgradeSchema(db, file);
      return new ShardLog(db, file, folder, owner);
    } catch (error) {
      db?.close();
      if (error instanceof ShardLogError) throw error;
      throw new ShardLogError(`cannot open log ${file}: ${(error as Error).message}`);
    }
  }

  /** Sequence number of the last committed entry (0 for an empty log). */
  get lastLsn(): bigint {
    return this.nextLsn - 1n;
  }

  /** Epoch of the last committed entry (0 for an empty log). */
  get lastEpoch(): bigint {
    return this.lastEntryEpoch;
  }

  /**
   * The time the log's last entry was stamped with (undefined for an empty
   * log): the floor of the node's steady clock (steadyWallClock), so a
   * restart on a wall clock that went back does not bring keys back to life
   * for longer, nor stamp entries older than those before them.
   */
  lastAtMs(): number | undefined {
    const last = this.checkedRead(() => this.reader.tail());
    return last === undefined ? undefined : Number(last.atMs);
  }

  /** Commits entries written under `epoch` in one transaction (one fsync). Returns the last lsn. */
  append(entries: readonly LogEntry[], epoch: bigint, atMs: number): bigint {
    assert.ok(entries.length > 0, 'append of no entries');
    for (const entry of entries) checkEntry(entry);
    const firstLsn = this.nextLsn;
    // A failure rolls the transaction back, and the lsn stays where it was.
    try {
      this.guarded(() => this.appendTransaction(entries, firstLsn, epoch, atMs));
    } finally {
      this.lastCommit = this.wire.finish();
    }
    this.nextLsn = firstLsn + BigInt(entries.length);
    this.lastEntryEpoch = epoch;
    return this.lastLsn;
  }

  /**
   * The last append's records and rows as stored, in the replication wire's
   * layout (commit-wire.ts), handed over once: the primary ships them as
   * they are instead of reading them back. Empty after a failed append.
   */
  takeCommitWire(): Buffer {
    const bytes = this.lastCommit;
    this.lastCommit = noBytes;
    return bytes;
  }

  /**
   * Follower side: writes a primary's checked records and rows (decodeCommitWire)
   * exactly as they came, in one transaction (one fsync). They must continue this log.
   */
  appendWire(wire: CommitWire): bigint {
    assert.ok(wire.entryCount > 0, 'append of no entries');
    const first = wire.pieces[0]!;
    assert.equal(first.record?.[0] ?? first.row![0], this.nextLsn, 'replicated entries must continue the log');
    const { insertRecord, insertRaw } = this.statements;
    this.transact(() => {
      for (const piece of wire.pieces) {
        if (piece.record !== undefined) {
          const [firstLsn, lastLsn, epoch, atMs, data, crc] = piece.record;
          insertRecord.run(firstLsn, lastLsn, epoch, Number(atMs), data, Number(crc));
        } else {
          insertRaw.run(...piece.row);
        }
      }
    });
    this.nextLsn = wire.lastLsn + 1n;
    this.lastEntryEpoch = wire.lastEpoch;
    return this.lastLsn;
  }

  /**
   * Runs `write` (appends, truncations) in one transaction: one commit and
   * one fsync for all of it; each append inside is a savepoint of its own,
   * so one that fails leaves the others. When the commit itself fails,
   * nothing of it is on disk and the tail is read back from the file.
   */
  batch<T>(write: () => T): T {
    try {
      return this.transact(write);
    } catch (error) {
      this.generation++;
      this.refreshTail();
      throw error;
    }
  }

  /**
   * Primary side, a follower behind what memory holds: the stored records
   * and rows from fromLsn on, checked, in the replication wire's layout, up
   * to about entriesMax entries or bytesMax bytes. Throws ShardLogError when
   * fromLsn is folded into the checkpoint, or on damage.
   */
  readWireFrom(
    fromLsn: bigint,
    entriesMax: number,
    bytesMax: number,
  ): { bytes: Buffer; entryCount: number; lastLsn: bigint; lastEpoch: bigint } {
    if (fromLsn <= this.foldedLsn)
      throw new ShardLogError(`entries from lsn ${fromLsn} are folded into the checkpoint at ${this.foldedLsn}`);
    return this.checkedRead(() => {
      try {
        const read = this.reader.wireAfter(fromLsn - 1n, entriesMax, bytesMax, this.wire);
        return { ...read, bytes: this.wire.finish() };
      } catch (error) {
        this.wire.finish();
        throw error;
      }
    });
  }

  /** Follower side: commits a primary's entries, which must continue this log exactly. */
  appendReplicated(entries: readonly StoredEntry[]): bigint {
    assert.ok(entries.length > 0, 'append of no entries');
    let expectedLsn = this.nextLsn;
    for (const entry of entries) {
      checkEntry(entry);
      assert.equal(entry.lsn, expectedLsn, 'replicated entries must continue the log');
      expectedLsn++;
    }
    // A record holds one epoch and one commit time: a run breaks where either changes.
    this.transact(() =>
      this.writeEntries(
        entries,
        entries[0]!.lsn,
        (previous, index) => entries[previous]!.epoch === entries[index]!.epoch && entries[previous]!.atMs === entries[index]!.atMs,
        (entry) => [(entry as StoredEntry).epoch, (entry as StoredEntry).atMs],
      ),
    );
    this.nextLsn = entries[entries.length - 1]!.lsn + 1n;
    this.lastEntryEpoch = entries[entries.length - 1]!.epoch;
    return this.lastLsn;
  }

  /**
   * The scrubber's read: up to `limit` entries after afterLsn (keyed rows the
   * checkpoint keeps included), each checked as every read checks it. Damage
   * throws without telling onDamage: the scrubber counts it, then tells it.
   * How many were read and the last one's lsn (count 0 past the end).
   */
  scrubEntries(afterLsn: bigint, limit: number): { count: number; lastLsn: bigint } {
    const entries = this.reader.entriesAfter(afterLsn, INT64_MAX, limit);
    return { count: entries.length, lastLsn: entries.length === 0 ? afterLsn : entries[entries.length - 1]!.lsn };
  }

  /** The scrubber's read of checkpoint parts after (afterShardId, afterPart), in that order; damage throws, as scrubEntries. */
  scrubParts(afterShardId: number, afterPart: string, limit: number): { count: number; lastShardId: number; lastPart: string } {
    const rows = rowsOf<[number, string, number], [bigint, string, Buffer, bigint | null]>(
      this.db,
      `${checkpointPartsSql} WHERE (shard_id, part) > (?, ?) ORDER BY shard_id, part LIMIT ?`,
    ).all(afterShardId, afterPart, limit);
    for (const [shardId, part, data, crc] of rows) checkedPart(shardId, part, data, crc);
    const last = rows.at(-1);
    return { count: rows.length, lastShardId: last === undefined ? afterShardId : Number(last[0]), lastPart: last?.[1] ?? afterPart };
  }

  /** The scrubber's read of checkpoint blocks after afterFirstShard (checkBlocksAfter); damage throws, as scrubEntries. */
  scrubBlocks(afterFirstShard: number, blocksMax: number): { count: number; lastFirstShard: number } {
    return checkBlocksAfter(this.db, afterFirstShard, blocksMax);
  }

  /**
   * Up to `limit` entries from lsn `fromLsn` on, in order. Throws when fromLsn
   * is already folded into the checkpoint (its rows are gone): a peer that far
   * behind needs the checkpoint, not the log.
   */
  readFrom(fromLsn: bigint, limit: number): StoredEntry[] {
    if (fromLsn <= this.foldedLsn)
      throw new ShardLogError(`entries from lsn ${fromLsn} are folded into the checkpoint at ${this.foldedLsn}`);
    return this.checkedRead(() => this.reader.entriesAfter(fromLsn - 1n, INT64_MAX, limit));
  }

  /** Epoch of the entry at lsn, or undefined when there is none. */
  epochAt(lsn: bigint): bigint | undefined {
    return this.statements.selectEpoch.get(lsn) ?? this.reader.recordAt(lsn)?.[2];
  }

  /** The highest epoch among entries after lsn (0 when there are none). */
  maxEpochAfter(lsn: bigint): bigint {
    const ofRows = this.statements.selectMaxEpochAfter.get(lsn) ?? 0n;
    const ofRecords = this.statements.selectRecordsMaxEpochAfter.get(lsn + 1n, lsn) ?? 0n;
    return ofRows > ofRecords ? ofRows : ofRecords;
  }

  /** Drops every entry after lsn: a tail that was never acknowledged (a deposed primary's). */
  truncateAfter(lsn: bigint): number {
    if (lsn < this.foldedLsn)
      throw new ShardLogError(`cannot drop entries after lsn ${lsn}: the checkpoint already covers up to ${this.foldedLsn}`);
    const dropped = this.transact(() => {
      const { deleteAfter, selectRecordEntriesAfter, deleteRecordsAfter, updateRecord } = this.statements;
      let entriesDropped = BigInt(deleteAfter.run(lsn).changes) + selectRecordEntriesAfter.get(lsn)!;
      deleteRecordsAfter.run(lsn);
      // A record straddling lsn keeps its prefix (never empty: it starts at or before lsn), unless
      // the checkpoint holds all of that (lsn is the checkpoint's): then it goes, as a fold would take it.
      const straddling = this.reader.recordAt(lsn);
      if (straddling !== undefined && straddling[1] > lsn) {
        if (lsn === this.foldedLsn) {
          this.statements.deleteRecordsAfter.run(straddling[0] - 1n);
        } else {
          const kept = decodeRecord(straddling).filter((entry) => entry.lsn <= lsn);
          const data = encodeRecord(kept, 0, kept.length);
          updateRecord.run(lsn, data, recordChecksum(straddling[0], lsn, straddling[2], straddling[3], data), straddling[0]);
        }
        entriesDropped += straddling[1] - lsn;
      }
      return Number(entriesDropped);
    });
    if (dropped > 0) this.generation++;
    this.refreshTail();
    return dropped;
  }

  /**
   * Up to rowsMax entries after afterLsn up to uptoLsn, checked to follow
   * afterLsn with no gap: the one gap check of replay and fold, so a log
   * with a hole never yields (or folds into) a silently smaller total.
   */
  private entriesAfter(afterLsn: bigint, uptoLsn: bigint, rowsMax: number): StoredEntry[] {
    let expectedLsn = afterLsn + 1n;
    return this.checkedRead(() =>
      this.reader.entriesAfter(afterLsn, uptoLsn, rowsMax).map((entry) => {
        if (entry.lsn !== expectedLsn) throw new ShardLogError(`log has a gap: expected lsn ${expectedLsn}, found ${entry.lsn}`);
        expectedLsn++;
        return entry;
      }),
    );
  }

  /**
   * Replays the entries after the checkpoint in lsn order up to uptoLsn
   * (default: all); with checkpointTotals() that is the whole log. Throws
   * ShardLogError on a gap or a bad row: a log with a hole must not yield a
   * silently smaller total.
   */
  replay(onEntry: (entry: StoredEntry) => void, uptoLsn: bigint = this.lastLsn): bigint {
    const endLsn = uptoLsn < this.lastLsn ? uptoLsn : this.lastLsn;
    // Entries up to the checkpoint are in its state (checkpointState); the tail follows it.
    let expectedLsn = this.foldedLsn + 1n;
    if (endLsn < this.foldedLsn)
      throw new ShardLogError(`cannot replay up to lsn ${endLsn}: the checkpoint already covers up to ${this.foldedLsn}`);
    // Bounded: each step advances by replayBatchRows until the end.
    const stepsMax = Number(endLsn / BigInt(replayBatchRows)) + 2;
    for (let step = 0; step < stepsMax && expectedLsn <= endLsn; step++) {
      const entries = this.entriesAfter(expectedLsn - 1n, endLsn, replayBatchRows);
      for (const entry of entries) onEntry(entry);
      expectedLsn += BigInt(entries.length);
      if (entries.length < replayBatchRows) break;
    }
    if (expectedLsn - 1n !== endLsn) {
      throw new ShardLogError(`log replay ended at lsn ${expectedLsn - 1n}, but the log reaches ${endLsn}`);
    }
    return endLsn;
  }

  getMeta(key: string): string | undefined {
    return this.statements.selectMeta.get(key);
  }

  /** Durable before it returns (synchronous=FULL). */
  setMeta(key: string, value: string): void {
    this.guarded(() => this.statements.upsertMeta.run(key, value));
  }

  /**
   * Runs `write`, one statement or one transaction: a failure leaves the
   * file as it was, and a full or failing disk surfaces as
   * RESOURCE_EXHAUSTED or UNAVAILABLE naming this node (storageError).
   * Callers change what they hold in memory only after it returns.
   */
  private guarded<T>(write: () => T): T {
    try {
      return write();
    } catch (error) {
      if (isDamagedLog(error)) this.onDamage?.(error);
      throw storageError(error, this.owner);
    }
  }

  /** Runs `read`; a failure that says the log is damaged is told to onDamage first. */
  private checkedRead<T>(read: () => T): T {
    try {
      return read();
    } catch (error) {
      if (isDamagedLog(error)) this.onDamage?.(error);
      throw error;
    }
  }

  /** Runs `write` in one transaction (a savepoint inside an open one), guarded. */
  private transact<T>(write: () => T): T {
    return this.guarded(this.db.transaction(write));
  }

  /**
   * Caps the file at `pages` pages (SQLite's max_page_count, for this
   * connection): an append that needs more fails as on a full disk. Tests
   * provoke SQLITE_FULL with it. Returns the cap in force (never below the
   * file's current size).
   */
  setPageCountMax(pages: number): number {
    return this.db.pragma(`max_page_count = ${Math.floor(pages)}`, { simple: true }) as number;
  }

  sizeBytes(): number {
    return this.statements.selectSizeBytes.get()!;
  }

  /**
   * Bytes in the write-ahead file beside the log. It resets only when no
   * reader holds an older view: a long snapshot install lets it grow.
   */
  walSizeBytes(): number {
    try {
      return fs.statSync(`${this.file}-wal`).size;
    } catch {
      return 0;
    }
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}
