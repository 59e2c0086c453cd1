// CounterService: validate every input (G7), then hand off to the write and
// read paths and the kinds' paths. Nothing changes before the whole request
// has been validated.
import {
  ErrorCode,
  TallyError,
  batchItemsMax,
  readManyCountersMax,
  readStreamPagesInFlightMax,
  streamBatchesInFlightMax,
  validateCounterName,
  validateIdempotencyKey,
  type IncrementColumns,
  type LeanIncrementRequest,
  type LeanReadManyRequest,
  type ReadManyResponseInput,
  type ReadResponseInput,
  parseInt64,
  parseMemberId,
  encodeRegionPart,
} from '../../wire/index.ts';
import {
  routerReadStreamPagesInFlightMax,
  routerStreamBatchesInFlightMax,
  type counterV1,
  distinctMemberBytesMax,
  countDistinctCountersMax,
} from '../../common/index.ts';
import { type AppliedBatch, type DistinctPath, type MembershipPath, type IncrementPath, columnsOf } from '../write/index.ts';
import { type WindowReader, type ReadPath, type TotalRead } from '../read/index.ts';
import { type CounterLifecycle } from '../counters/index.ts';
import { type HeatTracker } from '../sizing/index.ts';
import type { GlobalRead, GlobalReader, RegionPartRead } from '../region/index.ts';
import type { RouterMetrics } from '../metrics/index.ts';
import { rejectReason, validateColumns, validateCounterNames, validateIncrement, validateMemberList } from './validation.ts';
import { createIncrementStreamHandler } from './increment-stream.ts';
import { createReadStreamHandler } from './read-stream.ts';
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
  /** Told the counters a write or clear went to once its outcome is known (the region publisher reads them next). */
  onWritten?: (counter: string) => void;
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

/** Heat's marks of a name's shard while a call's outcomes are counted: none yet, or several. */
const noShard = -1;
const mixedShards = -2;

export function createCounterService(deps: CounterServiceDeps) {
  const { increments, reads, heat, metrics } = deps;

  // Children bound once: a labels object per call costs a lookup by label values.
  const latencyByRpc = {
    increment: metrics.incrementLatency.labels({ rpc: 'increment' }),
    increment_batch: metrics.incrementLatency.labels({ rpc: 'increment_batch' }),
    increment_stream: metrics.incrementLatency.labels({ rpc: 'increment_stream' }),
  };

  // Once per run of one counter's items: a batch names few counters, many times each.
  const markWritten = (counters: readonly string[]): void => {
    const onWritten = deps.onWritten;
    if (onWritten === undefined) return;
    let last = '';
    for (const counter of counters) {
      if (counter === last) continue;
      last = counter;
      onWritten(last);
    }
  };

  const applyCounted = async (
    batch: IncrementColumns,
    rpc: keyof typeof latencyByRpc,
    call: { readonly cancelled: boolean },
  ): Promise<IncrementOutcome[]> => {
    const timer = latencyByRpc[rpc].startTimer();
    try {
      const applied = await increments.applyColumns(batch, call).finally(() => markWritten(batch.counters));
      if (batch.returnTotals !== undefined) return withTotals(batch, applied.outcomes, batch.returnTotals);
      recordApplied(applied);
      // The outcomes have the response's shape: sent as they are.
      return applied.outcomes;
    } catch (error) {
      metrics.incrementsRejected.inc({ reason: rejectReason(error) }, batch.counters.length);
      throw error;
    } finally {
      timer();
    }
  };

  /**
   * One metric update per call, and heat once per counter of the call (per
   * shard only for a counter whose increments went to several): typed
   * arrays by the call's distinct names, no object per item.
   */
  const recordApplied = ({ outcomes, names, places }: AppliedBatch): void => {
    let applied = 0;
    const counts = new Int32Array(names.length);
    // Per name: the one shard its increments went to, or mixedShards.
    const shards = new Int32Array(names.length).fill(noShard);
    let mixed = false;
    for (let index = 0; index < outcomes.length; index++) {
      const outcome = outcomes[index]!;
      if (outcome.applied) applied++;
      const place = places === undefined ? 0 : places[index]!;
      counts[place]!++;
      const shard = shards[place]!;
      if (shard === noShard) shards[place] = outcome.shard;
      else if (shard !== outcome.shard && shard !== mixedShards) {
        shards[place] = mixedShards;
        mixed = true;
      }
    }
    if (applied > 0) metrics.incrementsAccepted.inc(applied);
    if (applied < outcomes.length) metrics.incrementsDeduplicated.inc(outcomes.length - applied);
    for (let place = 0; place < names.length; place++)
      if (shards[place] !== mixedShards) heat.record(names[place]!, counts[place]!, shards[place]);
    if (mixed) recordMixedShards(outcomes, names, places, shards);
  };

  // A counter with several shards, its increments spread over them: heat per shard, for skew.
  const recordMixedShards = (
    outcomes: readonly IncrementOutcome[],
    names: readonly string[],
    places: readonly number[] | undefined,
    shards: Int32Array,
  ): void => {
    const countsByPlace = new Map<number, number[]>();
    for (let index = 0; index < outcomes.length; index++) {
      const place = places === undefined ? 0 : places[index]!;
      if (shards[place] !== mixedShards) continue;
      let counts = countsByPlace.get(place);
      if (counts === undefined) countsByPlace.set(place, (counts = []));
      const shard = outcomes[index]!.shard;
      counts[shard] = (counts[shard] ?? 0) + 1;
    }
    for (const [place, counts] of countsByPlace)
      for (let shardIndex = 0; shardIndex < counts.length; shardIndex++) {
        const count = counts[shardIndex];
        if (count !== undefined) heat.record(names[place]!, count, shardIndex);
      }
  };

  /**
   * return_total: each asking item's counter read EXACT after the whole call
   * was acknowledged, so its total includes it (G3). A failed read leaves
   * the total out instead of failing the call: the increments stand, and a
   * retry without a key would count them twice.
   */
  const withTotals = async (
    batch: IncrementColumns,
    outcomes: IncrementOutcome[],
    totalWanted: readonly boolean[],
  ): Promise<IncrementOutcome[]> => {
    const names = [...new Set(batch.counters.filter((_, index) => totalWanted[index] === true))];
    let totals: Map<string, bigint>;
    try {
      const read = await readTotals(names, 'EXACT');
      totals = new Map(read.map((value, index) => [names[index]!, value.total]));
    } catch {
      return outcomes;
    }
    return outcomes.map((outcome, index) => {
      const total = totalWanted[index] === true ? totals.get(batch.counters[index]!) : undefined;
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
    batch: IncrementColumns,
    call: { readonly cancelled: boolean },
    rpc: 'increment_batch' | 'increment_stream',
  ): Promise<IncrementOutcome[]> => {
    const count = batch.counters.length;
    validated(count, () => {
      if (count === 0) throw new TallyError(ErrorCode.invalidArgument, 'batch has no items');
      if (count > batchItemsMax)
        throw new TallyError(ErrorCode.resourceExhausted, `batch has ${count} items; the limit is ${batchItemsMax}`);
      validateColumns(batch);
    });
    return applyCounted(batch, rpc, call);
  };

  // ReadMany's whole body, shared with each page of a ReadStream.
  const readPage = async (request: LeanReadManyRequest): Promise<ReadManyResponseInput> => {
    const names = validateCounterNames(request.counters, readManyCountersMax, 'ReadMany');
    const values = await readTotals(names, validateConsistency(request.consistency), validateScope(request.scope));
    return { values: values.map(toLeanReadResponse) };
  };

  // Reads change nothing: any failure of theirs is NOT_APPLIED.
  const changesNothing = true;

  const handlers = {
    // Decoded by the lean codec (common/counter-codec.ts, wired in build.ts): amounts as numbers or bigints.
    Increment: handler<LeanIncrementRequest, IncrementOutcome>(async (request, call) => {
      const batch = columnsOf([validated(1, () => validateIncrement(request))]);
      if (request.returnTotal === true) batch.returnTotals = [true];
      const [response] = await applyCounted(batch, 'increment', call);
      return response!;
    }),

    // Decoded into columns (withColumnDecoders, wired in build.ts).
    IncrementBatch: handler<IncrementColumns, { results: IncrementOutcome[] }>(async (request, call) => ({
      results: await incrementBatch(request, call, 'increment_batch'),
    })),

    Read: handler<counterV1.ReadRequest__Output, counterV1.ReadResponse__Output>(async (request) => {
      const name = validateCounterName(request.counter);
      const [read] = await readTotals([name], validateConsistency(request.consistency), validateScope(request.scope));
      return toReadResponse(read!);
    }, changesNothing),

    // Lean codec both ways (common/counter-codec.ts, wired in build.ts): a page's totals go out without a string per int64.
    ReadMany: handler<LeanReadManyRequest, ReadManyResponseInput>(readPage, changesNothing),

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
      const result = await deps.lifecycle.clear(name, key).finally(() => deps.onWritten?.(name));
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
    /** The gRPC service: every unary handler, IncrementStream and ReadStream (gRPC only: bidi streams). */
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
      // Each page as ReadMany, answered by its sequence number (read-stream.ts); lean codec as ReadMany.
      ReadStream: createReadStreamHandler(readPage, {
        pagesInFlightMax: readStreamPagesInFlightMax,
        routerPagesInFlightMax: routerReadStreamPagesInFlightMax,
      }),
    },
  };
}
