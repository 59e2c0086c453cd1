// Counter lifecycle on the router: deleting a counter (DeleteCounter, and TTL
// expiry through CounterDeleter) and clearing one (Clear). The directory is
// the cut: a delete or a clear is one directory transaction, after which the
// counter reads as never written (deleted) or from 0 (cleared); the work it
// records for each shard — a drop, or a clear to the new generation — is then
// sent to the shard's primary (through the normal replicated log) until
// confirmed, now and after any restart. It never lets a reader see half of
// either: readers consult the directory first and tag every shard they read
// with the counter's generation.
import { status } from '@grpc/grpc-js';
import { ErrorCode, TallyError, errorCodeOfGrpcStatus, monotonicNowMs } from '../../wire/index.ts';
import {
  IntervalTask,
  lifecycleRetryIntervalMs,
  lifecycleShardsPerCallMax,
  lifecycleTasksPerPairPerRoundMax,
  regionTombstonePruneIntervalMs,
  type Logger,
} from '../../common/index.ts';
import type { ClearOutcome, CounterInfo, ShardTask, LifecycleDirectory } from '../directory/index.ts';
import type { CounterDeleter } from './expiry.ts';
import { type NodePool, type ApplyItem } from '../nodes/index.ts';
import type { ReadPath } from '../read/index.ts';
import type { HeatTracker } from '../sizing/index.ts';
import type { RouterMetrics } from '../metrics/index.ts';

/** Why a counter was deleted: an operator's DeleteCounter, or TTL expiry. */
export type DeleteCause = 'delete' | 'ttl';

export interface DeletedCounter {
  counter: string;
  /** The shard ids it had (never given out again). */
  shardIds: number[];
}

export interface LifecycleSettings {
  /** How long DeleteCounter and Clear wait for a failover when a shard's primary cannot take its drop or clear. */
  failoverWaitMs: number;
  /** How long a clear's idempotency key is remembered (the router's --dedup-window-ms). */
  dedupWindowMs: number;
  /** How often drops and clears not yet confirmed are sent again. */
  retryIntervalMs?: number;
  /**
   * Set when the region peers (docs/regions.md: delete across regions): a
   * DeleteCounter records its name's tombstone, kept this long once the name
   * has no counter. TTL expiry stays region-local and records none.
   */
  tombstoneRetentionMs?: number;
}

export interface ClearResult {
  counter: string;
  generation: number;
  /** False when the key named a clear already made: nothing more was cleared. */
  applied: boolean;
  shardCount: number;
  /** Shards whose node has yet to confirm the clear (they read 0 all the same). */
  pendingCount: number;
}

const emptyKey = Buffer.alloc(0);
const settleStepMs = 50;

export class CounterLifecycle implements CounterDeleter {
  private readonly retrier: IntervalTask;
  private lastPruneMs = 0;
  /** Called after a tombstone's commit, this region's delete or a peer's (the region publisher ships it). */
  onTombstone: (name: string) => void = () => {};

  constructor(
    private readonly directory: LifecycleDirectory,
    private readonly pool: NodePool,
    private readonly reads: ReadPath,
    private readonly heat: HeatTracker,
    private readonly metrics: RouterMetrics,
    private readonly logger: Logger,
    private readonly settings: LifecycleSettings,
  ) {
    // One round at a time: a round stuck on a silent node delays the next, never doubles it.
    this.retrier = new IntervalTask(
      { name: 'shard task round', intervalMs: settings.retryIntervalMs ?? lifecycleRetryIntervalMs, logger },
      async () => {
        // Bounded per pair, and nothing for a pair whose primary is known down: a pair away for hours may owe millions.
        await this.sendTasks(
          this.directory.shardTasksForRound(lifecycleTasksPerPairPerRoundMax, (pairIndex) =>
            this.pool.isKnownDown(this.directory.pair(pairIndex).primary),
          ),
        );
        await this.pruneTombstones();
      },
    );
  }

  /** Tombstones past retention go, at most once a minute (a slice of the retry round, which is one at a time). */
  private async pruneTombstones(): Promise<void> {
    const retentionMs = this.settings.tombstoneRetentionMs;
    if (retentionMs === undefined || monotonicNowMs() - this.lastPruneMs < regionTombstonePruneIntervalMs) return;
    this.lastPruneMs = monotonicNowMs();
    const pruned = await this.directory.pruneTombstones(retentionMs);
    if (pruned > 0) this.logger.info('tombstones past retention forgotten', { tombstones: pruned });
  }

  start(): void {
    this.retrier.start();
    this.exportPending();
  }

  stop(): void {
    this.retrier.stop();
  }

  async deleteCounter(name: string, cause: DeleteCause): Promise<DeletedCounter> {
    if (this.directory.get(name) === undefined) throw new TallyError(ErrorCode.notFound, `counter "${name}" does not exist`);
    const tombstone = cause === 'delete' && this.settings.tombstoneRetentionMs !== undefined;
    const deleted = await this.directory.deleteCounters([name], tombstone ? { tombstone: 'next' } : {});
    // Another router may have deleted it first: then this call found nothing to delete.
    if (deleted.length === 0) throw new TallyError(ErrorCode.notFound, `counter "${name}" does not exist`);
    if (tombstone) this.onTombstone(name);
    return this.forgetDeleted(deleted, cause)[0]!;
  }

  /**
   * A peer region deleted `name` up to `incarnation`: this region deletes
   * its counter, if its own incarnation is lower, at its own cut (the
   * directory transaction that also raises the tombstone). Keyed by the
   * incarnation: racing receivers and resent tombstones delete once.
   * True when this call moved the tombstone.
   */
  async deleteUpTo(name: string, incarnation: number): Promise<boolean> {
    const { deleted, applied } = await this.directory.deleteUpTo(name, incarnation);
    if (deleted !== undefined) this.forgetDeleted([deleted], 'delete');
    if (!applied) return false;
    this.logger.info('counter deleted by a peer region', { counter: name, incarnation, existed: deleted !== undefined });
    this.onTombstone(name);
    return true;
  }

  /**
   * TTL expiry's delete: of `names`, those that still exist and are still
   * expired (checked here, in the same turn as the embedded directory's
   * commit, so no write through this router can come between) are deleted
   * in one directory transaction.
   * Returns the names deleted.
   */
  async deleteCounters(names: readonly string[], cause: 'ttl', stillExpired: (name: string) => boolean): Promise<readonly string[]> {
    const expired = names.filter((name) => this.directory.get(name) !== undefined && stillExpired(name));
    return this.forgetDeleted(await this.directory.deleteCounters(expired), cause).map((deleted) => deleted.counter);
  }

  /** After the commit: whatever the router remembers of the old counters goes with them, and their drops go out. */
  private forgetDeleted(counters: readonly CounterInfo[], cause: DeleteCause): DeletedCounter[] {
    const shardIds: number[] = [];
    const deleted = counters.map((counter) => {
      this.reads.cache.forget(counter.name);
      this.heat.forget(counter.name);
      const ids = counter.shards.map((shard) => shard.shardId);
      shardIds.push(...ids);
      this.logger.info('counter deleted', { counter: counter.name, cause, shards: ids.length, kind: counter.kind });
      return { counter: counter.name, shardIds: ids };
    });
    if (deleted.length === 0) return deleted;
    this.metrics.countersDeleted.inc({ cause }, deleted.length);
    this.exportPending();
    // Sent at once without waiting: TTL expiry deletes many in a row.
    void this.sendTasks(this.tasksOf(shardIds));
    return deleted;
  }

  /**
   * DeleteCounter: deletes, then waits (up to the failover wait) for every
   * shard's primary to confirm its drop. Returns how many are still owed;
   * the router goes on sending those until they are confirmed.
   */
  async deleteAndDrop(name: string): Promise<{ deleted: DeletedCounter; pendingCount: number }> {
    const deleted = await this.deleteCounter(name, 'delete');
    return { deleted, pendingCount: await this.settle(deleted.shardIds) };
  }

  /**
   * Clear: the cut is the directory's generation bump (clearCounter); from
   * its commit on, every read and write carries the new generation. Then
   * each shard is told to empty itself — one small write per shard, sent
   * per node as one group — and the call waits (up to the failover wait)
   * for their confirmation, which frees the nodes' memory; shards not yet
   * confirmed read 0 all the same, and the router goes on sending. A keyed
   * retry of a clear already made clears nothing more, but still helps its
   * clears along.
   */
  async clear(name: string, key: Buffer): Promise<ClearResult> {
    const outcome: ClearOutcome = await this.directory.clearCounter(name, key, this.settings.dedupWindowMs);
    const shardIds = outcome.counter.shards.map((shard) => shard.shardId);
    if (outcome.applied) {
      this.reads.cache.forget(name);
      this.metrics.countersCleared.inc();
      this.exportPending();
      this.logger.info('counter cleared', { counter: name, generation: outcome.generation, shards: shardIds.length });
    }
    const pendingCount = await this.settle(shardIds);
    return { counter: name, generation: outcome.generation, applied: outcome.applied, shardCount: shardIds.length, pendingCount };
  }

  /** Sends what these shards are owed until none is, or the failover wait has passed; returns how many are still owed. */
  private async settle(shardIds: readonly number[]): Promise<number> {
    const untilMs = monotonicNowMs() + this.settings.failoverWaitMs;
    // Bounded: every round after the first waits a step, and rounds stop at untilMs.
    for (let round = 0; ; round++) {
      const owed = this.tasksOf(shardIds);
      if (owed.length === 0) return 0;
      if (round > 0 && monotonicNowMs() >= untilMs) return owed.length;
      if (round > 0) await new Promise((resolve) => setTimeout(resolve, settleStepMs));
      await this.sendTasks(this.tasksOf(shardIds));
    }
  }

  /** The tasks still owed among these shards. */
  private tasksOf(shardIds: readonly number[]): ShardTask[] {
    const tasks: ShardTask[] = [];
    for (const shardId of shardIds) {
      const task = this.directory.shardTask(shardId);
      if (task !== undefined) tasks.push(task);
    }
    return tasks;
  }

  private exportPending(): void {
    const counts = this.directory.pendingShardTaskCounts;
    this.metrics.shardTasksPending.set({ kind: 'drop' }, counts.drop);
    this.metrics.shardTasksPending.set({ kind: 'clear' }, counts.clear);
  }

  /**
   * Sends tasks to their pair's primary: one group per node of at most
   * lifecycleShardsPerCallMax drops or clears, all nodes at once. A
   * confirmed group leaves the directory (as sent: a task replaced
   * meanwhile stays owed); a failed one stays for the next round. Both are
   * idempotent: a node that already dropped a shard, or cleared it to that
   * generation, says so and that confirms it too.
   */
  private async sendTasks(tasks: readonly ShardTask[]): Promise<void> {
    if (tasks.length === 0) return;
    const byNode = new Map<string, ShardTask[][]>();
    for (const task of tasks) {
      const address = this.directory.pair(task.pairIndex).primary;
      let groups = byNode.get(address);
      if (groups === undefined) byNode.set(address, (groups = [[]]));
      if (groups[groups.length - 1]!.length >= lifecycleShardsPerCallMax) groups.push([]);
      groups[groups.length - 1]!.push(task);
    }
    await Promise.all(
      [...byNode].flatMap(([address, groups]) =>
        groups.map(async (group) => {
          const items: ApplyItem[] = group.map((task) =>
            task.kind === 'drop'
              ? { shardId: String(task.shardId), amount: '0', idempotencyKey: emptyKey, op: 'DROP' }
              : { shardId: String(task.shardId), amount: '0', idempotencyKey: emptyKey, op: 'CLEAR', generation: task.generation },
          );
          try {
            const result = await this.pool.get(address).sender.send(items);
            if (result.code !== status.OK) throw new TallyError(errorCodeOfGrpcStatus(result.code), result.message);
            await this.directory.completeShardTasks(group);
          } catch (error) {
            // Left for the next round: the pair may be failing over, or the node down.
            this.logger.debug('shard tasks not confirmed', {
              node: address,
              shards: group.length,
              error: error instanceof Error ? error.message : String(error),
            });
          }
        }),
      ),
    );
    this.exportPending();
  }
}
