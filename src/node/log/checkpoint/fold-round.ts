// What one checkpoint round has gathered in memory: the log is read into it a
// slice at a time (the event loop free between slices), and the checkpoint is
// then written once, each touched shard once, in shard order. A spread
// workload touches most pages of the checkpoint table each round; written a
// slice per transaction, every slice rewrote them (hundreds of bytes per
// increment on a Zipf workload over 200,000 counters), written once per round
// they are rewritten once. ShardLog reads and commits a round; this is only
// its state.
import type { CheckpointState } from '../log-types.ts';
import type { IndexedBlock } from './checkpoint-blocks.ts';

export class FoldRound {
  /** Rows read into the round so far. */
  rows = 0;
  /** The last entry read (fromLsn while none is). */
  lastLsn: bigint;
  lastEpoch = 0n;
  /** Each touched shard's checkpoint state as on disk when the round first touched it. */
  readonly before: CheckpointState = { totals: new Map(), parts: new Map() };
  /** Each touched shard's state after the entries read: no total here means no total row. */
  readonly after: CheckpointState = { totals: new Map(), parts: new Map() };
  /** Each touched block of the checkpoint as stored when the round first read it (empty: no row), indexed: its commit merges into these bytes. */
  readonly blocks = new Map<number, IndexedBlock>();
  /**
   * Per changed block, in shard order: its shards' new totals (undefined: no
   * total). Made by the first foldPrepare, after the last read.
   */
  blockChanges: Map<number, Map<number, bigint | undefined>> | undefined;
  /** Changed blocks' bytes merged so far (foldPrepare), with their checksums; the commit merges the rest. */
  readonly merged = new Map<number, { data: Buffer; crc: number }>();
  /** Where foldPrepare goes on in blockChanges: each call takes the next blocks, not a walk past those merged. */
  mergeCursor: Iterator<[number, Map<number, bigint | undefined>]> | undefined;
  /** Every shard the round touched (the keys of before, totals and parts alike). */
  readonly touched = new Set<number>();
  /** Dropped shards, each with the last lsn of the slice that dropped it: their keyed rows up to it go at commit. */
  readonly droppedUpto = new Map<number, bigint>();

  constructor(
    /** The checkpoint's lsn when the round began: it folds the entries after it. */
    readonly fromLsn: bigint,
    /** The log's generation then: an empty, install or truncation since makes the round stale. */
    readonly generation: number,
  ) {
    this.lastLsn = fromLsn;
  }
}
