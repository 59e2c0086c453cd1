// The node's write-ahead log in SQLite and the checkpoint it folds into. An
// entry is one accepted change to one shard (EntryKind: an increment, keyed or
// not, a key fence, a member flip, raised sketch registers, window settings),
// a log row, or one of a commit record's packed plain increments
// (commit-records.ts), fsync'd before it is acknowledged and tagged with its
// primary's epoch. It never holds an entry that was not accepted, and a log
// that fails its checks is never served (log-check.ts sets it aside at
// start; onDamage stops a running node).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type Database from 'better-sqlite3';
import { INT64_MAX, storageError } from '../../wire/index.ts';
import { replayBatchRows } from '../../common/index.ts';
import { isDamagedLog } from './check/log-check.ts';
import { CheckpointStore } from './checkpoint/checkpoint-store.ts';
import type { FoldRound } from './checkpoint/fold-round.ts';
import { CommitWireWriter, type CommitWire } from './commit-wire.ts';
import { EntryWriter } from './entry-writer.ts';
import { openLogDatabase, walSizeBytesOf } from './log-file.ts';
import { KeyRows, type KeyVisitor } from './key-rows.ts';
import { prepareLogStatements } from './log-statements.ts';
import type { CheckpointFolder, CheckpointState, KeyRecord, SnapshotChunk } from './log-types.ts';
import { LogView } from './log-view.ts';
import { MergedReader } from './records/commit-records.ts';
import { ShardLogError, checkEntry, encodeDroppedAt, type LogEntry, type StoredEntry } from './records/log-entry.ts';

export { LogView } from './log-view.ts';
export { logFileOf } from './log-file.ts';
export type { CheckpointFolder, CheckpointState, KeyRecord, SnapshotChunk } from './log-types.ts';

const nodeIdMetaKey = 'node_id';
/** Present while a snapshot install is under way (holds its id). */
const installMetaKey = 'install';
const noBytes = Buffer.alloc(0);

export class ShardLog {
  private readonly db: Database.Database;
  private readonly statements: ReturnType<typeof prepareLogStatements>;
  private readonly reader: MergedReader;
  private readonly writer: EntryWriter;
  private readonly keys: KeyRows;
  private readonly appendTransaction: (entries: readonly LogEntry[], firstLsn: bigint, epoch: bigint, atMs: number) => void;
  private nextLsn: bigint;
  private lastEntryEpoch: bigint;
  /** Where append writes what it stores in the replication wire's layout (takeCommitWire). */
  private readonly wire = new CommitWireWriter();
  private lastCommit: Buffer = noBytes;
  /** The checkpoint this log folds into: its position, its blocks and parts, and the fold round. */
  private readonly checkpoint: CheckpointStore;

  private constructor(
    db: Database.Database,
    readonly file: string,
    folder: CheckpointFolder | undefined,
    private readonly owner: string,
  ) {
    this.db = db;
    this.statements = prepareLogStatements(db);
    this.reader = new MergedReader(db);
    this.writer = new EntryWriter(this.statements);
    this.keys = new KeyRows(this.statements, (read) => this.checkedRead(read));
    this.checkpoint = new CheckpointStore({
      db,
      statements: this.statements,
      folder,
      transact: (write) => this.transact(write),
      checkedRead: (read) => this.checkedRead(read),
      entriesAfter: (afterLsn, uptoLsn, rowsMax) => this.entriesAfter(afterLsn, uptoLsn, rowsMax),
      setMeta: (key, value) => this.setMeta(key, value),
    });
    this.appendTransaction = db.transaction((entries: readonly LogEntry[], firstLsn: bigint, epoch: bigint, atMs: number) =>
      this.writer.writeEntries(
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
    this.checkpoint.moveTo(BigInt(this.getMeta('checkpoint_lsn') ?? '0'), BigInt(this.getMeta('checkpoint_epoch') ?? '0'));
    // This node writes a block in the transaction that moves checkpoint_lsn past it: one ahead is not its file.
    const blocksFoldedLsn = this.statements.selectBlocksFoldedLsnMax.get() ?? 0n;
    if (blocksFoldedLsn > this.checkpoint.lsn)
      throw new ShardLogError(
        `log ${file} has checkpoint blocks folded to lsn ${blocksFoldedLsn}, past its checkpoint at ${this.checkpoint.lsn}`,
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
    this.checkpoint.moveTo(0n, 0n);
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
    this.transact(() => {
      this.checkpoint.installPieces(chunk);
      for (const entry of chunk.keys) {
        checkEntry(entry);
        assert.ok(entry.idempotencyKey.length > 0, 'a snapshot key entry carries a key');
        this.writer.insertRow(entry.lsn, entry.epoch, entry, entry.atMs);
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
    this.checkpoint.moveTo(lsn, epoch);
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
    if (lsn === this.checkpoint.lsn) return this.checkpoint.epoch;
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

  private refreshTail(): void {
    const last = this.reader.tail();
    // Every entry may have been folded into the checkpoint: the tail is then the checkpoint's.
    if (last === undefined || last.lsn < this.checkpoint.lsn) {
      this.nextLsn = this.checkpoint.lsn + 1n;
      this.lastEntryEpoch = this.checkpoint.epoch;
    } else {
      this.nextLsn = last.lsn + 1n;
      this.lastEntryEpoch = last.epoch;
    }
  }

  /** Every entry up to this lsn is folded into the checkpoint's shard totals. */
  get checkpointLsn(): bigint {
    return this.checkpoint.lsn;
  }

  /** The checkpoint's shard totals (the fold of every entry up to checkpointLsn). */
  checkpointTotals(shardIds?: readonly number[]): Map<number, bigint> {
    return this.checkpoint.totals(shardIds);
  }

  /** Visits every shard total of the checkpoint, one row at a time (CheckpointStore.forEachTotal). */
  forEachCheckpointTotal(visit: (shardId: number, total: bigint) => void): void {
    this.checkpoint.forEachTotal(visit);
  }

  /** The checkpoint's parts (every kind's state but totals) for some shards (default: all). */
  checkpointParts(shardIds?: readonly number[]): CheckpointState['parts'] {
    return this.checkpoint.parts(shardIds);
  }

  /** The checkpoint's state for some shards (default: all): totals and the other kinds' parts. */
  checkpointState(shardIds?: readonly number[]): CheckpointState {
    return this.checkpoint.state(shardIds);
  }

  /**
   * Folds at most sliceRows entries up to uptoLsn into the checkpoint and
   * deletes them (keyed rows younger than keepKeysSinceMs stay), in one
   * transaction: a round of one slice. Returns the rows folded.
   */
  // eslint-disable-next-line no-restricted-properties -- tests' default: the node passes its log clock (steadyWallClock)
  foldSlice(uptoLsn: bigint, sliceRows: number, keepKeysSinceMs: number, nowMs: number = Date.now()): number {
    const round = this.beginFold();
    this.foldRead(round, uptoLsn, sliceRows, nowMs);
    return this.foldCommit(round, keepKeysSinceMs);
  }

  /** Starts a checkpoint round (CheckpointStore.beginFold): read by foldRead a slice at a time, written once by foldCommit. */
  beginFold(): FoldRound {
    return this.checkpoint.beginFold();
  }

  /** Reads the round's next entries into its state in memory (CheckpointStore.foldRead); writes nothing. */
  // eslint-disable-next-line no-restricted-properties -- tests' default: the node passes its log clock (steadyWallClock)
  foldRead(round: FoldRound, uptoLsn: bigint, sliceRows: number, nowMs: number = Date.now()): number {
    return this.checkpoint.foldRead(round, uptoLsn, sliceRows, nowMs);
  }

  /** Merges at most blocksMax of the round's changed blocks in memory (CheckpointStore.foldPrepare); returns the blocks left. */
  foldPrepare(round: FoldRound, blocksMax: number): number {
    return this.checkpoint.foldPrepare(round, blocksMax);
  }

  /** Writes the round into the checkpoint in one transaction (CheckpointStore.foldCommit); returns the rows folded. */
  foldCommit(round: FoldRound, keepKeysSinceMs: number): number {
    return this.checkpoint.foldCommit(round, keepKeysSinceMs);
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
    return this.guarded(() => this.statements.deleteFoldedKeys.run(this.checkpoint.lsn, limit, keepKeysSinceMs).changes);
  }

  /** The newest row of `key` at `shardId` committed at or after sinceMs, or undefined (KeyRows.findKey): kept for the window even once folded. */
  findKey(shardId: number, key: Buffer, sinceMs: number): KeyRecord | undefined {
    return this.keys.findKey(shardId, key, sinceMs);
  }

  /** The newest keyed rows since sinceMs, at most rowsMax, in lsn order (KeyRows.replayKeys); returns when the disk alone holds keys. */
  replayKeys(sinceMs: number, rowsMax: number, onKey: KeyVisitor): number | undefined {
    return this.keys.replayKeys(sinceMs, rowsMax, onKey);
  }

  /**
   * Opens (or creates) the log in dataDir. Throws ShardLogError when it
   * cannot be trusted. owner names the node in errors that reach clients.
   */
  static open(dataDir: string, folder?: CheckpointFolder, owner = 'node'): ShardLog {
    const { db, file } = openLogDatabase(dataDir);
    try {
      return new ShardLog(db, file, folder, owner);
    } catch (error) {
      db.close();
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
      this.checkpoint.invalidateRounds();
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
    if (fromLsn <= this.checkpoint.lsn)
      throw new ShardLogError(`entries from lsn ${fromLsn} are folded into the checkpoint at ${this.checkpoint.lsn}`);
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
      this.writer.writeEntries(
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
    return this.checkpoint.scrubParts(afterShardId, afterPart, limit);
  }

  /** The scrubber's read of checkpoint blocks after afterFirstShard (checkBlocksAfter); damage throws, as scrubEntries. */
  scrubBlocks(afterFirstShard: number, blocksMax: number): { count: number; lastFirstShard: number } {
    return this.checkpoint.scrubBlocks(afterFirstShard, blocksMax);
  }

  /**
   * Up to `limit` entries from lsn `fromLsn` on, in order. Throws when fromLsn
   * is already folded into the checkpoint (its rows are gone): a peer that far
   * behind needs the checkpoint, not the log.
   */
  readFrom(fromLsn: bigint, limit: number): StoredEntry[] {
    if (fromLsn <= this.checkpoint.lsn)
      throw new ShardLogError(`entries from lsn ${fromLsn} are folded into the checkpoint at ${this.checkpoint.lsn}`);
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
    if (lsn < this.checkpoint.lsn)
      throw new ShardLogError(`cannot drop entries after lsn ${lsn}: the checkpoint already covers up to ${this.checkpoint.lsn}`);
    const dropped = this.transact(() => this.writer.deleteAfter(lsn, this.reader.recordAt(lsn), lsn === this.checkpoint.lsn));
    if (dropped > 0) this.checkpoint.invalidateRounds();
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
    let expectedLsn = this.checkpoint.lsn + 1n;
    if (endLsn < this.checkpoint.lsn)
      throw new ShardLogError(`cannot replay up to lsn ${endLsn}: the checkpoint already covers up to ${this.checkpoint.lsn}`);
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

  /** Bytes in the write-ahead file beside the log (walSizeBytesOf). */
  walSizeBytes(): number {
    return walSizeBytesOf(this.file);
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}
