// Keeps the log bounded: every intervalMs, folds committed entries into the
// checkpoint's per-shard totals and deletes them (keeping keyed rows the
// dedup window still needs). It reads the log a slice at a time with the
// event loop free between slices, sums in memory, and writes the checkpoint
// once per round (at most roundRowsMax rows): each touched shard's row once,
// where a transaction per slice rewrote the same pages of a spread
// workload's checkpoint again and again. Recovery is then
// checkpoint + tail. A primary in sync folds only what its follower has
// confirmed; out of sync it keeps the last retainEntries for a follower that
// is briefly away (one further behind is refilled by snapshot install), and
// never folds past a snapshot being installed. A follower folds only what it
// knows matches its current primary (never a deposed primary's tail).
import { IntervalTask, checkpointMergeBlocksMax, steadyWallClock, type Logger } from '../common/index.ts';
import type { FoldRound, ShardLog } from './log/index.ts';
import type { NodeState } from './state/index.ts';
import type { Replicator } from './replication/index.ts';

export interface CheckpointSettings {
  intervalMs: number;
  /** Log rows read per slice (the event loop runs between slices). */
  sliceRows: number;
  /** Log rows one checkpoint write folds at most (one transaction): a fold of more writes several rounds. */
  roundRowsMax: number;
  dedupWindowMs: number;
  /** Out of sync, a primary keeps this many recent entries unfolded for its follower to catch up by log. */
  retainEntries: number;
  /** Tombstones of dropped shards older than this leave the checkpoint (droppedShardTombstoneMs). */
  tombstoneMs: number;
}

export interface CheckpointObserver {
  /** A round written: its rows, the time its transaction held the event loop, the new checkpoint lsn. */
  onFold(rows: number, durationSeconds: number, checkpointLsn: bigint): void;
  /** A slice read into a round, or a step merging its blocks before the commit: the time it held the event loop. */
  onFoldRead(durationSeconds: number): void;
}

export class Checkpointer {
  private readonly task: IntervalTask;

  constructor(
    private readonly log: ShardLog,
    private readonly state: NodeState,
    private readonly replicator: Replicator,
    private readonly settings: CheckpointSettings,
    private readonly observer: CheckpointObserver,
    logger: Logger,
    /** The node's log clock (steadyWallClock): keys and tombstones are kept by the times their entries were stamped with. */
    private readonly now: () => number = steadyWallClock(),
  ) {
    // One fold at a time; a failed one is logged as "checkpoint failed" and the next tick tries again.
    this.task = new IntervalTask({ name: 'checkpoint', intervalMs: settings.intervalMs, logger }, () => this.fold());
  }

  start(): void {
    this.task.start();
  }

  stop(): void {
    this.task.stop();
  }

  /** The highest lsn this node may fold now. */
  safeLsn(): bigint {
    const { role } = this.state;
    if (!this.state.ready) return 0n;
    if (role.role === 'primary') {
      const lastLsn = this.log.lastLsn;
      const acked = this.replicator.status().ackedLsn;
      if (role.syncRequired) return min(acked, lastLsn);
      const retained = lastLsn - BigInt(this.settings.retainEntries);
      const limit = min(acked > retained ? acked : retained, lastLsn);
      const installLimit = this.replicator.foldLimitLsn();
      return installLimit === undefined ? limit : min(limit, installLimit);
    }
    if (role.role === 'follower') return this.log.installing ? 0n : min(this.state.confirmedLsn, this.log.lastLsn);
    return 0n;
  }

  /** Folds everything safe now, slice by slice (not while a fold is under way). */
  run(): Promise<void> {
    return this.task.runNow();
  }

  /**
   * Writes a round into the checkpoint, unless what it read is no longer
   * safe to fold (the role changed since): then it is dropped, and the next
   * tick folds what is safe then. False when it was dropped.
   */
  private async commit(round: FoldRound, keepKeysSinceMs: number): Promise<boolean> {
    if (round.rows === 0) return true;
    // The new totals merged into their blocks' bytes a step at a time: the commit then only writes them.
    const stepsMax = round.touched.size + 1;
    for (let step = 0; step < stepsMax; step++) {
      const startedNs = process.hrtime.bigint();
      const left = this.log.foldPrepare(round, checkpointMergeBlocksMax);
      this.observer.onFoldRead(Number(process.hrtime.bigint() - startedNs) / 1e9);
      if (left === 0) break;
      await new Promise((resolve) => setImmediate(resolve));
    }
    if (this.safeLsn() < round.lastLsn) return false;
    const startedNs = process.hrtime.bigint();
    const folded = this.log.foldCommit(round, keepKeysSinceMs);
    if (folded === 0) return false;
    this.observer.onFold(folded, Number(process.hrtime.bigint() - startedNs) / 1e9, this.log.checkpointLsn);
    return true;
  }

  private async fold(): Promise<void> {
    const target = this.safeLsn();
    const keepKeysSinceMs = this.now() - this.settings.dedupWindowMs;
    // Bounded: each slice reads at least one row or stops, each round at least one slice.
    const slicesMax = Number((target - this.log.checkpointLsn) / BigInt(this.settings.sliceRows)) + 2;
    let round = this.log.beginFold();
    for (let slice = 0; slice < slicesMax; slice++) {
      // The role may have changed while we yielded: recheck what is safe.
      const upto = this.safeLsn() < target ? this.safeLsn() : target;
      const startedNs = process.hrtime.bigint();
      const read = this.log.foldRead(round, upto, this.settings.sliceRows, this.now());
      if (read === 0) break;
      this.observer.onFoldRead(Number(process.hrtime.bigint() - startedNs) / 1e9);
      if (round.rows >= this.settings.roundRowsMax) {
        if (!(await this.commit(round, keepKeysSinceMs))) return;
        round = this.log.beginFold();
      }
      await new Promise((resolve) => setImmediate(resolve));
    }
    if (!(await this.commit(round, keepKeysSinceMs))) return;
    for (let slice = 0; slice < 100 && this.log.pruneFoldedKeys(keepKeysSinceMs, this.settings.sliceRows) > 0; slice++) {
      await new Promise((resolve) => setImmediate(resolve));
    }
    const tombstonesBeforeMs = this.now() - this.settings.tombstoneMs;
    for (let slice = 0; slice < 100 && this.log.pruneTombstones(tombstonesBeforeMs, this.settings.sliceRows) > 0; slice++) {
      await new Promise((resolve) => setImmediate(resolve));
    }
  }
}

function min(a: bigint, b: bigint): bigint {
  return a < b ? a : b;
}
