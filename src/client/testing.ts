// @tally/client/testing: an in-memory stand-in for TallyClient in a service's
// unit tests. The same method signatures and the same errors as a real
// cluster for the calls it keeps (validation by the router's own checks,
// duplicate keys, NOT_FOUND, OUT_OF_RANGE totals), asserted by one contract
// test run against both. No network, no durability, one process.
import { EventEmitter } from 'node:events';
import {
  ErrorCode,
  TallyError,
  grpcStatusOf,
  reasonOf,
  batchItemsMax,
  INT64_MAX,
  INT64_MIN,
  listPageSizeMax,
  readManyCountersMax,
  shardsPerCounterMax,
  validateAmount,
  validateCounterName,
  validateCounterPrefix,
  validateIdempotencyKey,
} from '../wire/index.ts';
import type { TallyClient, TallyClientEvents } from './client.ts';
import type { ConnectionState } from './connection/connection-state.ts';
import { refuseUnsafeNumber, toWireAmount, toWireKey } from './wire.ts';
import type {
  CallSettings,
  ClearResult,
  Consistency,
  ReadOptions,
  ReadScope,
  CounterDeletion,
  CounterDescription,
  CounterPage,
  IncrementItem,
  IncrementOptions,
  IncrementResult,
  Int64Input,
  ListCountersOptions,
  ListedCounter,
  ReadResult,
} from './types.ts';

/** The calls the fake keeps: a service's everyday surface of TallyClient. */
export type FakeTallyClientApi = Pick<
  TallyClient,
  | 'increment'
  | 'incrementBatch'
  | 'read'
  | 'readMany'
  | 'describe'
  | 'setShards'
  | 'clear'
  | 'deleteCounter'
  | 'listCounters'
  | 'allCounters'
  | 'ready'
  | 'close'
  | 'state'
>;

interface FakeCounter {
  total: bigint;
  shards: number;
  generation: number;
  createdUnixMs: number;
  /** Keys seen, each with the shard its increment reported. */
  keys: Map<string, number>;
  clearKeys: Set<string>;
}

/** Options of createFakeTallyClient. */
export interface FakeTallyClientOptions {
  /** The shard count of a counter made by its first increment (default 1, as a router's). */
  initialShards?: number;
  /** The clock of createdUnixMs and asOfUnixMs (default Date.now). */
  nowUnixMs?: () => number;
}

/**
 * An in-memory TallyClient for tests: increments, reads, batches, shard
 * counts, clear, delete and listing, with the router's validation and error
 * codes. Keys deduplicate per counter for the fake's lifetime (a cluster's
 * window is 24 h). A call after close() fails as on a real client.
 */
export class FakeTallyClient extends EventEmitter<TallyClientEvents> implements FakeTallyClientApi {
  private readonly counters = new Map<string, FakeCounter>();
  private readonly initialShards: number;
  private readonly nowUnixMs: () => number;
  private closed = false;

  constructor(options: FakeTallyClientOptions = {}) {
    super();
    this.initialShards = options.initialShards ?? 1;
    // eslint-disable-next-line no-restricted-properties -- a stored timestamp, as the router's
    this.nowUnixMs = options.nowUnixMs ?? (() => Date.now());
  }

  get state(): ConnectionState {
    return this.closed ? 'closed' : 'ready';
  }

  async ready(_settings?: CallSettings): Promise<void> {
    this.refuseClosed();
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.emit('state', 'closed');
  }

  async increment(counter: string, amount: Int64Input, options?: IncrementOptions): Promise<IncrementResult> {
    const [result] = await this.applyAll([{ counter, amount, idempotencyKey: options?.idempotencyKey }], -1, options);
    if (options?.returnTotal !== true) return result!;
    return {
      ...result!,
      total: this.readOne(
        validated(() => validateCounterName(counter)),
        'exact',
      ).total,
    };
  }

  async incrementBatch(items: readonly IncrementItem[], settings?: CallSettings): Promise<IncrementResult[]> {
    if (items.length === 0) throw fail(ErrorCode.invalidArgument, 'batch has no items');
    if (items.length > batchItemsMax)
      throw fail(ErrorCode.resourceExhausted, `batch has ${items.length} items; the limit is ${batchItemsMax}`);
    return this.applyAll(items, 0, settings);
  }

  async read(counter: string, options?: ReadOptions): Promise<ReadResult> {
    this.before(options);
    return this.readOne(
      validated(() => validateCounterName(counter)),
      options?.consistency,
      options?.scope,
    );
  }

  async readMany(counters: readonly string[], options?: ReadOptions): Promise<ReadResult[]> {
    this.before(options);
    if (counters.length === 0) throw fail(ErrorCode.invalidArgument, 'no counters named');
    if (counters.length > readManyCountersMax)
      throw fail(ErrorCode.resourceExhausted, `ReadMany of ${counters.length} counters; the limit is ${readManyCountersMax}`);
    const names = counters.map((name, index) => validated(() => validateCounterName(name), `counter ${index}: `));
    return names.map((name) => this.readOne(name, options?.consistency, options?.scope));
  }

  async describe(counter: string, settings?: CallSettings): Promise<CounterDescription> {
    this.before(settings);
    const name = validated(() => validateCounterName(counter));
    const found = this.existing(name);
    return {
      counter: name,
      shards: found.shards,
      placements: Array.from({ length: found.shards }, (_, shard) => ({
        shard,
        shardId: shard + 1,
        pair: 0,
        primary: 'fake',
        follower: 'fake',
        epoch: 1,
      })),
      heatPerSec: 0,
      peakPerSec: 0,
      shardRates: new Array<number>(found.shards).fill(0),
      skew: 1,
      createdUnixMs: found.createdUnixMs,
      autoscale: true,
      kind: 'total',
      windowBucketMs: 0,
      windowRetentionMs: 0,
      ttlMs: 0,
      ttlFrom: 'none',
      idleMs: 0,
    };
  }

  async setShards(counter: string, shards: number, settings?: CallSettings): Promise<{ previousShards: number; shards: number }> {
    this.before(settings);
    const name = validated(() => validateCounterName(counter));
    if (!Number.isInteger(shards) || shards < 1 || shards > shardsPerCounterMax)
      throw fail(ErrorCode.invalidArgument, `shards must be 1..${shardsPerCounterMax}, got ${shards}`);
    const found = this.existing(name);
    // Shard sets only grow: old shards stay part of every sum.
    if (shards < found.shards) throw fail(ErrorCode.failedPrecondition, `${name} has ${found.shards} shards; a shard set only grows`);
    const previousShards = found.shards;
    found.shards = shards;
    return { previousShards, shards };
  }

  async clear(counter: string, options?: IncrementOptions): Promise<ClearResult> {
    this.before(options);
    const name = validated(() => validateCounterName(counter));
    const key = validated(() => validateIdempotencyKey(toWireKey(options?.idempotencyKey))).toString('hex');
    const found = this.existing(name);
    if (key !== '' && found.clearKeys.has(key))
      return { counter: name, generation: found.generation, applied: false, shards: found.shards, shardsPending: 0 };
    if (key !== '') found.clearKeys.add(key);
    found.total = 0n;
    found.generation++;
    return { counter: name, generation: found.generation, applied: true, shards: found.shards, shardsPending: 0 };
  }

  async deleteCounter(counter: string, settings?: CallSettings): Promise<CounterDeletion> {
    this.before(settings);
    const name = validated(() => validateCounterName(counter));
    const found = this.existing(name);
    this.counters.delete(name);
    return { counter: name, shards: found.shards, shardsPending: 0 };
  }

  async listCounters(options: ListCountersOptions = {}, settings?: CallSettings): Promise<CounterPage> {
    this.before(settings);
    const prefix = validated(() => validateCounterPrefix(options.prefix ?? ''));
    const pageSize = options.pageSize === undefined || options.pageSize === 0 ? 100 : options.pageSize;
    if (!Number.isInteger(pageSize) || pageSize < 0 || pageSize > listPageSizeMax)
      throw fail(ErrorCode.invalidArgument, `pageSize must be 0..${listPageSizeMax}, got ${pageSize}`);
    const after = options.pageToken === undefined || options.pageToken === '' ? undefined : decodeToken(options.pageToken);
    const names = [...this.counters.keys()]
      .filter((name) => name.startsWith(prefix) && (after === undefined || Buffer.compare(Buffer.from(name), after) > 0))
      .sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
    const page = names.slice(0, pageSize);
    const counters: ListedCounter[] = page.map((name) => ({ name, kind: 'total', shards: this.counters.get(name)!.shards, ttlMs: 0 }));
    const more = names.length > pageSize;
    return { counters, nextPageToken: more ? Buffer.from(page.at(-1)!).toString('base64url') : '' };
  }

  async *allCounters(options: Omit<ListCountersOptions, 'pageToken'> = {}, settings?: CallSettings): AsyncGenerator<ListedCounter> {
    let pageToken = '';
    do {
      const page = await this.listCounters({ ...options, pageToken }, settings);
      yield* page.counters;
      pageToken = page.nextPageToken;
    } while (pageToken !== '');
  }

  /** Every item checked before any applies (a bad one fails the whole call, naming its place), then each applied or found a duplicate. */
  private async applyAll(
    items: readonly IncrementItem[],
    firstIndex: number,
    settings: CallSettings | undefined,
  ): Promise<IncrementResult[]> {
    this.before(settings);
    const checked = items.map((item, offset) => {
      const where = firstIndex < 0 ? '' : `item ${firstIndex + offset}: `;
      // What the real client refuses before sending (no reason: no server saw it), then the router's checks.
      refuseUnsafeNumber(item.amount);
      toWireAmount(item.amount);
      return {
        counter: validated(() => validateCounterName(item.counter), where),
        amount: validated(() => validateAmount(typeof item.amount === 'number' ? item.amount : String(item.amount)), where),
        key: validated(() => validateIdempotencyKey(toWireKey(item.idempotencyKey)), where).toString('hex'),
      };
    });
    // Totals beyond int64 are refused before anything applies, as a node refuses the whole commit.
    const totals = new Map<string, bigint>();
    for (const item of checked) {
      if (item.key !== '' && this.counters.get(item.counter)?.keys.has(item.key)) continue;
      const total = (totals.get(item.counter) ?? this.counters.get(item.counter)?.total ?? 0n) + item.amount;
      if (total > INT64_MAX || total < INT64_MIN)
        throw fail(ErrorCode.outOfRange, `the total of ${item.counter} would pass int64 (${INT64_MIN}..${INT64_MAX})`);
      totals.set(item.counter, total);
    }
    return checked.map((item) => {
      const found = this.counterFor(item.counter);
      const seen = item.key === '' ? undefined : found.keys.get(item.key);
      if (seen !== undefined) return { applied: false, shard: seen };
      const shard = Math.floor(Math.random() * found.shards);
      if (item.key !== '') found.keys.set(item.key, shard);
      found.total += item.amount;
      return { applied: true, shard };
    });
  }

  /** The fake is one region alone (named ''): a global read is its own total, never exact, in one part. */
  private readOne(name: string, consistency: Consistency | undefined, scope?: ReadScope): ReadResult {
    const found = this.counters.get(name);
    const asOfUnixMs = this.nowUnixMs();
    const total = found?.total ?? 0n;
    return {
      counter: name,
      total,
      exact: consistency !== 'cached' && scope !== 'global',
      asOfUnixMs,
      stalenessMs: 0,
      shards: found?.shards ?? 0,
      ...(scope === 'global' ? { regions: [{ region: '', total, asOfUnixMs, stalenessMs: 0, home: true }] } : {}),
    };
  }

  private counterFor(name: string): FakeCounter {
    let found = this.counters.get(name);
    if (found === undefined) {
      found = {
        total: 0n,
        shards: this.initialShards,
        generation: 0,
        createdUnixMs: this.nowUnixMs(),
        keys: new Map(),
        clearKeys: new Set(),
      };
      this.counters.set(name, found);
    }
    return found;
  }

  private existing(name: string): FakeCounter {
    const found = this.counters.get(name);
    if (found === undefined) throw fail(ErrorCode.notFound, `no counter named ${name}`);
    return found;
  }

  private before(settings: CallSettings | undefined): void {
    this.refuseClosed();
    if (settings?.signal?.aborted === true)
      throw new TallyError(ErrorCode.cancelled, 'the call was aborted by its AbortSignal; a write may or may not have applied');
  }

  private refuseClosed(): void {
    if (this.closed) throw new TallyError(ErrorCode.failedPrecondition, 'the client is closed (close() was called): create a new one');
  }
}

/** A fake client for tests: see FakeTallyClient. */
export function createFakeTallyClient(options?: FakeTallyClientOptions): FakeTallyClient {
  return new FakeTallyClient(options);
}

/** As a router answers: the error's code and gRPC status, and NOT_APPLIED (a refusal changes nothing). */
function fail(code: ErrorCode, message: string): TallyError {
  return new TallyError(code, message, undefined, { reason: reasonOf(grpcStatusOf(code)) });
}

/** A check of the router's, its error as the router would send it (with its reason), prefixed with where. */
function validated<T>(check: () => T, where = ''): T {
  try {
    return check();
  } catch (error) {
    if (!(error instanceof TallyError)) throw error;
    throw fail(error.code, `${where}${error.message}`);
  }
}

function decodeToken(token: string): Buffer {
  const bytes = Buffer.from(token, 'base64url');
  if (bytes.length === 0 || bytes.toString('base64url') !== token)
    throw fail(ErrorCode.invalidArgument, 'page token is not one this listing gave');
  return bytes;
}
