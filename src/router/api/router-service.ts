// CounterService and AdminService handlers: validate every input (G7), then
// hand off to the module that does the work (write and read paths, the kinds'
// paths, counter-configuration, counter-list, cluster-status, reconciler, the
// directory).
// Nothing changes before the whole request has been validated.
import {
  ErrorCode,
  TallyError,
  batchItemsMax,
  readManyCountersMax,
  unary,
  validateAmountNumber,
  validateCounterName,
  validateIdempotencyKey,
  monotonicNowMs,
  type Logger,
  type counterV1,
  distinctMembersMax,
  distinctMemberBytesMax,
  countDistinctCountersMax,
  hotCountersListedMax,
  parseInt64,
  parseMemberId,
  validateNodeAddress,
} from '../../common/index.ts';
import { type DistinctPath, type MembershipPath, type IncrementPath, type ValidIncrement } from '../write/index.ts';
import { type WindowReader, type ReadPath, type TotalRead } from '../read/index.ts';
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

export interface RouterDeps {
  directory: Directory;
  increments: IncrementPath;
  reads: ReadPath;
  distinct: DistinctPath;
  windows: WindowReader;
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

/**
 * `itemIndex`: the item's place in a batch, named in an error (-1: unary).
 * `validName`: a name already validated in this call; the same name is not checked again.
 */
function validateIncrement(request: counterV1.IncrementRequest__Output, itemIndex = -1, validName = ''): ValidIncrement {
  try {
    return {
      counter: request.counter === validName && validName !== '' ? validName : validateCounterName(request.counter),
      amount: validateAmountNumber(request.amount),
      idempotencyKey: validateIdempotencyKey(request.idempotencyKey),
    };
  } catch (error) {
    if (error instanceof TallyError && itemIndex >= 0) throw new TallyError(error.code, `item ${itemIndex}: ${error.message}`);
    throw error;
  }
}

function rejectReason(error: unknown): string {
  return error instanceof TallyError ? error.code : 'internal';
}

function toReadResponse(read: TotalRead): counterV1.ReadResponse__Output {
  return {
    counter: read.counter,
    total: read.total.toString(),
    exact: read.exact,
    asOfUnixMs: String(read.asOfMs),
    stalenessMs: String(read.stalenessMs),
    shards: read.shardCount,
  };
}

export function createCounterService(deps: RouterDeps) {
  const { increments, reads, heat, metrics } = deps;

  // Children bound once: a labels object per call costs a lookup by label values.
  const latencyByRpc = {
    increment: metrics.incrementLatency.labels({ rpc: 'increment' }),
    increment_batch: metrics.incrementLatency.labels({ rpc: 'increment_batch' }),
  };

  const applyCounted = async (
    items: ValidIncrement[],
    rpc: keyof typeof latencyByRpc,
    call: { readonly cancelled: boolean },
  ): Promise<counterV1.IncrementResponse__Output[]> => {
    const timer = latencyByRpc[rpc].startTimer();
    try {
      const outcomes = await increments.apply(items, call);
      // One metric update per call and one heat update per (counter, shard), not per item.
      let applied = 0;
      let lastCounter = '';
      let lastCounts: number[] = [];
      const countsByCounter = new Map<string, number[]>();
      for (let index = 0; index < outcomes.length; index++) {
        const outcome = outcomes[index]!;
        if (outcome.applied) applied++;
        const counter = items[index]!.counter;
        if (counter !== lastCounter) {
          let counts = countsByCounter.get(counter);
          if (counts === undefined) countsByCounter.set(counter, (counts = []));
          lastCounter = counter;
          lastCounts = counts;
        }
        lastCounts[outcome.shard] = (lastCounts[outcome.shard] ?? 0) + 1;
      }
      if (applied > 0) metrics.incrementsAccepted.inc(applied);
      if (applied < outcomes.length) metrics.incrementsDeduplicated.inc(outcomes.length - applied);
      for (const [counter, counts] of countsByCounter)
        for (let shardIndex = 0; shardIndex < counts.length; shardIndex++) {
          const count = counts[shardIndex];
          if (count !== undefined) heat.record(counter, count, shardIndex);
        }
      // The outcomes have the response's shape: sent as they are.
      return outcomes;
    } catch (error) {
      metrics.incrementsRejected.inc({ reason: rejectReason(error) }, items.length);
      throw error;
    } finally {
      timer();
    }
  };

  const validated = <T>(count: number, validate: () => T): T => {
    try {
      return validate();
    } catch (error) {
      metrics.incrementsRejected.inc({ reason: rejectReason(error) }, count);
      throw error;
    }
  };

  const timedRead = async <T>(consistency: string, read: () => Promise<T>): Promise<T> => {
    const timer = metrics.readLatency.startTimer({ consistency: consistency.toLowerCase() });
    try {
      return await read();
    } finally {
      timer();
    }
  };

  const readTotals = (names: string[], consistency: string): Promise<TotalRead[]> => {
    for (const name of names) {
      // A sketch has no exact total: its count is an estimate with an error.
      if (deps.directory.get(name)?.kind === 'distinct')
        throw new TallyError(ErrorCode.failedPrecondition, `counter "${name}" is a distinct counter: use CountDistinct`);
    }
    return timedRead(consistency, () => (consistency === 'CACHED' ? reads.readCached(names) : reads.readExact(names)));
  };

  const validateConsistency = (consistency: string): string => {
    if (consistency !== 'EXACT' && consistency !== 'CACHED') {
      throw new TallyError(ErrorCode.invalidArgument, `consistency must be EXACT or CACHED, got ${consistency}`);
    }
    return consistency;
  };

  return {
    Increment: unary<counterV1.IncrementRequest__Output, counterV1.IncrementResponse__Output>(async (request, call) => {
      const item = validated(1, () => validateIncrement(request));
      const [response] = await applyCounted([item], 'increment', call);
      return response!;
    }),

    IncrementBatch: unary<counterV1.IncrementBatchRequest__Output, counterV1.IncrementBatchResponse__Output>(async (request, call) => {
      const count = request.items.length;
      const items = validated(count, () => {
        if (count === 0) throw new TallyError(ErrorCode.invalidArgument, 'batch has no items');
        if (count > batchItemsMax)
          throw new TallyError(ErrorCode.resourceExhausted, `batch has ${count} items; the limit is ${batchItemsMax}`);
        const items: ValidIncrement[] = new Array(count);
        let validName = '';
        for (let index = 0; index < count; index++) {
          const item = validateIncrement(request.items[index]!, index, validName);
          validName = item.counter;
          items[index] = item;
        }
        return items;
      });
      return { results: await applyCounted(items, 'increment_batch', call) };
    }),

    Read: unary<counterV1.ReadRequest__Output, counterV1.ReadResponse__Output>(async (request) => {
      const name = validateCounterName(request.counter);
      const [read] = await readTotals([name], validateConsistency(request.consistency));
      return toReadResponse(read!);
    }),

    ReadMany: unary<counterV1.ReadManyRequest__Output, counterV1.ReadManyResponse__Output>(async (request) => {
      const names = validateCounterNames(request.counters, readManyCountersMax, 'ReadMany');
      const values = await readTotals(names, validateConsistency(request.consistency));
      return { values: values.map(toReadResponse) };
    }),

    AddDistinct: unary<counterV1.AddDistinctRequest__Output, counterV1.AddDistinctResponse__Output>(async (request) => {
      const name = validateCounterName(request.counter);
      const members = validateMemberList(request.members);
      members.forEach((member, index) => {
        if (member.length === 0) throw new TallyError(ErrorCode.invalidArgument, `member ${index} is empty`);
        if (member.length > distinctMemberBytesMax)
          throw new TallyError(
            ErrorCode.invalidArgument,
            `member ${index} has ${member.length} bytes; the limit is ${distinctMemberBytesMax}`,
          );
      });
      const { registersChanged, shardIndex } = await deps.distinct.add(name, members);
      metrics.distinctMembersAdded.inc(members.length);
      // One write to one shard: heat sizes distinct counters like totals.
      heat.record(name, 1, shardIndex);
      return { registersChanged };
    }),

    CountDistinct: unary<counterV1.CountDistinctRequest__Output, counterV1.CountDistinctResponse__Output>(async (request) => {
      const names = validateCounterNames(request.counters, countDistinctCountersMax, 'CountDistinct');
      const { estimate, standardError, shardCount } = await timedRead('distinct', () => deps.distinct.count(names));
      return { estimate: String(estimate), standardError, shards: shardCount };
    }),

    ReadWindow: unary<counterV1.ReadWindowRequest__Output, counterV1.ReadWindowResponse__Output>(async (request) => {
      const name = validateCounterName(request.counter);
      const consistency = validateConsistency(request.consistency);
      const lastMs = parseInt64(request.lastMs, 'last_ms');
      if (lastMs <= 0n) throw new TallyError(ErrorCode.invalidArgument, `last_ms must be positive, got ${lastMs}`);
      // Beyond any retention: out of range without a float conversion surprise.
      const lastMsNumber = lastMs > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(lastMs);
      const read = await timedRead(`window_${consistency}`, () => deps.windows.read(name, lastMsNumber, consistency === 'CACHED'));
      return {
        counter: read.counter,
        total: read.total.toString(),
        exact: read.exact,
        fromUnixMs: String(read.fromMs),
        toUnixMs: String(read.toMs),
        bucketMs: String(read.bucketMs),
        buckets: read.buckets,
        asOfUnixMs: String(read.asOfMs),
        stalenessMs: String(read.stalenessMs),
      };
    }),

    SetMember: unary<counterV1.SetMemberRequest__Output, counterV1.SetMemberResponse__Output>(async (request) => {
      const name = validateCounterName(request.counter);
      const member = parseMemberId(request.member);
      const { changed, count, partition } = await deps.membership.set(name, member, request.present === true);
      metrics.memberSets.inc({ changed: String(changed) });
      // Shown by `tally top`; partitions never grow, so this only informs.
      heat.record(name, 1, partition);
      return { changed, count: (count ?? 0n).toString(), countUnavailable: count === undefined };
    }),

    Clear: unary<counterV1.ClearRequest__Output, counterV1.ClearResponse__Output>(async (request) => {
      const name = validateCounterName(request.counter);
      const key = validateIdempotencyKey(request.idempotencyKey);
      const result = await deps.lifecycle.clear(name, key);
      return {
        counter: name,
        generation: String(result.generation),
        applied: result.applied,
        shards: result.shardCount,
        shardsPending: result.pendingCount,
      };
    }),

    IsMember: unary<counterV1.IsMemberRequest__Output, counterV1.IsMemberResponse__Output>(async (request) => {
      const name = validateCounterName(request.counter);
      const members = validateMemberList(request.members).map((member, index) => parseMemberId(member, `member ${index}`));
      return { present: await timedRead('membership', () => deps.membership.check(name, members)) };
    }),
  };
}

/** 1..distinctMembersMax members: the one bound of AddDistinct and IsMember. */
function validateMemberList<T>(members: readonly T[]): readonly T[] {
  if (members.length === 0) throw new TallyError(ErrorCode.invalidArgument, 'no members given');
  if (members.length > distinctMembersMax)
    throw new TallyError(ErrorCode.resourceExhausted, `${members.length} members in one call; the limit is ${distinctMembersMax}`);
  return members;
}

/** 1..limit valid counter names; a bad one is named by its position. */
function validateCounterNames(counters: readonly string[], limit: number, rpc: string): string[] {
  if (counters.length === 0) throw new TallyError(ErrorCode.invalidArgument, 'no counters named');
  if (counters.length > limit)
    throw new TallyError(ErrorCode.resourceExhausted, `${rpc} of ${counters.length} counters; the limit is ${limit}`);
  return counters.map((name, index) => {
    try {
      return validateCounterName(name);
    } catch (error) {
      throw new TallyError((error as TallyError).code, `counter ${index}: ${(error as Error).message}`);
    }
  });
}

export function createAdminService(deps: RouterDeps) {
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

  return {
    Describe: unary<counterV1.DescribeRequest__Output, counterV1.DescribeResponse__Output>((request) =>
      describe(knownCounter(request.counter)),
    ),

    Configure: unary<counterV1.ConfigureRequest__Output, counterV1.DescribeResponse__Output>(async (request) =>
      describe(await configureCounter(directory, logger, request, deps.ttlSupported)),
    ),

    Rebuild: unary<counterV1.RebuildRequest__Output, counterV1.RebuildResponse__Output>(async (request) => {
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

    ListCounters: unary<counterV1.ListCountersRequest__Output, counterV1.ListCountersResponse__Output>((request) =>
      listCounters(directory, request, deps.counterTtlMs),
    ),

    Hot: unary<counterV1.HotRequest__Output, counterV1.HotResponse__Output>((request) => {
      const limit = request.limit === 0 ? 20 : Math.min(request.limit, hotCountersListedMax);
      const { counters, tracked } = deps.autoscaler.hot(limit);
      return { counters, tracked: String(tracked) };
    }),

    SetShards: unary<counterV1.SetShardsRequest__Output, counterV1.SetShardsResponse__Output>(async (request) => {
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

    ClusterStatus: unary<counterV1.ClusterStatusRequest__Output, counterV1.ClusterStatusResponse__Output>(() =>
      clusterStatus(directory, pool, deps.statusTimeoutMs, deps.routerView),
    ),

    AddPair: unary<counterV1.AddPairRequest__Output, counterV1.PairResponse__Output>(async (request) => {
      const primary = validateNodeAddress(request.primary, 'primary');
      const follower = validateNodeAddress(request.follower, 'follower');
      const pair = await directory.addPair({ primary, follower });
      metrics.pairInSync.set({ pair: String(pair.pairIndex) }, 0);
      logger.warn('pair added', { pair: pair.pairIndex, primary, follower });
      deps.onPairAdded(pair);
      return { pair: pairStatusOf(directory, pair) };
    }),

    DrainPair: unary<counterV1.DrainPairRequest__Output, counterV1.PairResponse__Output>(async (request) => {
      if (request.pair >= directory.allPairs().length) throw new TallyError(ErrorCode.notFound, `there is no pair ${request.pair}`);
      const pair = await directory.setPairDraining(request.pair, !request.undrain);
      logger.warn(pair.draining ? 'pair draining' : 'pair undrained', {
        pair: pair.pairIndex,
        shards: directory.shardCountOfPair(pair.pairIndex),
      });
      return { pair: pairStatusOf(directory, pair) };
    }),

    ReplaceNode: unary<counterV1.ReplaceNodeRequest__Output, counterV1.ReplaceNodeResponse__Output>(async (request) => {
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

    DeleteCounter: unary<counterV1.DeleteCounterRequest__Output, counterV1.DeleteCounterResponse__Output>(async (request) => {
      const name = validateCounterName(request.counter);
      const { deleted, pendingCount } = await deps.lifecycle.deleteAndDrop(name);
      return { counter: name, shards: deleted.shardIds.length, shardsPending: pendingCount };
    }),

    Reconcile: unary<counterV1.ReconcileRequest__Output, counterV1.ReconcileResponse__Output>(async (request, call) => {
      const counter = request.counter === '' ? undefined : validateCounterName(request.counter);
      const result = await reconcile(directory, pool, metrics, deps.reconcileTimeoutMs, counter, call);
      logger.info('reconcile', { counter: counter ?? '*', shardsChecked: result.shardsChecked, shardsDrifting: result.shardsDrifting });
      return result;
    }),
  };
}
