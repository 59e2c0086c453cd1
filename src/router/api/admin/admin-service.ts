// AdminService: validate every input (G7), then hand off to counter
// configuration, listing, sizing, cluster status, reconciliation and the
// directory's pair changes. Nothing changes before the whole request has
// been validated. This file wires the service and holds the per-counter
// handlers; the cluster's (pairs, nodes, status, reconcile) are in
// pair-handlers.ts, the backup streams in backup-handlers.ts.
import { ErrorCode, TallyError, validateCounterName, monotonicNowMs } from '../../../wire/index.ts';
import { type Logger, type counterV1, hotCountersListedMax } from '../../../common/index.ts';
import { type MembershipPath } from '../../write/index.ts';
import { configureCounter, listCounters, ttlInForce, type CounterLifecycle } from '../../counters/index.ts';
import type { Directory, CounterInfo } from '../../directory/index.ts';
import { shardRatesOf, type Autoscaler, skewOf, type HeatTracker } from '../../sizing/index.ts';
import type { RouterMetrics } from '../../metrics/index.ts';
import { createBackupHandlers } from './backup-handlers.ts';
import { createPairHandlers, type PairDeps } from './pair-handlers.ts';
import { grpcMethodsOf, handler, type UnaryHandlers } from '../handler.ts';

/** What AdminService hands its calls to. */
export interface AdminServiceDeps extends PairDeps {
  directory: Directory;
  membership: MembershipPath;
  heat: HeatTracker;
  metrics: RouterMetrics;
  logger: Logger;
  autoscaler: Autoscaler;
  lifecycle: CounterLifecycle;
  /** The router default time to live (--counter-ttl-ms); 0: none. */
  counterTtlMs: number;
  /**
   * False with several routers on etcd: each router knows only the writes
   * made through it, so none can tell a counter is idle. A TTL is refused
   * rather than expiring counters other routers are writing.
   */
  ttlSupported: boolean;
}

/** A counter as Describe and Configure answer it: placements, heat, skew and configuration. */
function describeCounter(
  deps: Pick<AdminServiceDeps, 'directory' | 'heat' | 'counterTtlMs'>,
  counter: CounterInfo,
): counterV1.DescribeResponse__Output {
  const { directory, heat } = deps;
  const sample = heat.lastSample(counter.name);
  const ttl = ttlInForce(counter.ttlMs, deps.counterTtlMs);
  const shardRates = shardRatesOf(sample, counter.shards.length);
  return {
    counter: counter.name,
    shards: counter.shards.length,
    placements: counter.shards.map((shard) => {
      const pair = directory.pair(shard.pairIndex);
      return {
        shard: shard.shardIndex,
        shardId: String(shard.shardId),
        pair: shard.pairIndex,
        primary: pair.primary,
        follower: pair.follower,
        epoch: pair.epoch.toString(),
      };
    }),
    heatPerSec: heat.ratePerSec(counter.name),
    peakPerSec: heat.peakPerSec(counter.name),
    shardRates,
    skew: sample === undefined ? 1 : skewOf(sample.shardCounts, counter.shards.length),
    config: {
      createdUnixMs: String(counter.createdMs),
      autoscale: counter.autoscale,
      kind: counter.kind,
      windowBucketMs: String(counter.window.bucketMs),
      windowRetentionMs: String(counter.window.retentionMs),
      ttlMs: String(ttl.ttlMs),
      ttlFrom: ttl.from,
      idleMs: String(Math.max(0, Math.round(monotonicNowMs() - counter.lastWriteMonotonicMs))),
    },
  };
}

/** A membership rebuild's report, as the wire carries it (int64s as decimal strings). */
function rebuildResponseOf(name: string, result: Awaited<ReturnType<MembershipPath['rebuild']>>): counterV1.RebuildResponse__Output {
  return {
    counter: name,
    members: result.members.toString(),
    storedCount: result.storedCount.toString(),
    drift: result.drift.toString(),
    repaired: result.repaired,
    partitions: result.partitions.map((check) => ({
      partition: check.partition,
      shardId: String(check.shardId),
      pair: check.pairIndex,
      members: check.members.toString(),
      storedCount: check.storedCount.toString(),
      drift: check.drift.toString(),
      repaired: check.repaired.toString(),
      followerChecked: check.followerDrift !== undefined,
      followerDrift: (check.followerDrift ?? 0n).toString(),
    })),
  };
}

/** Describe, Configure, Rebuild, ListCounters, Hot, SetShards and DeleteCounter: one counter's administration. */
function createCounterAdminHandlers(deps: AdminServiceDeps) {
  const { directory, heat, metrics, logger } = deps;
  const describe = (counter: CounterInfo) => describeCounter(deps, counter);

  const knownCounter = (name: string) => {
    const counter = directory.get(validateCounterName(name));
    if (counter === undefined) throw new TallyError(ErrorCode.notFound, `counter "${name}" does not exist`);
    return counter;
  };

  return {
    Describe: handler<counterV1.DescribeRequest__Output, counterV1.DescribeResponse__Output>((request) =>
      describe(knownCounter(request.counter)),
    ),

    Configure: handler<counterV1.ConfigureRequest__Output, counterV1.DescribeResponse__Output>(async (request) =>
      describe(await configureCounter(directory, logger, request, deps.ttlSupported)),
    ),

    Rebuild: handler<counterV1.RebuildRequest__Output, counterV1.RebuildResponse__Output>(async (request) => {
      const name = validateCounterName(request.counter);
      const result = await deps.membership.rebuild(name, request.repair === true);
      metrics.membershipDrift.set(Number(result.drift));
      metrics.membershipRebuilds.inc({ result: result.repaired ? 'repaired' : result.drift === 0n ? 'clean' : 'drift' });
      logger.info('rebuild', {
        counter: name,
        members: result.members,
        storedCount: result.storedCount,
        drift: result.drift,
        repaired: result.repaired,
      });
      return rebuildResponseOf(name, result);
    }),

    ListCounters: handler<counterV1.ListCountersRequest__Output, counterV1.ListCountersResponse__Output>((request) =>
      listCounters(directory, request, deps.counterTtlMs),
    ),

    Hot: handler<counterV1.HotRequest__Output, counterV1.HotResponse__Output>((request) => {
      const limit = request.limit === 0 ? 20 : Math.min(request.limit, hotCountersListedMax);
      const { counters, tracked } = deps.autoscaler.hot(limit);
      return { counters, tracked: String(tracked) };
    }),

    SetShards: handler<counterV1.SetShardsRequest__Output, counterV1.SetShardsResponse__Output>(async (request) => {
      const counter = knownCounter(request.counter);
      const { previousShardCount } = await directory.setShards(counter.name, request.shards);
      if (request.shards > previousShardCount) {
        metrics.shardGrowths.inc({ cause: 'manual' });
        logger.info('growth', {
          counter: counter.name,
          from: previousShardCount,
          to: request.shards,
          cause: 'manual',
          heatPerSec: heat.ratePerSec(counter.name),
        });
      }
      return { counter: counter.name, previousShards: previousShardCount, shards: counter.shards.length };
    }),

    DeleteCounter: handler<counterV1.DeleteCounterRequest__Output, counterV1.DeleteCounterResponse__Output>(async (request) => {
      const name = validateCounterName(request.counter);
      const { deleted, pendingCount } = await deps.lifecycle.deleteAndDrop(name);
      return { counter: name, shards: deleted.shardIds.length, shardsPending: pendingCount };
    }),
  };
}

export function createAdminService(deps: AdminServiceDeps) {
  const { directory, pool, logger } = deps;
  const handlers = { ...createCounterAdminHandlers(deps), ...createPairHandlers(deps) } satisfies UnaryHandlers;
  // The backup streams are gRPC only: server streams of bytes the CLI writes to files.
  return { handlers, grpc: { ...grpcMethodsOf(handlers), ...createBackupHandlers({ directory, pool, logger }) } };
}
