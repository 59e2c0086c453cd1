// The typed Tally client: one channel to the router, one method per RPC, each
// with a deadline. Amounts and totals are bigint end to end. A failed call
// rejects with a TallyError carrying the gRPC status code.
import { EventEmitter } from 'node:events';
import { credentials } from '@grpc/grpc-js';
// Specific files, never ../common/index.ts: that re-exports server code
// (pino, prom-client, health, reflection) the client package must not carry.
import {
  monotonicNowMs,
  ErrorCode,
  TallyError,
  ErrorReason,
  validateAmount,
  validateCounterName,
  validateCounterPrefix,
  validateIdempotencyKey,
} from '../wire/index.ts';
import type { LeanReadManyResponse } from '../wire/index.ts';
import type { counterV1 } from './counter-proto.ts';
import { IncrementCoalescer, type CoalescedItem, type ReadPageRequest } from './streams/index.ts';
import {
  CallAuth,
  ConnectionWatch,
  RouterSet,
  CallRunner,
  aborted,
  classOfWrite,
  adminMethods,
  counterMethods,
  refuseTokenInTheClear,
  routerAddressesOf,
  throwIfAborted,
  type Rpc,
} from './connection/index.ts';
// The public type from its own file: the packed declarations then reach no further than it.
import type { ConnectionState } from './connection/connection-state.ts';

import {
  fromClusterStatusResponse,
  fromDescribeResponse,
  fromReadResponse,
  fromRebuildResponse,
  fromReconcileResponse,
  pairStatusOf,
  refuseUnsafeNumber,
  toWireAmount,
  toWireKey,
  toWireMember,
  toWireTtl,
} from './wire.ts';
import type {
  TallyClientOptions,
  Int64Input,
  CallSettings,
  IncrementItem,
  IncrementOptions,
  IncrementResult,
  Consistency,
  ReadOptions,
  ReadScope,
  ReadResult,
  CounterDescription,
  WindowReadResult,
  DistinctCount,
  MemberId,
  RebuildReport,
  ConfigureOptions,
  HotCounter,
  ListedCounter,
  ListCountersOptions,
  CounterPage,
  ClearResult,
  CounterDeletion,
  NodeReplacement,
  ReconcileReport,
  PairStatus,
  ClusterStatus,
} from './types.ts';

const increment: Rpc<counterV1.IncrementRequest, counterV1.IncrementResponse__Output> = {
  service: 'counter',
  method: counterMethods.Increment,
};
const incrementBatch: Rpc<counterV1.IncrementBatchRequest, counterV1.IncrementBatchResponse__Output> = {
  service: 'counter',
  method: counterMethods.IncrementBatch,
};

/** The events of a TallyClient: 'state' with the connection state each time it changes. */
export interface TallyClientEvents {
  state: [state: ConnectionState];
}

export class TallyClient extends EventEmitter<TallyClientEvents> {
  private readonly routers: RouterSet;
  private readonly connection: ConnectionWatch;
  private readonly addresses: readonly string[];
  /** Every call's attempts, by its class's resend rule, within its deadline. */
  private readonly calls: CallRunner;
  private readonly coalescer: IncrementCoalescer | undefined;
  /** incrementBatch() sends each call as a batch on the router's IncrementStream (incrementBatchOnStream). */
  private readonly batchesOnStream: boolean;
  /** readMany() sends a call made while another is in flight as a page on the router's ReadStream (readStream). */
  private readonly pagesOnStream: boolean;
  private readManyInFlight = 0;
  private closed = false;

  constructor(options: TallyClientOptions = {}) {
    super();
    const addresses = routerAddressesOf(options, process.env);
    const auth = new CallAuth(options.token, options.credentials);
    for (const address of addresses) refuseTokenInTheClear(address, { token: auth.carriesToken ? 'given' : undefined, tls: options.tls });
    const channelCredentials =
      options.tls === undefined
        ? credentials.createInsecure()
        : credentials.createSsl(options.tls.ca, options.tls.key ?? null, options.tls.cert ?? null);
    this.addresses = addresses;
    this.routers = new RouterSet(addresses, channelCredentials, auth, options.channelOptions);
    this.connection = new ConnectionWatch(
      this.routers.routers.map((router) => router.channel),
      (state) => this.emit('state', state),
    );
    // Following the channels costs a watcher each: only once someone listens.
    (this as EventEmitter).on('newListener', (event: string | symbol) => {
      if (event === 'state') this.connection.start(false);
    });
    this.calls = new CallRunner(this.routers, {
      deadlineMs: options.deadlineMs ?? 5_000,
      attemptTimeoutMs: options.attemptTimeoutMs ?? 2_000,
      attemptsMax: options.attemptsMax ?? 12,
    });
    this.batchesOnStream = options.incrementBatchOnStream === true;
    this.pagesOnStream = options.readStream !== false;
    this.coalescer =
      options.coalesce !== true
        ? undefined
        : new IncrementCoalescer(
            {
              // One attempt each: the coalescer decides what goes again, by the same rule.
              increment: (item, deadline) =>
                this.routers.attempt(classOfWrite(item.idempotencyKey.length > 0), increment, item, deadline, new Set()),
              incrementBatch: (items, deadline) => {
                const callClass = classOfWrite(items.every((item) => item.idempotencyKey.length > 0));
                return options.incrementStream === false
                  ? this.routers.attempt(callClass, incrementBatch, { items }, deadline, new Set())
                  : this.routers.attemptStreamBatch(callClass, items, deadline, new Set());
              },
            },
            {
              attemptsMax: this.calls.attemptsMax,
              attemptTimeoutMs: this.calls.attemptTimeoutMs,
              retryAfterMs: (failure, attempt, deadline, keyed) => this.calls.retryAfterMs(failure, attempt, deadline, keyed),
            },
          );
  }

  /**
   * Adds amount to counter. Without an idempotencyKey the client makes one
   * and retries UNAVAILABLE and DEADLINE_EXCEEDED with the same key (jittered
   * backoff, bounded attempts, within the deadline), so the increment applies
   * at most once. Pass idempotencyKey: null for an unkeyed, unretried call.
   * With coalesce: true (off by default) concurrent calls share
   * IncrementBatch calls; bad input is refused here, before it is queued.
   * An amount is a bigint, a safe-integer number or a decimal string: a
   * number past 2^53 - 1 is refused (pass a bigint).
   */
  async increment(counter: string, amount: Int64Input, options?: IncrementOptions): Promise<IncrementResult> {
    if (this.coalescer !== undefined && options?.returnTotal !== true) {
      if (this.closed) throw closedError();
      throwIfAborted(options?.signal);
      refuseUnsafeNumber(amount);
      // The router's checks, made here: one bad item must not fail a batch it shares.
      const item: CoalescedItem = {
        counter: validateCounterName(counter),
        amount: toWireAmount(validateAmount(amount)),
        idempotencyKey: validateIdempotencyKey(toWireKey(options?.idempotencyKey)),
      };
      return this.coalescer.add(item, monotonicNowMs() + (options?.deadlineMs ?? this.calls.deadlineMs));
    }
    const idempotencyKey = toWireKey(options?.idempotencyKey);
    const request: counterV1.IncrementRequest = {
      counter,
      amount: toWireAmount(amount),
      idempotencyKey,
      ...(options?.returnTotal === true ? { returnTotal: true } : {}),
    };
    const response = await this.calls.write(counterMethods.Increment, request, idempotencyKey.length > 0, options);
    return {
      applied: response.applied,
      shard: response.shard,
      ...(response.total === undefined || response.total === null ? {} : { total: BigInt(response.total) }),
    };
  }

  /**
   * Many increments in one call; keys as for increment, per item. Retried
   * only when every item is keyed. With incrementBatchOnStream, each call is
   * a batch on the router's IncrementStream (the same answers and retries).
   */
  async incrementBatch(items: readonly IncrementItem[], settings?: CallSettings): Promise<IncrementResult[]> {
    // Copied now: the caller may change its items once this returns, before the call is sent.
    const wireItems = items.map(wireItemOf);
    const keyed = wireItems.length > 0 && wireItems.every((item) => item.idempotencyKey.length > 0);
    const response = this.batchesOnStream
      ? await this.calls.untilWritten(keyed, settings, (attemptDeadline) =>
          this.routers.attemptStreamBatch(classOfWrite(keyed), wireItems, attemptDeadline, new Set()),
        )
      : await this.calls.write(counterMethods.IncrementBatch, { items: wireItems }, keyed, settings);
    return resultsOf(response.results);
  }

  async read(counter: string, options?: ReadOptions): Promise<ReadResult> {
    const request: counterV1.ReadRequest = {
      counter,
      consistency: options?.consistency === 'cached' ? 'CACHED' : 'EXACT',
      ...(options?.scope === 'global' ? { scope: 'SCOPE_GLOBAL' as const } : {}),
    };
    return fromReadResponse(await this.calls.read(counterMethods.Read, request, options));
  }

  async readMany(counters: readonly string[], options?: ReadOptions): Promise<ReadResult[]> {
    const request: ReadPageRequest = {
      counters: [...counters],
      consistency: options?.consistency === 'cached' ? 'CACHED' : 'EXACT',
      ...(options?.scope === 'global' ? { scope: 'SCOPE_GLOBAL' as const } : {}),
    };
    this.readManyInFlight++;
    try {
      // Overlapping pages share one stream: a message on it costs both sides far less than a unary call.
      const response =
        this.pagesOnStream && this.readManyInFlight > 1
          ? await this.calls.streamRead(request, options)
          : // Decoded by the lean codec (counter-proto.ts): int64s as numbers or bigints, not the generated type's strings.
            ((await this.calls.read(counterMethods.ReadMany, request, options)) as unknown as LeanReadManyResponse);
      return response.values.map(fromReadResponse);
    } finally {
      this.readManyInFlight--;
    }
  }

  async describe(counter: string, settings?: CallSettings): Promise<CounterDescription> {
    return fromDescribeResponse(await this.calls.admin(adminMethods.Describe, { counter }, settings));
  }

  /**
   * Per-counter settings: heat-driven growth on or off, a total counter's
   * time window (creating the counter if absent), or a new membership
   * counter's partition count. Returns the counter's description.
   */
  async configure(counter: string, options: ConfigureOptions, settings?: CallSettings): Promise<CounterDescription> {
    const autoscale = options.autoscale === undefined ? 'AUTOSCALE_UNCHANGED' : options.autoscale ? 'AUTOSCALE_ON' : 'AUTOSCALE_OFF';
    const window =
      options.window === undefined ? null : { bucketMs: String(options.window.bucketMs), retentionMs: String(options.window.retentionMs) };
    const ttl = options.ttlMs === undefined ? null : toWireTtl(options.ttlMs);
    const request: counterV1.ConfigureRequest = {
      counter,
      autoscale,
      window,
      membershipPartitions: options.membershipPartitions ?? 0,
      ttl,
    };
    return fromDescribeResponse(await this.calls.admin(adminMethods.Configure, request, settings));
  }

  /**
   * Adds members (strings as UTF-8, or bytes) to a distinct counter, created
   * on first use. Adding is idempotent, so the call is retried on
   * UNAVAILABLE and DEADLINE_EXCEEDED within the deadline.
   */
  async addDistinct(
    counter: string,
    members: readonly (string | Uint8Array)[],
    settings?: CallSettings,
  ): Promise<{ registersChanged: number }> {
    const request: counterV1.AddDistinctRequest = {
      counter,
      members: members.map((member) => (typeof member === 'string' ? Buffer.from(member, 'utf8') : Buffer.from(member))),
    };
    const response = await this.calls.write(counterMethods.AddDistinct, request, true, settings);
    return { registersChanged: response.registersChanged };
  }

  /** The estimated number of distinct members in the union of the named distinct counters. */
  /** `scope: 'global'`: the union over every region (docs/regions.md). */
  async countDistinct(counters: string | readonly string[], settings?: CallSettings & { scope?: ReadScope }): Promise<DistinctCount> {
    const request: counterV1.CountDistinctRequest = {
      counters: typeof counters === 'string' ? [counters] : [...counters],
      ...(settings?.scope === 'global' ? { scope: 'SCOPE_GLOBAL' as const } : {}),
    };
    const response = await this.calls.read(counterMethods.CountDistinct, request, settings);
    return { estimate: Number(response.estimate), standardError: response.standardError, shards: response.shards };
  }

  /** The sum of a windowed counter's increments over the last lastMs (see WindowReadResult for the buckets used). */
  async readWindow(counter: string, lastMs: number, options?: CallSettings & { consistency?: Consistency }): Promise<WindowReadResult> {
    const request: counterV1.ReadWindowRequest = {
      counter,
      lastMs: String(lastMs),
      consistency: options?.consistency === 'cached' ? 'CACHED' : 'EXACT',
    };
    const response = await this.calls.read(counterMethods.ReadWindow, request, options);
    return {
      counter: response.counter,
      total: BigInt(response.total),
      exact: response.exact,
      fromUnixMs: Number(response.fromUnixMs),
      toUnixMs: Number(response.toUnixMs),
      bucketMs: Number(response.bucketMs),
      buckets: response.buckets,
      asOfUnixMs: Number(response.asOfUnixMs),
      stalenessMs: Number(response.stalenessMs),
    };
  }

  /**
   * Makes member present (like) or absent (unlike) in a membership counter,
   * created on first use. changed says whether this call flipped it; count is
   * the counter's exact count after it (undefined when a pair of the counter
   * could not be read for it: the flip itself is done). Setting a state is idempotent, so the
   * call is retried on UNAVAILABLE; a retried call that had already applied
   * reports changed=false.
   */
  async setMember(
    counter: string,
    member: MemberId,
    present: boolean,
    settings?: CallSettings,
  ): Promise<{ changed: boolean; count: bigint | undefined }> {
    const request: counterV1.SetMemberRequest = { counter, member: toWireMember(member), present };
    const response = await this.calls.write(counterMethods.SetMember, request, true, settings);
    // undefined: the flip is done, but the count could not be read right then.
    return { changed: response.changed, count: response.countUnavailable === true ? undefined : BigInt(response.count) };
  }

  /** Whether each member is present in a membership counter. */
  async isMember(counter: string, members: readonly MemberId[], settings?: CallSettings): Promise<boolean[]> {
    const request: counterV1.IsMemberRequest = { counter, members: members.map(toWireMember) };
    return (await this.calls.read(counterMethods.IsMember, request, settings)).present;
  }

  /** Recomputes a membership counter's count from its bitmaps; repairs drift only with repair: true. */
  async rebuild(counter: string, options?: CallSettings & { repair?: boolean }): Promise<RebuildReport> {
    const response = await this.calls.admin(
      adminMethods.Rebuild,
      { counter, repair: options?.repair === true },
      { deadlineMs: 60_000, ...options },
    );
    return fromRebuildResponse(response);
  }

  /** The hottest counters now, hottest first, and how many counters have measurable heat. */
  async hot(limit = 20, settings?: CallSettings): Promise<{ counters: HotCounter[]; tracked: number }> {
    const response = await this.calls.admin(adminMethods.Hot, { limit }, settings);
    return { counters: response.counters, tracked: Number(response.tracked) };
  }

  /**
   * One page of the counters whose names start with prefix, in byte order
   * of their UTF-8 names (AdminService: needs the admin token when tokens
   * are set). Pages chained by nextPageToken see every counter that existed
   * for the whole scan once and no name twice; allCounters does the chaining.
   */
  async listCounters(options: ListCountersOptions = {}, settings?: CallSettings): Promise<CounterPage> {
    const pageSize = options.pageSize ?? 0;
    // The router bounds it; here only what the wire's uint32 cannot carry is refused.
    if (!Number.isInteger(pageSize) || pageSize < 0 || pageSize > 0xffffffff)
      throw new TallyError(ErrorCode.invalidArgument, `pageSize must be a whole number, got ${pageSize}`);
    // A lone surrogate would reach the router as U+FFFD and list other names: refused here.
    const prefix = validateCounterPrefix(options.prefix ?? '');
    const request: counterV1.ListCountersRequest = { prefix, pageToken: options.pageToken ?? '', pageSize };
    const response = await this.calls.admin(adminMethods.ListCounters, request, settings);
    return {
      counters: response.counters.map((counter) => ({
        name: counter.name,
        kind: counter.kind,
        shards: counter.shards,
        ttlMs: Number(counter.ttlMs),
      })),
      nextPageToken: response.nextPageToken,
    };
  }

  /**
   * Every counter under prefix, page after page (pageSize each, default
   * 100), in byte order: `for await (const counter of client.allCounters({ prefix: 'post:' }))`.
   * Each page is one call with its own deadline; breaking out stops the calls.
   */
  async *allCounters(options: Omit<ListCountersOptions, 'pageToken'> = {}, settings?: CallSettings): AsyncGenerator<ListedCounter> {
    let pageToken = '';
    do {
      const page = await this.listCounters({ ...options, pageToken }, settings);
      yield* page.counters;
      pageToken = page.nextPageToken;
    } while (pageToken !== '');
  }

  async setShards(counter: string, shards: number, settings?: CallSettings): Promise<{ previousShards: number; shards: number }> {
    const response = await this.calls.admin(adminMethods.SetShards, { counter, shards }, settings);
    return { previousShards: response.previousShards, shards: response.shards };
  }

  async clusterStatus(settings?: CallSettings): Promise<ClusterStatus> {
    const response = await this.calls.admin(adminMethods.ClusterStatus, {}, settings);
    return fromClusterStatusResponse(response);
  }

  /**
   * Registers a new node pair (both nodes running, empty): new counters and
   * growth place shards on it from now on; nothing moves. Admin only.
   */
  async addPair(primary: string, follower: string, settings?: CallSettings): Promise<PairStatus> {
    const response = await this.calls.admin(adminMethods.AddPair, { primary, follower }, settings);
    return pairStatusOf(response.pair!);
  }

  /** Stops (undrain: resumes) placing new shards on a pair; its shards stay and serve. Admin only. */
  async drainPair(pair: number, options: { undrain?: boolean } = {}, settings?: CallSettings): Promise<PairStatus> {
    const response = await this.calls.admin(adminMethods.DrainPair, { pair, undrain: options.undrain ?? false }, settings);
    return pairStatusOf(response.pair!);
  }

  /**
   * Moves a pair's follower slot from address to newAddress (a lost disk or
   * machine). The new node is filled by snapshot install; the pair returns
   * to sync by itself. A primary's slot cannot move (fail it over first).
   */
  async replaceNode(address: string, newAddress: string, settings?: CallSettings): Promise<NodeReplacement> {
    const response = await this.calls.admin(adminMethods.ReplaceNode, { address, newAddress }, settings);
    return { pair: response.pair, primary: response.primary, follower: response.follower, epoch: Number(response.epoch) };
  }

  /**
   * Makes a counter of any kind read 0 from a cut point on: every increment
   * (member, distinct member) acknowledged before clear was called is
   * cleared away, every one made after it returns is counted, and one
   * racing it is counted at most once. Keyed like increment: without an
   * idempotencyKey the client makes one and retries UNAVAILABLE and
   * DEADLINE_EXCEEDED with it, so a retry never clears increments made
   * after the first attempt applied; null sends none and never retries.
   * NOT_FOUND when there is no such counter.
   */
  async clear(counter: string, options?: IncrementOptions): Promise<ClearResult> {
    const idempotencyKey = toWireKey(options?.idempotencyKey);
    const response = await this.calls.write(counterMethods.Clear, { counter, idempotencyKey }, idempotencyKey.length > 0, options);
    return {
      counter: response.counter,
      generation: Number(response.generation),
      applied: response.applied,
      shards: response.shards,
      shardsPending: response.shardsPending,
    };
  }

  /**
   * Deletes a counter (admin). It leaves the directory at once: reads answer
   * 0 as for a counter never written, and the next write of the name creates
   * a new counter with new shards. The nodes free the shards' state as they
   * confirm (see shardsPending). NOT_FOUND when there is no such counter.
   * Not retried: a retry after an unknown outcome may find a new counter of
   * the same name and delete that.
   */
  async deleteCounter(counter: string, settings?: CallSettings): Promise<CounterDeletion> {
    const response = await this.calls.admin(adminMethods.DeleteCounter, { counter }, settings);
    return { counter: response.counter, shards: response.shards, shardsPending: response.shardsPending };
  }

  /** Recomputes shards from their logs and reports drift (all shards, or one counter's). Never repairs. */
  async reconcile(counter?: string, settings?: CallSettings): Promise<ReconcileReport> {
    const response = await this.calls.admin(adminMethods.Reconcile, { counter: counter ?? '' }, { deadlineMs: 60_000, ...settings });
    return fromReconcileResponse(response);
  }

  /**
   * The connection state over all routers: 'ready' while any is connected,
   * 'connecting', 'transient_failure' (every router failing), 'idle' (nothing
   * asked yet), 'closed'. Listen with on('state', (state) => ...).
   */
  get state(): ConnectionState {
    return this.connection.state;
  }

  /**
   * Resolves once a router is connected, connecting now if nothing has yet;
   * rejects UNAVAILABLE when none is by the deadline (default: the client's
   * deadlineMs), naming each router and what to check.
   */
  async ready(settings?: CallSettings): Promise<void> {
    if (this.closed) throw closedError();
    throwIfAborted(settings?.signal);
    const waitMs = settings?.deadlineMs ?? this.calls.deadlineMs;
    this.connection.start(true);
    if (this.connection.state === 'ready') return;
    await new Promise<void>((resolve, reject) => {
      const finish = (error?: Error): void => {
        clearTimeout(timer);
        this.off('state', onState);
        settings?.signal?.removeEventListener('abort', onAbort);
        if (error === undefined) resolve();
        else reject(error);
      };
      const onState = (state: ConnectionState): void => {
        if (state === 'ready') finish();
        else if (state === 'closed') finish(closedError());
      };
      const onAbort = (): void => finish(aborted(settings!.signal!));
      const timer = setTimeout(() => finish(this.notReadyError(waitMs)), waitMs);
      this.on('state', onState);
      settings?.signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  private notReadyError(waitMs: number): TallyError {
    const state = this.connection.state;
    const why = state === 'transient_failure' ? 'no connection (refused, unreachable or failing TLS)' : `still ${state}`;
    const where = this.addresses.length === 1 ? `a router at ${this.addresses[0]}` : `any of the routers ${this.addresses.join(', ')}`;
    return new TallyError(
      ErrorCode.unavailable,
      `cannot reach ${where}: ${why} after ${waitMs} ms (is the cluster running? --router / TALLY_ROUTER)`,
      undefined,
      { reason: ErrorReason.notApplied },
    );
  }

  /** Closes every connection; a call after this rejects with code 'failed_precondition' ("the client is closed"). */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.coalescer?.close();
    this.routers.close();
    this.connection.close();
  }
}

function wireItemOf(item: IncrementItem): CoalescedItem {
  return { counter: item.counter, amount: toWireAmount(item.amount), idempotencyKey: toWireKey(item.idempotencyKey) };
}

/**
 * A batch's answers as the client returns them: the decoded results are
 * already { applied, shard } (the lean codec's objects, this call's own),
 * so they are returned as they are unless one carries more.
 */
function resultsOf(results: readonly { applied: boolean; shard: number; total?: unknown }[]): IncrementResult[] {
  for (const result of results) if (result.total !== undefined) return results.map((one) => ({ applied: one.applied, shard: one.shard }));
  return results as IncrementResult[];
}

function closedError(): TallyError {
  return new TallyError(ErrorCode.failedPrecondition, 'the client is closed (close() was called): create a new one');
}
