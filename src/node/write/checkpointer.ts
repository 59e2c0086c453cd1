// Keeps the log bounded: every intervalMs, folds committed entries into the
// checkpoint's per-shard totals and deletes them (keeping keyed rows the
// dedup window still needs). It reads the log a slice at a time with the
// event loop free between steps, sums in memory, and writes the checkpoint
// once per round (at most roundRowsMax rows): each touched shard's row once,
// where a transaction per slice rewrote the same pages of a spread
// workload's checkpoint again and again. Recovery is then
// checkpoint + tail. A primary in sync folds only what its follower has
// confirmed; out of sync it keeps the last retainEntries for a follower that
// is briefly away (one further behind is refilled by snapshot install), and
// never folds past a snapshot being installed. A follower folds only what it
// knows matches its current primary (never a deposed primary's tail).
// Reads and merges run in small units and hand the event loop back once a
// step has held it for stepMs: a commit arriving meanwhile waits at most
// about one step, not a whole fold (hundreds of ms at a million shards).
import { IntervalTask, type Logger } from '../../common/index.ts';
import { monotonicNowMs, steadyWallClock } from '../../wire/index.ts';
import type { FoldRound, ShardLog } from '../log/index.ts';
import type { NodeState } from '../state/index.ts';
import type { Replicator } from '../replication/index.ts';

/** Folded keyed rows and tombstones one fold deletes at most (each): the rest go next tick. */
const pruneRowsPerFoldMax = 500_000;

export interface CheckpointSettings {
  intervalMs: number;
  /** Log rows read per slice: the unit a step is made of. */
  sliceRows: number;
  /** Event-loop time one step of a fold may hold before it yields (a step is at least one slice or merge). */
  stepMs: number;
  /** Checkpoint blocks merged per call before a round commits: the other unit a step is made of. */
  mergeBlocks: number;
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
  /** The fold handed the event loop back between two steps. */
  onYield?(): void;
}

export class Checkpointer {
  private readonly task: IntervalTask;
  /** When the current step of a fold began holding the event loop (monotonicMs). */
  private stepStartedMs = 0;

  constructor(
    private readonly log: ShardLog,
    private readonly state: NodeState,
    private readonly replicator: Replicator,
    private readonly settings: CheckpointSettings,
    private readonly observer: CheckpointObserver,
    logger: Logger,
    /** The node's log clock (steadyWallClock): keys and tombstones are kept by the times their entries were stamped with. */
    private readonly now: () => number = steadyWallClock(),
    /** Measures how long a step has held the event loop. */
    private readonly monotonicMs: () => number = monotonicNowMs,
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
      const left = this.log.foldPrepare(round, this.settings.mergeBlocks);
      this.observer.onFoldRead(Number(process.hrtime.bigint() - startedNs) / 1e9);
      if (left === 0) break;
      await this.yieldWhenSpent();
    }
    // The commit is one transaction: it starts a step of its own.
    await this.yieldNow();
    if (this.safeLsn() < round.lastLsn) return false;
    const startedNs = process.hrtime.bigint();
    const folded = this.log.foldCommit(round, keepKeysSinceMs);
    if (folded === 0) return false;
    this.observer.onFold(folded, Number(process.hrtime.bigint() - startedNs) / 1e9, this.log.checkpointLsn);
    return true;
  }

  private async fold(): Promise<void> {
    this.stepStartedMs = this.monotonicMs();
    const target = this.safeLsn();
    const keepKeysSinceMs = this.now() - this.settings.dedupWindowMs;
    // Bounded: each slice reads at least one entry or stops (a slice is cut
    // by rows, and a packed entry carries many), each round at least one slice.
    const slicesMax = Number(target - this.log.checkpointLsn) + 2;
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
        await this.yieldNow();
        continue;
      }
      await this.yieldWhenSpent();
    }
    if (!(await this.commit(round, keepKeysSinceMs))) return;
    await this.yieldNow();
    // Pruning is bounded per tick in rows, whatever the slice size.
    const prunesMax = Math.ceil(pruneRowsPerFoldMax / this.settings.sliceRows);
    for (let slice = 0; slice < prunesMax && this.log.pruneFoldedKeys(keepKeysSinceMs, this.settings.sliceRows) > 0; slice++) {
      await this.yieldWhenSpent();
    }
    const tombstonesBeforeMs = this.now() - this.settings.tombstoneMs;
    for (let slice = 0; slice < prunesMax && this.log.pruneTombstones(tombstonesBeforeMs, this.settings.sliceRows) > 0; slice++) {
      await this.yieldWhenSpent();
    }
  }

  /** Yields to the event loop once the current step has held it for stepMs. */
  private async yieldWhenSpent(): Promise<void> {
    if (this.monotonicMs() - this.stepStartedMs >= this.settings.stepMs) await this.yieldNow();
  }

  /** Yields to the event loop (I/O and the commits queued behind it run first) and starts a new step. */
  private async yieldNow(): Promise<void> {
    await new Promise((resolve) => setImmediate(resolve));
    this.observer.onYield?.();
    this.stepStartedMs = this.monotonicMs();
  }
}

function min(a: bigint, b: bigint): bigint {
  return a < b ? a : b;
}
