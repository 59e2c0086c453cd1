// Counter lifecycle on the router: deleting a counter (DeleteCounter, and TTL
// expiry through CounterDeleter). The directory is the cut: a delete is one
// directory transaction, after which the counter reads as never written and
// its name is free; the drops it records are then sent to each shard's
// primary (through the normal replicated log) until confirmed, now and after
// any restart. It never lets a reader see half a delete.
import { status } from '@grpc/grpc-js';
import {
  TallyError,
  IntervalTask,
  lifecycleRetryIntervalMs,
  lifecycleShardsPerCallMax,
  errorCodeOfGrpcStatus,
  type Logger,
} from '../common/index.ts';
import type { Directory, ShardTask } from './directory.ts';
import type { NodePool } from './node-pool.ts';
import type { ApplyItem } from './node-sender.ts';
import type { ReadPath } from './read-path.ts';
import type { HeatTracker } from './heat.ts';
import type { RouterMetrics } from './router-metrics.ts';

/** Why a counter was deleted: an operator's DeleteCounter, or TTL expiry. */
export type DeleteCause = 'delete' | 'ttl';

export interface DeletedCounter {
  counter: string;
  /** The shard ids it had (never given out again). */
  shardIds: number[];
}

/**
 * What TTL expiry calls to delete a counter (CounterLifecycle implements it).
 * Synchronous: the directory transaction commits before it returns, so a
 * caller can check a counter (its last write) and delete it in one turn with
 * no increment in between. Throws NOT_FOUND when the counter does not exist.
 * The nodes' drops go out in the background (see CounterLifecycle).
 */
export interface CounterDeleter {
  deleteCounter(name: string, cause: DeleteCause): DeletedCounter;
}

export interface LifecycleSettings {
  /** How long DeleteCounter waits for a failover when a shard's primary cannot take its drop. */
  failoverWaitMs: number;
  /** How often drops not yet confirmed are sent again. */
  retryIntervalMs?: number;
}

const emptyKey = Buffer.alloc(0);
const propagateStepMs = 50;

export class CounterLifecycle implements CounterDeleter {
  private readonly retrier: IntervalTask;

  constructor(
    private readonly directory: Directory,
    private readonly pool: NodePool,
    private readonly reads: ReadPath,
    private readonly heat: HeatTracker,
    private readonly metrics: RouterMetrics,
    private readonly logger: Logger,
    private readonly settings: LifecycleSettings,
  ) {
    // One round at a time: a round stuck on a silent node delays the next, never doubles it.
    this.retrier = new IntervalTask(
      { name: 'shard drop round', intervalMs: settings.retryIntervalMs ?? lifecycleRetryIntervalMs, logger },
      async () => {
        await this.sendPending(this.directory.pendingShardTasks());
      },
    );
  }

  start(): void {
    this.retrier.start();
  }

  stop(): void {
    this.retrier.stop();
  }

  deleteCounter(name: string, cause: DeleteCause): DeletedCounter {
    const counter = this.directory.deleteCounter(name);
    // After the commit: whatever the router remembers of the old counter goes with it.
    this.reads.cache.forget(name);
    this.heat.forget(name);
    this.metrics.countersDeleted.inc({ cause });
    this.metrics.shardTasksPending.set(this.directory.pendingShardTaskCount);
    const shardIds = counter.shards.map((shard) => shard.shardId);
    this.logger.info('counter deleted', { counter: name, cause, shards: shardIds.length, kind: counter.kind });
    // Sent at once without waiting: TTL expiry deletes many in a row.
    void this.sendPending(this.tasksOf(shardIds));
    return { counter: name, shardIds };
  }

  /**
   * DeleteCounter: deletes, then waits (up to the failover wait) for every
   * shard's primary to confirm its drop. Returns how many are still owed;
   * the router goes on sending those until they are confirmed.
   */
  async deleteAndDrop(name: string): Promise<{ deleted: DeletedCounter; pendingCount: number }> {
    const deleted = this.deleteCounter(name, 'delete');
    const untilMs = Date.now() + this.settings.failoverWaitMs;
    // Bounded: each round waits a step, and rounds stop at untilMs.
    for (;;) {
      const pending = this.tasksOf(deleted.shardIds);
      if (pending.length === 0) return { deleted, pendingCount: 0 };
      if (Date.now() >= untilMs) return { deleted, pendingCount: pending.length };
      await new Promise((resolve) => setTimeout(resolve, propagateStepMs));
      await this.sendPending(this.tasksOf(deleted.shardIds));
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

  /**
   * Sends tasks to their pair's primary: one group per node of at most
   * lifecycleShardsPerCallMax drops, all nodes at once. A confirmed group
   * leaves the directory; a failed one stays for the next round (a drop is
   * idempotent: a node that already dropped a shard says so).
   */
  private async sendPending(tasks: readonly ShardTask[]): Promise<void> {
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
          const items: ApplyItem[] = group.map((task) => ({
            shardId: String(task.shardId),
            amount: '0',
            idempotencyKey: emptyKey,
            op: 'DROP',
          }));
          try {
            const result = await this.pool.get(address).sender.send(items);
            if (result.code !== status.OK) throw new TallyError(errorCodeOfGrpcStatus(result.code), result.message);
            this.directory.completeShardTasks(group.map((task) => task.shardId));
          } catch (error) {
            // Left for the next round: the pair may be failing over, or the node down.
            this.logger.debug('shard drops not confirmed', {
              node: address,
              shards: group.length,
              error: error instanceof Error ? error.message : String(error),
            });
          }
        }),
      ),
    );
    this.metrics.shardTasksPending.set(this.directory.pendingShardTaskCount);
  }
}
