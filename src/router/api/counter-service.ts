// CounterService: validate every input (G7), then hand off to the write and
// read paths and the kinds' paths. Nothing changes before the whole request
// has been validated.
import {
  ErrorCode,
  TallyError,
  batchItemsMax,
  readManyCountersMax,
  routerStreamBatchesInFlightMax,
  streamBatchesInFlightMax,
  validateCounterName,
  validateIdempotencyKey,
  type counterV1,
  type LeanIncrementBatchRequest,
  type LeanIncrementRequest,
  type LeanReadManyRequest,
  type ReadManyResponseInput,
  type ReadResponseInput,
  distinctMemberBytesMax,
  countDistinctCountersMax,
  parseInt64,
  parseMemberId,
  encodeRegionPart,
} from '../../common/index.ts';
import { type DistinctPath, type MembershipPath, type IncrementPath, type ValidIncrement } from '../write/index.ts';
import { type WindowReader, type ReadPath, type TotalRead } from '../read/index.ts';
import { type CounterLifecycle } from '../counters/index.ts';
import { type HeatTracker } from '../sizing/index.ts';
import type { GlobalRead, GlobalReader, RegionPartRead } from '../region/index.ts';
import type { RouterMetrics } from '../metrics/index.ts';
import { rejectReason, validateCounterNames, validateIncrement, validateMemberList } from './validation.ts';
import { createIncrementStreamHandler } from './increment-stream.ts';
import { grpcMethodsOf, handler, type UnaryHandlers } from './handler.ts';

/** What CounterService hands its calls to. */
export interface CounterServiceDeps {
  increments: IncrementPath;
  reads: ReadPath;
  distinct: DistinctPath;
  windows: WindowReader;
  membership: MembershipPath;
  lifecycle: CounterLifecycle;
  heat: HeatTracker;
  metrics: RouterMetrics;
  /** SCOPE_GLOBAL reads (docs/regions.md). */
  globalReads: Pick<GlobalReader, 'read'>;
}

function toReadResponse(read: TotalRead): counterV1.ReadResponse__Output {
  return {
    counter: read.counter,
    total: read.total.toString(),
    exact: read.exact,
    asOfUnixMs: String(read.asOfMs),
    stalenessMs: String(read.stalenessMs),
    shards: read.shardCount,
    regions: (read as Partial<GlobalRead>).regions?.map(toRegionPart) ?? [],
  };
}

function toRegionPart(part: RegionPartRead): counterV1.RegionPart__Output {
  return {
    region: part.region,
    total: part.total.toString(),
    asOfUnixMs: String(part.asOfUnixMs),
    stalenessMs: String(part.stalenessMs),
    home: part.home,
  };
}

/** A value of ReadMany's response, for the lean encoder: int64s as they are (no decimal string each). */
function toLeanReadResponse(read: TotalRead): ReadResponseInput {
  return {
    counter: read.counter,
    total: read.total,
    exact: read.exact,
    asOfUnixMs: read.asOfMs,
    stalenessMs: read.stalenessMs,
    shards: read.shardCount,
    ...((read as Partial<GlobalRead>).regions === undefined
      ? {}
      : { regionParts: (read as GlobalRead).regions.map((part) => encodeRegionPart(part)) }),
  };
}

/** An increment's answer, as the lean codec writes it (common/counter-codec.ts); total only when return_total asked and the read succeeded. */
interface IncrementOutcome {
  applied: boolean;
  shard: number;
  total?: bigint;
}

/** Which items asked return_total; undefined when none did (the common case costs one pass and no array). */
function totalsWanted(items: readonly LeanIncrementRequest[]): boolean[] | undefined {
  let wanted: boolean[] | undefined;
  for (let index = 0; index < items.length; index++) {
    if (items[index]!.returnTotal !== true) continue;
    wanted ??= new Array<boolean>(items.length).fill(false);
    wanted[index] = true;
  }
  return wanted;
}

export function createCounterService(deps: CounterServiceDeps) {
  const { increments, reads, heat, metrics } = deps;

  // Children bound once: a labels object per call costs a lookup by label values.
  const latencyByRpc = {
    increment: metrics.incrementLatency.labels({ rpc: 'increment' }),
    increment_batch: metrics.incrementLatency.labels({ rpc: 'increment_batch' }),
    increment_stream: metrics.incrementLatency.labels({ rpc: 'increment_stream' }),
  };

  const applyCounted = async (
    items: ValidIncrement[],
    rpc: keyof typeof latencyByRpc,
    call: { readonly cancelled: boolean },
    totalWanted?: readonly boolean[],
  ): Promise<IncrementOutcome[]> => {
    const timer = latencyByRpc[rpc].startTimer();
    try {
      const outcomes = await increments.apply(items, call);
      if (totalWanted !== undefined) return withTotals(items, outcomes, totalWanted);
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

  /**
   * return_total: each asking item's counter read EXACT after the whole call
   * was acknowledged, so its total includes it (G3). A failed read leaves
   * the total out instead of failing the call: the increments stand, and a
   * retry without a key would count them twice.
   */
  const withTotals = async (
    items: readonly ValidIncrement[],
    outcomes: IncrementOutcome[],
    totalWanted: readonly boolean[],
  ): Promise<IncrementOutcome[]> => {
    const names = [...new Set(items.filter((_, index) => totalWanted[index] === true).map((item) => item.counter))];
    let totals: Map<string, bigint>;
    try {
      const read = await readTotals(names, 'EXACT');
      totals = new Map(read.map((value, index) => [names[index]!, value.total]));
    } catch {
      return outcomes;
    }
    return outcomes.map((outcome, index) => {
      const total = totalWanted[index] === true ? totals.get(items[index]!.counter) : undefined;
      return total === undefined ? outcome : { applied: outcome.applied, shard: outcome.shard, total };
    });
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

  // A distinct counter among names is refused by the read path, where each name is resolved once.
  const readTotals = (names: string[], consistency: string, scope: string = 'SCOPE_REGION'): Promise<TotalRead[]> => {
    if (scope === 'SCOPE_GLOBAL')
      return timedRead(`global_${consistency}`, () => deps.globalReads.read(names, consistency as 'EXACT' | 'CACHED'));
    return timedRead(consistency, () => (consistency === 'CACHED' ? reads.readCached(names) : reads.readExact(names)));
  };

  const validateScope = (scope: string | number | undefined): string => {
    if (scope === undefined || scope === 'SCOPE_REGION' || scope === 'SCOPE_GLOBAL') return scope ?? 'SCOPE_REGION';
    throw new TallyError(ErrorCode.invalidArgument, `scope must be SCOPE_REGION or SCOPE_GLOBAL, got ${scope}`);
  };

  // A number: a value the enum does not name (proto-loader's and the lean decoder's way of passing it on).
  const validateConsistency = (consistency: string | number): string => {
    if (consistency !== 'EXACT' && consistency !== 'CACHED') {
      throw new TallyError(ErrorCode.invalidArgument, `consistency must be EXACT or CACHED, got ${consistency}`);
    }
    return consistency as string;
  };

  // IncrementBatch's whole body, shared with each batch of an IncrementStream.
  const incrementBatch = async (
    request: LeanIncrementBatchRequest,
    call: { readonly cancelled: boolean },
    rpc: 'increment_batch' | 'increment_stream',
  ): Promise<IncrementOutcome[]> => {
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
    return applyCounted(items, rpc, call, totalsWanted(request.items));
  };

  // Reads change nothing: any failure of theirs is NOT_APPLIED.
  const changesNothing = true;

  const handlers = {
    // Decoded by the lean codec (common/counter-codec.ts, wired in build.ts): amounts as numbers or bigints.
    Increment: handler<LeanIncrementRequest, IncrementOutcome>(async (request, call) => {
      const item = validated(1, () => validateIncrement(request));
      const [response] = await applyCounted([item], 'increment', call, request.returnTotal === true ? [true] : undefined);
      return response!;
    }),

    IncrementBatch: handler<LeanIncrementBatchRequest, { results: IncrementOutcome[] }>(async (request, call) => ({
      results: await incrementBatch(request, call, 'increment_batch'),
    })),

    Read: handler<counterV1.ReadRequest__Output, counterV1.ReadResponse__Output>(async (request) => {
      const name = validateCounterName(request.counter);
      const [read] = await readTotals([name], validateConsistency(request.consistency), validateScope(request.scope));
      return toReadResponse(read!);
    }, changesNothing),

    // Lean codec both ways (common/counter-codec.ts, wired in build.ts): a page's totals go out without a string per int64.
    ReadMany: handler<LeanReadManyRequest, ReadManyResponseInput>(async (request) => {
      const names = validateCounterNames(request.counters, readManyCountersMax, 'ReadMany');
      const values = await readTotals(names, validateConsistency(request.consistency), validateScope(request.scope));
      return { values: values.map(toLeanReadResponse) };
    }, changesNothing),

    AddDistinct: handler<counterV1.AddDistinctRequest__Output, counterV1.AddDistinctResponse__Output>(async (request) => {
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

    CountDistinct: handler<counterV1.CountDistinctRequest__Output, counterV1.CountDistinctResponse__Output>(async (request) => {
      const names = validateCounterNames(request.counters, countDistinctCountersMax, 'CountDistinct');
      const { estimate, standardError, shardCount } = await timedRead('distinct', () => deps.distinct.count(names));
      return { estimate: String(estimate), standardError, shards: shardCount };
    }, changesNothing),

    ReadWindow: handler<counterV1.ReadWindowRequest__Output, counterV1.ReadWindowResponse__Output>(async (request) => {
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
    }, changesNothing),

    SetMember: handler<counterV1.SetMemberRequest__Output, counterV1.SetMemberResponse__Output>(async (request) => {
      const name = validateCounterName(request.counter);
      const member = parseMemberId(request.member);
      const { changed, count, partition } = await deps.membership.set(name, member, request.present === true);
      metrics.memberSets.inc({ changed: String(changed) });
      // Shown by `tally top`; partitions never grow, so this only informs.
      heat.record(name, 1, partition);
      return { changed, count: (count ?? 0n).toString(), countUnavailable: count === undefined };
    }),

    Clear: handler<counterV1.ClearRequest__Output, counterV1.ClearResponse__Output>(async (request) => {
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

    IsMember: handler<counterV1.IsMemberRequest__Output, counterV1.IsMemberResponse__Output>(async (request) => {
      const name = validateCounterName(request.counter);
      const members = validateMemberList(request.members).map((member, index) => parseMemberId(member, `member ${index}`));
      return { present: await timedRead('membership', () => deps.membership.check(name, members)) };
    }, changesNothing),
  } satisfies UnaryHandlers;

  return {
    handlers,
    /** The gRPC service: every unary handler, and IncrementStream (gRPC only: a bidi stream). */
    grpc: {
      ...grpcMethodsOf(handlers),
      // Each batch as IncrementBatch, answered by its sequence number (increment-stream.ts); lean codec as IncrementBatch.
      IncrementStream: createIncrementStreamHandler(
        (request, call) => incrementBatch(request, call, 'increment_stream'),
        { batchesInFlightMax: streamBatchesInFlightMax, routerBatchesInFlightMax: routerStreamBatchesInFlightMax },
        {
          onRefused: (itemCount) => metrics.incrementsRejected.inc({ reason: ErrorCode.resourceExhausted }, itemCount),
          onInFlight: (batches) => metrics.streamBatchesInFlight.set(batches),
        },
      ),
    },
  };
}
