// A node's background upkeep between writes: dropping keys past the dedup
// window, expiring old window buckets and old tombstones of dropped shards,
// and refreshing the gauges a scrape reads.
// Each runs a bounded slice per tick; none of them changes a total.
import { IntervalTask, droppedShardTombstoneMs, tombstoneVisitsPerSweep, windowShardsPerSweep, type Logger } from '../common/index.ts';
import { type DedupIndex, type NodeMemory, type NodeState } from './state/index.ts';
import type { NodeMetrics } from './node-metrics.ts';
import type { Replicator } from './replication/index.ts';
import type { ShardLog } from './log/index.ts';

export interface HousekeepingParts {
  log: ShardLog;
  memory: NodeMemory;
  dedup: DedupIndex;
  replicator: Replicator;
  state: NodeState;
  metrics: NodeMetrics;
  logger: Logger;
  dedupWindowMs: number;
  /** The node's log clock (steadyWallClock): keys, buckets and tombstones are timed on it, as their entries were stamped. */
  logClock: () => number;
}

const gaugeIntervalMs = 1_000;
const windowExpiryIntervalMs = 1_000;
const tombstoneExpiryIntervalMs = 1_000;

/** A tenth of the window, within [100 ms, 10 s]: keys leave close to when they expire, in small slices. */
export function dedupPruneIntervalMs(dedupWindowMs: number): number {
  return Math.min(10_000, Math.max(100, Math.floor(dedupWindowMs / 10)));
}

export class Housekeeping {
  private readonly tasks: IntervalTask[];
  private diskLookupsReported = 0;
  private evictedEarlyReported = 0;
  private readonly shippedReported = { fromMemory: 0, fromLog: 0 };

  constructor(private readonly parts: HousekeepingParts) {
    const { logger } = parts;
    this.tasks = [
      new IntervalTask({ name: 'dedup prune', intervalMs: dedupPruneIntervalMs(parts.dedupWindowMs), logger }, () => this.pruneKeys()),
      new IntervalTask({ name: 'window expiry', intervalMs: windowExpiryIntervalMs, logger }, () => this.expireWindows()),
      new IntervalTask({ name: 'tombstone expiry', intervalMs: tombstoneExpiryIntervalMs, logger }, () => this.expireTombstones()),
      new IntervalTask({ name: 'gauges', intervalMs: gaugeIntervalMs, logger }, () => this.refreshGauges()),
    ];
  }

  start(): void {
    // Gauges right from the first scrape, not a tick after a restart: a restarted node is watched most closely then.
    this.refreshGauges();
    for (const task of this.tasks) task.start();
  }

  stop(): void {
    for (const task of this.tasks) task.stop();
  }

  /** Keys past the window are dropped a bounded slice at a time, between writes. */
  private pruneKeys(): void {
    const { dedup, metrics } = this.parts;
    metrics.dedupPruned.inc(dedup.prune(this.parts.logClock()));
    metrics.dedupKeys.set(dedup.size);
  }

  /** Expired buckets leave memory a bounded number of shards per tick, so counters rolling over together do not stall writes (reads already skip them). */
  private expireWindows(): void {
    this.parts.metrics.windowBucketsExpired.inc(this.parts.memory.windows.expire(this.parts.logClock(), windowShardsPerSweep));
  }

  /** A bounded slice per tick: the checkpoint forgets them too, on its own schedule. */
  private expireTombstones(): void {
    this.parts.memory.pruneTombstones(this.parts.logClock() - droppedShardTombstoneMs, tombstoneVisitsPerSweep);
  }

  refreshGauges(): void {
    const { log, memory, dedup, replicator, state, metrics } = this.parts;
    const nowMs = this.parts.logClock();
    // A counter: only what was evicted since the last look (an index rebuilt from a snapshot counts from 0 again).
    metrics.dedupEvictedEarly.inc(Math.max(0, dedup.evictedFromMemory - this.evictedEarlyReported));
    this.evictedEarlyReported = dedup.evictedFromMemory;
    metrics.dedupDiskLookups.inc(dedup.diskLookups - this.diskLookupsReported);
    this.diskLookupsReported = dedup.diskLookups;
    metrics.dedupCoveredSeconds.set(dedup.coveredMs(nowMs) / 1000);
    metrics.dedupMemoryCoveredSeconds.set(dedup.memoryCoveredMs(nowMs) / 1000);
    metrics.shardCount.set(memory.totals.shardCount);
    metrics.droppedShards.set(memory.droppedCount);
    const structures = memory.structureBytes();
    metrics.sketchBytes.set(structures.sketchBytes);
    metrics.memberSetBytes.set(structures.memberBytes);
    metrics.windowBuckets.set(memory.windows.bucketCount);
    metrics.logSizeBytes.set(log.sizeBytes());
    metrics.logWalBytes.set(log.walSizeBytes());
    const { shipped } = replicator;
    metrics.replicationEntriesShipped.inc({ source: 'memory' }, shipped.fromMemory - this.shippedReported.fromMemory);
    metrics.replicationEntriesShipped.inc({ source: 'log' }, shipped.fromLog - this.shippedReported.fromLog);
    Object.assign(this.shippedReported, shipped);
    const replication = replicator.status();
    const primary = state.role.role === 'primary';
    metrics.replicationLagSeconds.set(primary ? Math.max(0, replication.lagMs) / 1000 : 0);
    metrics.replicationLagEntries.set(primary ? Number(log.lastLsn - replication.ackedLsn) : 0);
  }
}
