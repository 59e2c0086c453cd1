// AdminService: validate every input (G7), then hand off to counter
// configuration, listing, sizing, cluster status, reconciliation and the
// directory's pair changes. Nothing changes before the whole request has
// been validated.
import { ErrorCode, TallyError, validateCounterName, monotonicNowMs, validateNodeAddress } from '../../wire/index.ts';
import { type Logger, type counterV1, hotCountersListedMax } from '../../common/index.ts';
import { type MembershipPath } from '../write/index.ts';
import {
  reconcile,
  clusterStatus,
  pairStatusOf,
  type RouterView,
  configureCounter,
  listCounters,
  ttlInForce,
  type CounterLifecycle,
} from '../counters/index.ts';
import type { Directory, CounterInfo, PairInfo } from '../directory/index.ts';
import { shardRatesOf, type Autoscaler, skewOf, type HeatTracker } from '../sizing/index.ts';
import type { NodePool } from '../nodes/index.ts';
import type { RouterMetrics } from '../metrics/index.ts';
import { createBackupHandlers } from './backup-handlers.ts';
import { grpcMethodsOf, handler, type UnaryHandlers } from './handler.ts';

/** What AdminService hands its calls to. */
export interface AdminServiceDeps {
  directory: Directory;
  membership: MembershipPath;
  pool: NodePool;
  heat: HeatTracker;
  metrics: RouterMetrics;
  logger: Logger;
  statusTimeoutMs: number;
  reconcileTimeoutMs: number;
  autoscaler: Autoscaler;
  lifecycle: CounterLifecycle;
  /** The router default time to live (--counter-ttl-ms); 0: none. */
  counterTtlMs: number;
  /** This router, the others sharing its directory, and the supervisor: for ClusterStatus. */
  routerView: RouterView;
  /**
   * False with several routers on etcd: each router knows only the writes
   * made through it, so none can tell a counter is idle. A TTL is refused
   * rather than expiring counters other routers are writing.
   */
  ttlSupported: boolean;
  /** Called once a pair was added: the supervisor checks it at once. */
  onPairAdded(pair: PairInfo): void;
}

export function createAdminService(deps: AdminServiceDeps) {
  const { directory, pool, heat, metrics, logger } = deps;

  const describe = (counter: CounterInfo): counterV1.DescribeResponse__Output => {
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
  };

  const knownCounter = (name: string) => {
    const counter = directory.get(validateCounterName(name));
    if (counter === undefined) throw new TallyError(ErrorCode.notFound, `counter "${name}" does not exist`);
    return counter;
  };

  const handlers = {
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

    ClusterStatus: handler<counterV1.ClusterStatusRequest__Output, counterV1.ClusterStatusResponse__Output>(() =>
      clusterStatus(directory, pool, deps.statusTimeoutMs, deps.routerView),
    ),

    AddPair: handler<counterV1.AddPairRequest__Output, counterV1.PairResponse__Output>(async (request) => {
      const primary = validateNodeAddress(request.primary, 'primary');
      const follower = validateNodeAddress(request.follower, 'follower');
      const pair = await directory.addPair({ primary, follower });
      metrics.pairInSync.set({ pair: String(pair.pairIndex) }, 0);
      logger.warn('pair added', { pair: pair.pairIndex, primary, follower });
      deps.onPairAdded(pair);
      return { pair: pairStatusOf(directory, pair) };
    }),

    DrainPair: handler<counterV1.DrainPairRequest__Output, counterV1.PairResponse__Output>(async (request) => {
      if (request.pair >= directory.allPairs().length) throw new TallyError(ErrorCode.notFound, `there is no pair ${request.pair}`);
      const pair = await directory.setPairDraining(request.pair, !request.undrain);
      logger.warn(pair.draining ? 'pair draining' : 'pair undrained', {
        pair: pair.pairIndex,
        shards: directory.shardCountOfPair(pair.pairIndex),
      });
      return { pair: pairStatusOf(directory, pair) };
    }),

    ReplaceNode: handler<counterV1.ReplaceNodeRequest__Output, counterV1.ReplaceNodeResponse__Output>(async (request) => {
      const address = validateNodeAddress(request.address, 'address');
      const newAddress = validateNodeAddress(request.newAddress, 'new_address');
      const pair = directory.pairOf(address);
      if (pair === undefined) throw new TallyError(ErrorCode.notFound, `no pair has a node at ${address}`);
      if (pair.primary === address) {
        throw new TallyError(
          ErrorCode.failedPrecondition,
          `${address} is the primary of pair ${pair.pairIndex}: only a follower slot can move (a lost primary is replaced by failover first)`,
        );
      }
      if (directory.pairOf(newAddress) !== undefined)
        throw new TallyError(ErrorCode.failedPrecondition, `${newAddress} is already a node of a pair`);
      // Directory first: from here on the old node is neither read, promoted
      // nor shipped to; the supervisor tells the primary its new follower.
      const next = await directory.updatePair(pair.pairIndex, { follower: newAddress, followerId: '', inSync: false, replaced: true });
      metrics.pairInSync.set({ pair: String(pair.pairIndex) }, 0);
      logger.warn('node replaced', {
        pair: pair.pairIndex,
        replaced: address,
        follower: newAddress,
        primary: next.primary,
        epoch: next.epoch,
      });
      return { pair: next.pairIndex, primary: next.primary, follower: next.follower, epoch: next.epoch.toString() };
    }),

    DeleteCounter: handler<counterV1.DeleteCounterRequest__Output, counterV1.DeleteCounterResponse__Output>(async (request) => {
      const name = validateCounterName(request.counter);
      const { deleted, pendingCount } = await deps.lifecycle.deleteAndDrop(name);
      return { counter: name, shards: deleted.shardIds.length, shardsPending: pendingCount };
    }),

    Reconcile: handler<counterV1.ReconcileRequest__Output, counterV1.ReconcileResponse__Output>(async (request, call) => {
      const counter = request.counter === '' ? undefined : validateCounterName(request.counter);
      const result = await reconcile(directory, pool, metrics, deps.reconcileTimeoutMs, counter, call);
      logger.info('reconcile', { counter: counter ?? '*', shardsChecked: result.shardsChecked, shardsDrifting: result.shardsDrifting });
      return result;
    }),
  } satisfies UnaryHandlers;

  // The backup streams are gRPC only: server streams of bytes the CLI writes to files.
  return { handlers, grpc: { ...grpcMethodsOf(handlers), ...createBackupHandlers({ directory, pool, logger }) } };
}
