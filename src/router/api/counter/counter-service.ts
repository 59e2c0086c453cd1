// CounterService: validate every input (G7), then hand off to the write and
// read paths and the kinds' paths. Nothing changes before the whole request
// has been validated. This file wires the handlers and holds the increments'
// (Increment, IncrementBatch, each IncrementStream batch); reads are in
// read-handlers.ts, the other kinds and Clear in kind-handlers.ts.
import {
  ErrorCode,
  TallyError,
  batchItemsMax,
  readStreamPagesInFlightMax,
  streamBatchesInFlightMax,
  type IncrementColumns,
  type LeanIncrementRequest,
} from '../../../wire/index.ts';
import { routerReadStreamPagesInFlightMax, routerStreamBatchesInFlightMax } from '../../../common/index.ts';
import { type AppliedBatch, type IncrementPath, columnsOf } from '../../write/index.ts';
import { type HeatTracker } from '../../sizing/index.ts';
import type { RouterMetrics } from '../../metrics/index.ts';
import { rejectReason, validateColumns, validateIncrement } from '../validation.ts';
import { grpcMethodsOf, handler, type UnaryHandlers } from '../handler.ts';
import { createIncrementStreamHandler } from './increment-stream.ts';
import { createReadStreamHandler } from './read-stream.ts';
import { createReadHandlers, type ReadDeps } from './read-handlers.ts';
import { createKindHandlers, type KindDeps } from './kind-handlers.ts';

/** What CounterService hands its calls to. */
export interface CounterServiceDeps extends ReadDeps, KindDeps {
  increments: IncrementPath;
  heat: HeatTracker;
  metrics: RouterMetrics;
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

type IncrementRpc = 'increment' | 'increment_batch' | 'increment_stream';

/** Exact totals of names, for return_total. */
type ReadExactTotals = (names: string[], consistency: 'EXACT') => Promise<readonly { total: bigint }[]>;

/** The increments' handlers: each call validated whole, applied, then counted in metrics and heat. */
export class IncrementHandlers {
  // Children bound once: a labels object per call costs a lookup by label values.
  private readonly latencyByRpc: Record<IncrementRpc, { startTimer(): () => void }>;

  constructor(
    private readonly deps: Pick<CounterServiceDeps, 'increments' | 'heat' | 'metrics' | 'onWritten'>,
    private readonly readTotals: ReadExactTotals,
  ) {
    const latency = deps.metrics.incrementLatency;
    this.latencyByRpc = {
      increment: latency.labels({ rpc: 'increment' }),
      increment_batch: latency.labels({ rpc: 'increment_batch' }),
      increment_stream: latency.labels({ rpc: 'increment_stream' }),
    };
  }

  /** Increment and IncrementBatch. */
  handlers() {
    return {
      // Decoded by the lean codec (common/counter-codec.ts, wired in build.ts): amounts as numbers or bigints.
      Increment: handler<LeanIncrementRequest, IncrementOutcome>(async (request, call) => {
        const batch = columnsOf([this.validated(1, () => validateIncrement(request))]);
        if (request.returnTotal === true) batch.returnTotals = [true];
        const [response] = await this.applyCounted(batch, 'increment', call);
        return response!;
      }),

      // Decoded into columns (withColumnDecoders, wired in build.ts).
      IncrementBatch: handler<IncrementColumns, { results: IncrementOutcome[] }>(async (request, call) => ({
        results: await this.incrementBatch(request, call, 'increment_batch'),
      })),
    };
  }

  /** IncrementBatch's whole body, shared with each batch of an IncrementStream. */
  async incrementBatch(
    batch: IncrementColumns,
    call: { readonly cancelled: boolean },
    rpc: 'increment_batch' | 'increment_stream',
  ): Promise<IncrementOutcome[]> {
    const count = batch.counters.length;
    this.validated(count, () => {
      if (count === 0) throw new TallyError(ErrorCode.invalidArgument, 'batch has no items');
      if (count > batchItemsMax)
        throw new TallyError(ErrorCode.resourceExhausted, `batch has ${count} items; the limit is ${batchItemsMax}`);
      validateColumns(batch);
    });
    return this.applyCounted(batch, rpc, call);
  }

  private validated<T>(count: number, validate: () => T): T {
    try {
      return validate();
    } catch (error) {
      this.deps.metrics.incrementsRejected.inc({ reason: rejectReason(error) }, count);
      throw error;
    }
  }

  private async applyCounted(
    batch: IncrementColumns,
    rpc: IncrementRpc,
    call: { readonly cancelled: boolean },
  ): Promise<IncrementOutcome[]> {
    const timer = this.latencyByRpc[rpc].startTimer();
    try {
      const applied = await this.deps.increments.applyColumns(batch, call).finally(() => this.markWritten(batch.counters));
      if (batch.returnTotals !== undefined) return this.withTotals(batch, applied.outcomes, batch.returnTotals);
      this.recordApplied(applied);
      // The outcomes have the response's shape: sent as they are.
      return applied.outcomes;
    } catch (error) {
      this.deps.metrics.incrementsRejected.inc({ reason: rejectReason(error) }, batch.counters.length);
      throw error;
    } finally {
      timer();
    }
  }

  // Once per run of one counter's items: a batch names few counters, many times each.
  private markWritten(counters: readonly string[]): void {
    const onWritten = this.deps.onWritten;
    if (onWritten === undefined) return;
    let last = '';
    for (const counter of counters) {
      if (counter === last) continue;
      last = counter;
      onWritten(last);
    }
  }

  /**
   * One metric update per call, and heat once per counter of the call (per
   * shard only for a counter whose increments went to several): typed
   * arrays by the call's distinct names, no object per item.
   */
  private recordApplied({ outcomes, names, places }: AppliedBatch): void {
    const { metrics, heat } = this.deps;
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
    if (mixed) this.recordMixedShards(outcomes, names, places, shards);
  }

  // A counter with several shards, its increments spread over them: heat per shard, for skew.
  private recordMixedShards(
    outcomes: readonly IncrementOutcome[],
    names: readonly string[],
    places: readonly number[] | undefined,
    shards: Int32Array,
  ): void {
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
        if (count !== undefined) this.deps.heat.record(names[place]!, count, shardIndex);
      }
  }

  /**
   * return_total: each asking item's counter read EXACT after the whole call
   * was acknowledged, so its total includes it (G3). A failed read leaves
   * the total out instead of failing the call: the increments stand, and a
   * retry without a key would count them twice.
   */
  private async withTotals(
    batch: IncrementColumns,
    outcomes: IncrementOutcome[],
    totalWanted: readonly boolean[],
  ): Promise<IncrementOutcome[]> {
    const names = [...new Set(batch.counters.filter((_, index) => totalWanted[index] === true))];
    let totals: Map<string, bigint>;
    try {
      const read = await this.readTotals(names, 'EXACT');
      totals = new Map(read.map((value, index) => [names[index]!, value.total]));
    } catch {
      return outcomes;
    }
    return outcomes.map((outcome, index) => {
      const total = totalWanted[index] === true ? totals.get(batch.counters[index]!) : undefined;
      return total === undefined ? outcome : { applied: outcome.applied, shard: outcome.shard, total };
    });
  }
}

export function createCounterService(deps: CounterServiceDeps) {
  const reads = createReadHandlers(deps);
  const increments = new IncrementHandlers(deps, reads.readTotals);
  const handlers = {
    ...increments.handlers(),
    ...reads.handlers,
    ...createKindHandlers(deps, reads.timedRead),
  } satisfies UnaryHandlers;

  return {
    handlers,
    /** The gRPC service: every unary handler, IncrementStream and ReadStream (gRPC only: bidi streams). */
    grpc: {
      ...grpcMethodsOf(handlers),
      // Each batch as IncrementBatch, answered by its sequence number (increment-stream.ts); lean codec as IncrementBatch.
      IncrementStream: createIncrementStreamHandler(
        (request, call) => increments.incrementBatch(request, call, 'increment_stream'),
        { batchesInFlightMax: streamBatchesInFlightMax, routerBatchesInFlightMax: routerStreamBatchesInFlightMax },
        {
          onRefused: (itemCount) => deps.metrics.incrementsRejected.inc({ reason: ErrorCode.resourceExhausted }, itemCount),
          onInFlight: (batches) => deps.metrics.streamBatchesInFlight.set(batches),
        },
      ),
      // Each page as ReadMany, answered by its sequence number (read-stream.ts); lean codec as ReadMany.
      ReadStream: createReadStreamHandler(reads.readPage, {
        pagesInFlightMax: readStreamPagesInFlightMax,
        routerPagesInFlightMax: routerReadStreamPagesInFlightMax,
      }),
    },
  };
}
