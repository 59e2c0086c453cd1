// The counter directory in etcd, shared by several routers. Memory changes
// only by applying the watch, in revision order (this router's own changes
// too); every change is one etcd transaction conditioned on the revisions
// memory holds of the keys it read, and resolves once the watch has brought
// it back. It must never let a router write where another's exact read would
// miss it: growth is announced, acknowledged by every live router, then
// activated. See directory.ts for the contract.
//
// Keys, under the prefix:
//   counters/<name>          JSON StoredCounter (shards, growths, settings, recent clear keys)
//   pairs/<index>            JSON StoredPair (bigints as decimal strings)
//   shard-id-next            the next shard id never reserved, decimal: a router reserves a block of
//                            ids in one conditioned transaction and hands them out from memory
//   shard-tasks/<shardId>    JSON StoredTask: a drop or clear a node still owes
//   routers/<routerId>       presence, bound to the router's lease: JSON { seenRevision }
//
// Growth across routers: setShards writes the new shards with
// writableShardCount unchanged (announced: every exact read includes them,
// no write goes there); each router that applies an announcement writes
// its presence's seenRevision past it; the grower waits until every
// presence says so (a dead router's lease expires and its presence goes),
// then activates in a second transaction (writableShardCount rises, the
// growth is recorded). A growth a crashed grower left announced is
// activated by the next setShards of the counter, or by any router's
// periodic pass once it has been announced longer than the activation wait.
//
// A router whose lease keepalive has not succeeded for half the lease TTL,
// or whose watch is down, or whose watch has not brought back a presence
// write sent within the last lease TTL (it may lag behind etcd: see "Proof
// of currency" in etcd-presence.ts), is not fresh: its changes fail
// UNAVAILABLE and `fresh` tells the router to refuse writes and exact reads
// (others may have acted on a change it has not applied, their wait for its
// acknowledgement given up). It renews its lease only while its watch is
// connected, so a router that cannot follow the directory cannot hold
// growth back for longer than the TTL.
import assert from 'node:assert';
import type { ComparatorBuilder, Etcd3, IEvent, IKeyValue, IOptions, IRequestOp, ITxnResponse, Namespace } from 'etcd3';
import {
  ErrorCode,
  TallyError,
  clearKeysPerCounterMax,
  directoryChangeAttemptsMax,
  directoryWatchApplyTimeoutMs,
  etcdCallTimeoutMs,
  etcdRangePageKeysMax,
  etcdRetryDelayMs,
  etcdTxnBytesMax,
  etcdTxnOpsMax,
  etcdWatchReconnectMaxMs,
  etcdWatchReconnectMinMs,
  shardIdsPerReservation,
  newCountersPerCallMax,
  deadlineIn,
  monotonicNowMs,
  type Logger,
  type MonotonicClock,
  type WindowSetting,
} from '../../../common/index.ts';
import { choosePairs } from '../placement.ts';
import { ShardTaskTable } from '../shard-task-table.ts';
import {
  capWarnings,
  checkCreationCaps,
  checkDrainable,
  checkPairAddable,
  checkPlaceable,
  checkShardCountChange,
  checkShardsTotalCap,
  countersInOrder,
  missingCounters,
} from '../checks.ts';
import { snapshotCounterOf, snapshotFormat, snapshotPairOf, snapshotVersion, type DirectorySnapshot } from '../snapshot.ts';
import { PrefixWatch } from './watch.ts';
import { RouterPresence } from './presence.ts';
import {
  checkCounter,
  checkPair,
  checkTask,
  invalid,
  isCount,
  isObject,
  parseId,
  parseJson,
  type StoredCounter,
  type StoredPair,
  type StoredTask,
} from './values.ts';
import {
  defaultDirectoryLimits,
  nextPairState,
  type ClearOutcome,
  type CounterInfo,
  type CounterKind,
  type Directory,
  type DirectoryLimits,
  type ListedCounterRow,
  type NameRange,
  type PairAddresses,
  type PairInfo,
  type PairUpdate,
  type ShardTask,
} from '../contract.ts';

/**
 * Adds compares to a pair update's transaction (the supervisor election:
 * "this router still holds the supervisor key"), with txn.and(key, target,
 * '==', value). Keys are relative to the directory's prefix, as
 * client.namespace(prefix) sees them: e.g. txn.and('supervisor', 'Lease',
 * '==', leaseId). When a fence compare fails, updatePair fails
 * FAILED_PRECONDITION and changes nothing. May throw a TallyError to refuse
 * the update outright (e.g. not the supervisor now).
 */
export type PairUpdateFence = (txn: ComparatorBuilder) => void;

export interface EtcdDirectoryOptions {
  /** The caller's client: the directory never closes it (see etcdClientOptions). */
  client: Etcd3;
  /** Every key lives under it (--etcd-prefix, '/tally/'). */
  prefix: string;
  /** This router's id (--router-id): its presence key. */
  routerId: string;
  /** --pairs: registered when etcd holds none, else checked against etcd's; empty: etcd's are used. */
  pairs: readonly PairAddresses[];
  /** The clock of the data (createdMs, grownMs, clears); timeouts use the real one. */
  now?: () => number;
  /** Idle times of counters (lastWriteMonotonicMs): monotonicNowMs unless a test injects one. */
  monotonicNow?: MonotonicClock;
  limits?: DirectoryLimits;
  logger: Logger;
  /** --router-lease-ttl-ms: the presence lease (etcd leases are whole seconds; at least 1000). */
  leaseTtlMs: number;
  /** Compares every pair update must pass as well (see PairUpdateFence). */
  pairUpdateFence?: PairUpdateFence;
}

type HostPolicy = ReturnType<NonNullable<NonNullable<IOptions['faultHandling']>['host']>>;
/**
 * Calls straight through: with one etcd host a circuit breaker has no other
 * host to send calls to and only delays the return (etcd3's default opens
 * for 5 s after three failures: routers were fresh again ~4 s after etcd
 * came back; without it, within ~10 ms).
 */
const passThroughPolicy = {
  execute: <T>(call: (context: { signal: AbortSignal }) => PromiseLike<T> | T): Promise<T> =>
    Promise.resolve().then(() => call({ signal: new AbortController().signal })),
} as unknown as HostPolicy;

/**
 * etcd3 client options that suit the directory: gRPC reconnects at most a
 * second apart (its default backs off to two minutes, far past a lease TTL),
 * no circuit breaker in front of a single host, and no default deadline
 * (the directory sets its own on each call).
 */
export function etcdClientOptions(hosts: readonly string[], credentials?: IOptions['credentials']): IOptions {
  return {
    hosts: [...hosts],
    ...(credentials === undefined ? {} : { credentials }),
    grpcOptions: {
      'grpc.initial_reconnect_backoff_ms': 100,
      'grpc.max_reconnect_backoff_ms': 1_000,
      // A connection whose packets are silently dropped is noticed in seconds, not at TCP's
      // retransmission timeout (etcd refuses pings more often than every 5 s by default).
      'grpc.keepalive_time_ms': 10_000,
      'grpc.keepalive_timeout_ms': 3_000,
    },
    ...(hosts.length === 1 ? { faultHandling: { host: () => passThroughPolicy } } : {}),
  };
}

/** The first key after every key that starts with `prefix` (etcd's prefix range end). */
function prefixEnd(prefix: Buffer): Buffer {
  const end = Buffer.from(prefix);
  for (let index = end.length - 1; index >= 0; index--) {
    if (end[index]! < 0xff) {
      end[index]!++;
      return end.subarray(0, index + 1);
    }
  }
  // All 0xff: to the end of the keyspace.
  return Buffer.from([0]);
}

function storeError(error: unknown): TallyError {
  if (error instanceof TallyError) return error;
  // One line: grpc-js messages carry the transport's (TLS) error on the next.
  const message = (error instanceof Error ? error.message : String(error)).replace(/\s*\n\s*/g, ' ');
  if (message.includes('too many operations in txn request'))
    return new TallyError(
      ErrorCode.internal,
      `etcd refused a transaction as having too many operations: start etcd with --max-txn-ops ${etcdTxnOpsMax} or more (${message})`,
    );
  if (message.includes('request is too large'))
    return new TallyError(
      ErrorCode.resourceExhausted,
      `the change is larger than etcd takes in one request (--max-request-bytes): ${message}`,
    );
  return new TallyError(ErrorCode.unavailable, `the directory store (etcd) is unreachable: ${message}`);
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

// ---- Memory --------------------------------------------------------------

/** What memory keeps of a counter besides its CounterInfo. */
interface CounterRecord {
  createRevision: number;
  modRevision: number;
  clearKeys: readonly [string, number, number][];
  /** Real time this router first applied the counter with shards announced but not writable. */
  announcedSinceMs: number | undefined;
}

interface Waiter {
  ready: () => boolean;
  resolve: () => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout;
}

interface CreationRequest {
  names: string[];
  kind: CounterKind;
  partitions: number;
  attempts: number;
  resolve: () => void;
  reject: (error: Error) => void;
}

type Planned<T> = { done: T } | { read: string[]; ops: IRequestOp[]; result: () => T };
type CommitOutcome = 'committed' | 'changed' | 'fenced';

/** Runs tasks one at a time: this router's changes never race each other. */
class SerialLane {
  private tail: Promise<unknown> = Promise.resolve();
  run<T>(task: () => Promise<T>): Promise<T> {
    const result = this.tail.then(task);
    this.tail = result.catch(() => undefined);
    return result;
  }
}

/** Shared by every counter without recent keyed clears (nearly all): memory per counter stays small. */
const noClearKeys: readonly [string, number, number][] = Object.freeze([]);
export const counterKeyPrefix = 'counters/';
export const pairKeyPrefix = 'pairs/';
export const taskKeyPrefix = 'shard-tasks/';
const routerKeyPrefix = 'routers/';
export const shardIdNextKey = 'shard-id-next';

export class EtcdDirectory implements Directory {
  readonly warnings: string[] = [];
  private readonly client: Etcd3;
  private readonly ns: Namespace;
  private readonly prefix: string;
  private readonly prefixBytes: Buffer;
  private readonly routerId: string;
  private readonly now: () => number;
  private readonly monotonicNow: MonotonicClock;
  private readonly limits: DirectoryLimits;
  private readonly logger: Logger;
  private readonly leaseTtlMs: number;
  private readonly pairUpdateFence: PairUpdateFence | undefined;

  private readonly counters = new Map<string, CounterInfo>();
  private readonly records = new Map<string, CounterRecord>();
  /** Counters with announced shards not yet writable. */
  private readonly announced = new Set<string>();
  private readonly pairs: PairInfo[] = [];
  private readonly pairRevisions: number[] = [];
  /** Pairs seen before a lower index (not expected: pairs are added in order). */
  private readonly pendingPairs = new Map<number, { pair: PairInfo; modRevision: number }>();
  private readonly shardsPerPair: number[] = [];
  private totalShardCount = 0;
  private shardIdNext = 1;
  private shardIdNextRevision = 0;
  /** Shard ids this router reserved and has not handed out: [next, end). Lost at close, never reused. */
  private readonly reservedShardIds = { next: 0, end: 0 };
  private readonly shardTasks = new ShardTaskTable();
  private readonly taskRevisions = new Map<number, number>();
  /** Live routers (their presence keys) and the revision each has applied. */
  private readonly routers = new Map<string, { seenRevision: number; modRevision: number }>();
  private appliedRevision = 0;

  private readonly lane = new SerialLane();
  private creationQueue: CreationRequest[] = [];
  private creationScheduled = false;
  private readonly waiters = new Set<Waiter>();

  private watch: PrefixWatch | undefined;
  private watchDownSinceMs: number | undefined;
  private readonly presence: RouterPresence;
  /** The highest revision applied with a growth announced: this router's presence acknowledges it. */
  private ackWantedRevision = 0;
  /** The revision of the change being applied now (a deletion's, for forgetCounter). */
  private appliedRevisionInFlight = 0;
  private finishingGrowths = false;
  private closed = false;
  private readonly timers: NodeJS.Timeout[] = [];

  private constructor(options: EtcdDirectoryOptions) {
    this.client = options.client;
    this.prefix = options.prefix;
    this.prefixBytes = Buffer.from(options.prefix, 'utf8');
    this.ns = options.client.namespace(options.prefix);
    this.routerId = options.routerId;
    // eslint-disable-next-line no-restricted-properties -- the clock of stored data (creation, growth, clear times); the router passes a steady one
    this.now = options.now ?? Date.now;
    this.monotonicNow = options.monotonicNow ?? monotonicNowMs;
    this.limits = options.limits ?? defaultDirectoryLimits;
    this.logger = options.logger;
    this.leaseTtlMs = options.leaseTtlMs;
    this.pairUpdateFence = options.pairUpdateFence;
    this.presence = new RouterPresence({
      client: options.client,
      prefix: options.prefix,
      routerId: options.routerId,
      leaseTtlMs: options.leaseTtlMs,
      logger: options.logger,
      appliedRevision: () => this.appliedRevision,
      watchConnected: () => this.watch?.connected,
      watchStalled: (reason) => {
        this.logger.warn('the directory watch is not delivering: opening it again', { reason });
        this.watch?.reopen();
      },
    });
  }

  /**
   * Registers this router (lease and presence), reads the whole directory
   * at one revision, watches on from there, and reconciles --pairs with
   * etcd's. Resolves once the directory is fresh.
   */
  static async open(options: EtcdDirectoryOptions): Promise<EtcdDirectory> {
    if (options.prefix.length === 0) throw new TallyError(ErrorCode.invalidArgument, 'the etcd prefix must not be empty');
    if (options.routerId.length === 0 || options.routerId.includes('/'))
      throw new TallyError(ErrorCode.invalidArgument, `router id "${options.routerId}" must be non-empty and hold no "/"`);
    if (!Number.isSafeInteger(options.leaseTtlMs) || options.leaseTtlMs < 1_000)
      throw new TallyError(ErrorCode.invalidArgument, `the router lease TTL must be at least 1000 ms, got ${options.leaseTtlMs}`);
    assert(newCountersPerCallMax + 1 <= etcdTxnOpsMax, 'one call’s new counters must fit one etcd transaction');
    const directory = new EtcdDirectory(options);
    try {
      await directory.start(options.pairs);
    } catch (error) {
      await directory.close();
      throw storeError(error);
    }
    return directory;
  }

  private async start(configuredPairs: readonly PairAddresses[]): Promise<void> {
    // Presence first, then the read: a grower that does not see this router
    // yet announced before the read, so the read holds the announcement.
    // Kept alive from here: a large directory may take longer to read than the TTL.
    await this.presence.start();
    const revision = await this.load(true);
    this.watch = new PrefixWatch(
      this.client,
      {
        key: this.prefixBytes,
        rangeEnd: prefixEnd(this.prefixBytes),
        startRevision: revision + 1,
        reconnectMinMs: etcdWatchReconnectMinMs,
        reconnectMaxMs: etcdWatchReconnectMaxMs,
      },
      {
        events: (events) => this.applyEvents(events),
        connected: () => {
          if (this.watchDownSinceMs !== undefined)
            this.logger.info('directory watch connected again', {
              router: this.routerId,
              downMs: Math.round(monotonicNowMs() - this.watchDownSinceMs),
            });
          this.watchDownSinceMs = undefined;
          this.presence.renewSoon();
          this.settleWaiters();
        },
        disconnected: (error) => {
          // Once per outage: the watch retries every second while etcd is away.
          if (this.watchDownSinceMs !== undefined) return;
          this.watchDownSinceMs = monotonicNowMs();
          this.logger.warn('directory watch disconnected', { router: this.routerId, error: error.message });
        },
        compacted: (compactRevision) => void this.resync(compactRevision),
      },
    );
    this.watch.start();
    await this.waitUntil(() => this.watch!.connected, etcdCallTimeoutMs * 2, 'the directory watch to connect');
    this.timers.push(setInterval(() => void this.finishAnnouncedGrowths(), this.leaseTtlMs));
    for (const timer of this.timers) timer.unref();
    // The read is this router's first acknowledgement: it has seen every announcement up to it.
    this.presence.acknowledge(revision);
    await this.reconcilePairs(configuredPairs);
    this.warnings.push(...capWarnings({ counters: this.counters.size, shards: this.totalShardCount }, this.limits));
  }

  // ---- Reads (memory) ----------------------------------------------------

  get(name: string): CounterInfo | undefined {
    return this.counters.get(name);
  }

  liveCounters(): IterableIterator<CounterInfo> {
    return this.counters.values();
  }

  pendingShardTasks(): ShardTask[] {
    return this.shardTasks.all();
  }

  /** See ShardTaskTable.forRound. */
  shardTasksForRound(perPairMax: number, skipPair: (pairIndex: number) => boolean): ShardTask[] {
    return this.shardTasks.forRound(perPairMax, skipPair, this.pairs.length);
  }

  shardTask(shardId: number): ShardTask | undefined {
    return this.shardTasks.get(shardId);
  }

  get pendingShardTaskCount(): number {
    return this.shardTasks.size;
  }

  get pendingShardTaskCounts(): Readonly<Record<ShardTask['kind'], number>> {
    return this.shardTasks.countsByKind;
  }

  pair(pairIndex: number): PairInfo {
    const pair = this.pairs[pairIndex];
    if (pair === undefined) throw new Error(`no pair ${pairIndex}`);
    return pair;
  }

  pairOf(address: string): PairInfo | undefined {
    return this.pairs.find((pair) => pair.primary === address || pair.follower === address);
  }

  allPairs(): readonly PairInfo[] {
    return this.pairs;
  }

  get counterCount(): number {
    return this.counters.size;
  }

  get shardCount(): number {
    return this.totalShardCount;
  }

  /** See Directory.fresh. */
  get fresh(): boolean {
    return this.staleReason() === undefined;
  }

  /** Routers whose presence key exists now (this one included), by id. */
  liveRouterIds(): readonly string[] {
    return [...this.routers.keys()].sort();
  }

  /**
   * Up to `limit` counters in `range`, in byte order of their UTF-8 names:
   * one range read of etcd (which orders keys by their bytes), limited.
   */
  async scan(range: NameRange, limit: number): Promise<ListedCounterRow[]> {
    assert(Number.isInteger(limit) && limit > 0, `scan limit ${limit}`);
    const base = this.prefix + counterKeyPrefix;
    const baseLength = Buffer.byteLength(base);
    const after = Buffer.concat([Buffer.from(base + range.after), Buffer.from([0])]);
    const from = Buffer.from(base + range.from);
    const start = Buffer.compare(after, from) > 0 ? after : from;
    const end = range.before === undefined ? prefixEnd(Buffer.from(base)) : Buffer.from(base + range.before);
    if (Buffer.compare(start, end) >= 0) return [];
    let response;
    try {
      response = await this.client.kv.range({ key: start, range_end: end, limit }, { deadline: deadlineIn(etcdCallTimeoutMs) });
    } catch (error) {
      throw storeError(error);
    }
    return response.kvs.map((kv) => {
      const name = kv.key.subarray(baseLength).toString('utf8');
      const stored = checkCounter(name, parseJson(`counter ${name}`, kv.value));
      return { name, kind: stored.kind, shardCount: stored.shards.length, ttlMs: stored.ttlMs };
    });
  }

  // ---- Counters: creation ------------------------------------------------

  async getOrCreate(name: string, kind: CounterKind = 'total', partitions = 1): Promise<CounterInfo> {
    // A write resolves its counter here: not on a view this router cannot vouch for.
    this.assertFresh();
    const existing = this.counters.get(name);
    if (existing !== undefined) {
      if (existing.kind !== kind)
        throw new TallyError(ErrorCode.failedPrecondition, `counter "${name}" is a ${existing.kind} counter, not a ${kind} counter`);
      existing.lastWriteMonotonicMs = this.monotonicNow();
      return existing;
    }
    return (await this.getOrCreateMany([name], kind, partitions))[0]!;
  }

  /**
   * See Directory.getOrCreateMany. Every name is checked against memory
   * before anything is created; the new ones join this router's next
   * creation transaction (calls arriving together share one), which
   * compares each name's key as absent: a name another router created
   * first fails the compare, and once the watch brings that counter here
   * it is used (or refused, if of another kind).
   */
  async getOrCreateMany(names: readonly string[], kind: CounterKind = 'total', partitions = 1): Promise<CounterInfo[]> {
    // A write resolves its counters here: not on a view this router cannot vouch for.
    this.assertFresh();
    // Bounded: each round either finds every counter or creates the missing ones.
    for (let attempt = 1; ; attempt++) {
      const missing = missingCounters(this.counters, names, kind, this.monotonicNow());
      if (missing.size === 0) return countersInOrder(this.counters, names);
      if (attempt > directoryChangeAttemptsMax)
        throw new TallyError(
          ErrorCode.unavailable,
          `creating ${missing.size} counters: they were deleted as soon as created, ${attempt - 1} times`,
        );
      this.checkCreation(missing.size, kind, partitions, 0, 0);
      this.assertPlaceable();
      this.assertFresh();
      await this.requestCreation([...missing], kind, partitions);
    }
  }

  /** The caps on creating `count` counters of `kind`, with `plannedCounters`/`plannedShards` already planned. */
  private checkCreation(count: number, kind: CounterKind, partitions: number, plannedCounters: number, plannedShards: number): void {
    checkCreationCaps(
      count,
      kind,
      partitions,
      { counters: this.counters.size + plannedCounters, shards: this.totalShardCount + plannedShards },
      this.limits,
    );
    if (this.pairs.length === 0)
      throw new TallyError(
        ErrorCode.failedPrecondition,
        'the directory holds no node pairs: add one (tally pair add) before creating counters',
      );
  }

  private checkShardsTotal(addCount: number): void {
    checkShardsTotalCap(addCount, this.totalShardCount, this.limits);
  }

  /** Resolves once every name exists in memory (of whatever kind: the caller checks). */
  private requestCreation(names: string[], kind: CounterKind, partitions: number): Promise<void> {
    return new Promise((resolve, reject) => {
      this.creationQueue.push({ names, kind, partitions, attempts: 0, resolve, reject });
      this.scheduleCreations();
    });
  }

  private scheduleCreations(): void {
    if (this.creationScheduled) return;
    this.creationScheduled = true;
    void this.lane.run(() => this.drainCreations());
  }

  /** Creates what the queued calls need, several calls per transaction; each call all or nothing. */
  private async drainCreations(): Promise<void> {
    try {
      await this.drainCreationQueue();
    } catch (error) {
      // Shard ids could not be reserved: nothing was created.
      for (const request of this.creationQueue.splice(0)) request.reject(storeError(error));
    } finally {
      this.creationScheduled = false;
      // A call may have queued after the last round, while this one was finishing.
      if (this.creationQueue.length > 0) this.scheduleCreations();
    }
  }

  /** One transaction per round; a round the store refuses fails its calls, others go on. */
  private async drainCreationQueue(): Promise<void> {
    while (this.creationQueue.length > 0) {
      const reason = this.staleReason();
      if (reason !== undefined) {
        const error = staleError(reason);
        for (const request of this.creationQueue.splice(0)) request.reject(error);
        return;
      }
      await this.reserveShardIds(this.shardIdsWanted());
      const batch = this.takeCreationBatch();
      if (batch.requests.length === 0) continue;
      let outcome: CommitOutcome;
      try {
        outcome = await this.commit(batch.read, batch.ops);
      } catch (error) {
        for (const request of batch.requests) request.reject(storeError(error));
        continue;
      }
      if (outcome === 'committed') {
        for (const request of batch.requests) request.resolve();
        continue;
      }
      // Another router created some of these names first: plan again from memory.
      const again = batch.requests.filter((request) => {
        if (++request.attempts < directoryChangeAttemptsMax) return true;
        request.reject(
          new TallyError(ErrorCode.unavailable, `creating counters: other routers changed the directory first ${request.attempts} times`),
        );
        return false;
      });
      this.creationQueue.unshift(...again);
    }
  }

  /** Shard ids the next creation batch may need (at most): the queued calls' missing names, up to a batch. */
  private shardIdsWanted(): number {
    const seen = new Set<string>();
    let wanted = 0;
    for (const request of this.creationQueue) {
      const shardCount = request.kind === 'membership' ? request.partitions : 1;
      for (const name of request.names) {
        if (this.counters.has(name) || seen.has(name)) continue;
        seen.add(name);
        wanted += shardCount;
      }
      if (seen.size >= newCountersPerCallMax) break;
    }
    return wanted;
  }

  /**
   * Inside the lane: at least `count` reserved shard ids at hand. Takes a
   * block from shard-id-next in one transaction conditioned on its
   * revision, so two routers never reserve the same ids; what was left of
   * the previous block is dropped (never handed out).
   */
  private async reserveShardIds(count: number): Promise<void> {
    if (this.reservedShardIds.end - this.reservedShardIds.next >= count) return;
    const size = Math.max(count, shardIdsPerReservation);
    for (let attempt = 1; ; attempt++) {
      this.assertFresh();
      const first = this.shardIdNext;
      if ((await this.commit([shardIdNextKey], [this.put(shardIdNextKey, Buffer.from(String(first + size)))])) === 'committed') {
        this.reservedShardIds.next = first;
        this.reservedShardIds.end = first + size;
        return;
      }
      if (attempt >= directoryChangeAttemptsMax)
        throw new TallyError(ErrorCode.unavailable, `reserving shard ids: other routers reserved first ${attempt} times`);
    }
  }

  /**
   * Hands out reserved shard ids, for good: once in a transaction whose
   * outcome may be unknown, an id is never offered again.
   */
  private takeShardIds(count: number): number[] {
    assert(this.reservedShardIds.end - this.reservedShardIds.next >= count, 'shard ids reserved before they are taken');
    const ids: number[] = [];
    for (let index = 0; index < count; index++) ids.push(this.reservedShardIds.next++);
    return ids;
  }

  /**
   * Takes the queued calls one transaction can serve, in arrival order:
   * their new counters, shard ids from shard-id-next, placement as one at a
   * time would place them. A call whose names clash in kind with an earlier
   * call's stays queued, as does one the reserved ids cannot serve; one
   * past a cap fails as it would alone.
   */
  private takeCreationBatch(): { requests: CreationRequest[]; read: string[]; ops: IRequestOp[] } {
    const planned = new Map<string, CounterKind>();
    const requests: CreationRequest[] = [];
    const kept: CreationRequest[] = [];
    const read: string[] = [];
    const ops: IRequestOp[] = [];
    const totals = this.placementTotals();
    let plannedShards = 0;
    let bytes = 0;
    let full = false;
    const createdMs = this.now();
    for (const request of this.creationQueue) {
      if (full) {
        kept.push(request);
        continue;
      }
      const missing = request.names.filter((name) => !this.counters.has(name));
      if (missing.length === 0) {
        request.resolve();
        continue;
      }
      if (missing.some((name) => planned.has(name) && planned.get(name) !== request.kind)) {
        kept.push(request);
        continue;
      }
      const added = missing.filter((name) => !planned.has(name));
      const shardCount = request.kind === 'membership' ? request.partitions : 1;
      const idsLeft = this.reservedShardIds.end - this.reservedShardIds.next;
      if (planned.size + added.length > newCountersPerCallMax || added.length * shardCount > idsLeft) {
        kept.push(request);
        full = true;
        continue;
      }
      try {
        this.checkCreation(added.length, request.kind, request.partitions, planned.size, plannedShards);
      } catch (error) {
        request.reject(error as Error);
        continue;
      }
      for (const name of added) {
        const chosen = choosePairs(
          this.pairs.map(() => 0),
          totals,
          shardCount,
          (pairIndex) => this.pairs[pairIndex]!.draining,
        );
        const stored: StoredCounter = {
          kind: request.kind,
          window: { bucketMs: 0, retentionMs: 0 },
          createdMs,
          autoscale: request.kind !== 'membership',
          generation: 0,
          ttlMs: null,
          shards: this.takeShardIds(shardCount).map((shardId, index): [number, number] => {
            totals[chosen[index]!]!++;
            return [shardId, chosen[index]!];
          }),
          writableShardCount: shardCount,
          growths: [],
          clearKeys: [],
        };
        const key = counterKeyPrefix + name;
        const value = this.encodeCounter(name, stored);
        bytes += 2 * Buffer.byteLength(key) + value.length;
        read.push(key);
        ops.push(this.put(key, value));
        planned.set(name, request.kind);
      }
      plannedShards += added.length * shardCount;
      requests.push(request);
      if (bytes >= etcdTxnBytesMax) full = true;
    }
    this.creationQueue = kept;
    return { requests, read, ops };
  }

  // ---- Counters: growth and settings -------------------------------------

  /**
   * Grows a counter: announces the new shards (read by every router's
   * exact read, written by none), waits until every live router has
   * acknowledged them, then activates them and records the growth.
   * Finishes a growth left announced as well. previousShardCount: the
   * shards writes went to before.
   */
  async setShards(name: string, shardCount: number): Promise<{ previousShardCount: number; counter: CounterInfo }> {
    const counter = checkShardCountChange(name, this.counters.get(name), shardCount);
    const heldShardCount = counter.shards.length;
    const previousShardCount = counter.writableShardCount;
    if (shardCount > heldShardCount) {
      this.checkShardsTotal(shardCount - heldShardCount);
      await this.change(
        `growing ${name}`,
        () => {
          const current = this.existing(name);
          if (shardCount <= current.shards.length) return { done: undefined };
          this.checkShardsTotal(shardCount - current.shards.length);
          const mine = this.pairs.map(() => 0);
          for (const shard of current.shards) if (shard.pairIndex < mine.length) mine[shard.pairIndex]!++;
          const stored = this.storedOf(current);
          this.assertPlaceable();
          const chosen = choosePairs(
            mine,
            this.placementTotals(),
            shardCount - current.shards.length,
            (pairIndex) => this.pairs[pairIndex]!.draining,
          );
          const ids = this.takeShardIds(chosen.length);
          chosen.forEach((pairIndex, index) => stored.shards.push([ids[index]!, pairIndex]));
          return {
            read: [counterKeyPrefix + name],
            ops: [this.put(counterKeyPrefix + name, this.encodeCounter(name, stored))],
            result: () => undefined,
          };
        },
        () => Math.max(0, shardCount - (this.counters.get(name)?.shards.length ?? shardCount)),
      );
    }
    await this.activateGrowth(name);
    return { previousShardCount, counter: this.counters.get(name) ?? counter };
  }

  /**
   * Makes a counter's announced shards writable once every live router has
   * acknowledged them: exactly the shards acknowledged (a later
   * announcement waits for its own round). Bounded by the activation wait
   * per round and by directoryChangeAttemptsMax rounds.
   */
  private async activateGrowth(name: string): Promise<void> {
    const waitMs = this.presence.acknowledgementWaitMs;
    for (let round = 1; ; round++) {
      const counter = this.counters.get(name);
      const record = this.records.get(name);
      if (counter === undefined || record === undefined || counter.writableShardCount >= counter.shards.length) return;
      if (round > directoryChangeAttemptsMax)
        throw new TallyError(ErrorCode.unavailable, `activating the growth of ${name}: other changes came first ${round - 1} times`);
      this.assertFresh();
      const announcedRevision = record.modRevision;
      const announcedShardCount = counter.shards.length;
      await this.waitUntil(
        () => this.counters.get(name) !== counter || this.unacknowledged(announcedRevision).length === 0,
        waitMs,
        () =>
          `router(s) ${this.unacknowledged(announcedRevision).join(', ')} to acknowledge the growth of ${name} to ${announcedShardCount} shards (it stays announced: read, not written, until they do or their lease expires)`,
      );
      await this.change(`activating the growth of ${name}`, () => {
        const current = this.counters.get(name);
        // Deleted, re-created, or activated meanwhile by another router: nothing of this round to do.
        if (current !== counter || current.writableShardCount >= announcedShardCount) return { done: undefined };
        const stored = this.storedOf(current);
        stored.growths.push({ previousShardCount: current.writableShardCount, grownMs: this.now() });
        stored.writableShardCount = announcedShardCount;
        return {
          read: [counterKeyPrefix + name],
          ops: [this.put(counterKeyPrefix + name, this.encodeCounter(name, stored))],
          result: () => undefined,
        };
      });
    }
  }

  /** Routers whose presence has not yet seen `revision`. */
  private unacknowledged(revision: number): string[] {
    const behind: string[] = [];
    for (const [id, presence] of this.routers) if (presence.seenRevision < revision) behind.push(id);
    return behind;
  }

  /**
   * A growth a grower left announced (it crashed, or gave up waiting) is
   * activated by any router once it has been announced longer than the
   * activation wait, one counter at a time.
   */
  private async finishAnnouncedGrowths(): Promise<void> {
    if (this.finishingGrowths || !this.fresh || this.announced.size === 0) return;
    this.finishingGrowths = true;
    try {
      const cutoffMs = monotonicNowMs() - this.presence.acknowledgementWaitMs;
      for (const name of [...this.announced]) {
        const sinceMs = this.records.get(name)?.announcedSinceMs;
        if (sinceMs === undefined || sinceMs > cutoffMs || this.closed) continue;
        try {
          await this.activateGrowth(name);
          this.logger.info('activated a growth left announced', { counter: name, router: this.routerId });
        } catch (error) {
          this.logger.warn('a growth left announced is still not active', { counter: name, error: (error as Error).message });
          // The same router holds the others back: the next pass tries again.
          break;
        }
      }
    } finally {
      this.finishingGrowths = false;
    }
  }

  async setWindow(name: string, window: WindowSetting): Promise<CounterInfo> {
    return this.changeCounter(name, (counter, stored) => {
      if (counter.kind !== 'total')
        throw new TallyError(ErrorCode.failedPrecondition, `counter "${name}" is a ${counter.kind} counter: only totals have windows`);
      stored.window = { bucketMs: window.bucketMs, retentionMs: window.retentionMs };
    });
  }

  /**
   * Sets a counter's own time to live: null follows the router default, 0
   * never expires. Restarts its idle clock, as a write does.
   */
  async setTtl(name: string, ttlMs: number | null): Promise<CounterInfo> {
    assert(ttlMs === null || (Number.isSafeInteger(ttlMs) && ttlMs >= 0), `ttl ${ttlMs}`);
    const counter = await this.changeCounter(name, (_counter, stored) => {
      stored.ttlMs = ttlMs;
    });
    counter.lastWriteMonotonicMs = this.monotonicNow();
    return counter;
  }

  async setAutoscale(name: string, autoscale: boolean): Promise<CounterInfo> {
    return this.changeCounter(name, (counter, stored) => {
      if (autoscale && counter.kind === 'membership')
        throw new TallyError(ErrorCode.failedPrecondition, `${name} is a membership counter: its partitions are fixed`);
      stored.autoscale = autoscale;
    });
  }

  /** One transaction rewriting one counter's value as `edit` changes it (NOT_FOUND when there is none). */
  private changeCounter(name: string, edit: (counter: CounterInfo, stored: StoredCounter) => void): Promise<CounterInfo> {
    if (!this.counters.has(name)) return Promise.reject(new TallyError(ErrorCode.notFound, `counter "${name}" does not exist`));
    return this.change(`changing ${name}`, () => {
      const counter = this.existing(name);
      const stored = this.storedOf(counter);
      edit(counter, stored);
      const key = counterKeyPrefix + name;
      return { read: [key], ops: [this.put(key, this.encodeCounter(name, stored))], result: () => this.existing(name) };
    });
  }

  // ---- Counters: delete and clear ----------------------------------------

  async deleteCounter(name: string): Promise<CounterInfo> {
    if (!this.counters.has(name)) throw new TallyError(ErrorCode.notFound, `counter "${name}" does not exist`);
    const deleted = await this.deleteCounters([name]);
    // Another router deleted it first.
    if (deleted.length === 0) throw new TallyError(ErrorCode.notFound, `counter "${name}" does not exist`);
    return deleted[0]!;
  }

  /**
   * Deletes the counters that exist: each counter's key goes with a drop per
   * shard. As many whole counters per transaction as etcdTxnOpsMax allows
   * (one for every real delete; TTL expiry hands 50 at a time): a crash
   * between two leaves the later ones to a later sweep. A counter re-created
   * meanwhile (by another router) is not this call's to delete.
   */
  async deleteCounters(names: readonly string[]): Promise<CounterInfo[]> {
    const targets = [...new Set(names)].flatMap((name) => this.counters.get(name) ?? []);
    const deleted: CounterInfo[] = [];
    for (let start = 0; start < targets.length;) {
      let end = start;
      let ops = 0;
      while (end < targets.length && (end === start || ops + 1 + targets[end]!.shards.length <= etcdTxnOpsMax)) {
        ops += 1 + targets[end]!.shards.length;
        end++;
      }
      const chunk = targets.slice(start, end);
      start = end;
      deleted.push(
        ...(await this.change<CounterInfo[]>('deleting counters', () => {
          const live = chunk.filter((counter) => this.counters.get(counter.name) === counter);
          if (live.length === 0) return { done: [] };
          const createdMs = this.now();
          const chunkOps: IRequestOp[] = [];
          for (const counter of live) {
            chunkOps.push({ request_delete_range: { key: this.key(counterKeyPrefix + counter.name) } });
            // A drop replaces a clear still owed: it frees everything anyway.
            for (const shard of counter.shards)
              chunkOps.push(this.putTask({ shardId: shard.shardId, pairIndex: shard.pairIndex, kind: 'drop', generation: 0, createdMs }));
          }
          return { read: live.map((counter) => counterKeyPrefix + counter.name), ops: chunkOps, result: () => live };
        })),
      );
    }
    // Every live router forgets them before the delete returns (or its lease
    // lapses): none goes on reading or writing the old shards afterwards.
    if (deleted.length > 0) await this.awaitAcknowledged(this.ackWantedRevision, `the delete of ${deleted.length} counter(s)`);
    return deleted;
  }

  /**
   * Waits until every live router's presence has seen `revision` (a dead
   * one's lease expires meanwhile). Used after a change other routers must
   * have applied before this one acts on it or answers: a growth's
   * activation, a clear, a delete, a pair going out of sync. When it gives
   * up (UNAVAILABLE, the change stands), a live router that has not applied
   * the change has stopped vouching for its copy: the wait outlasts the
   * bound on its proof of currency (RouterPresence.acknowledgementWaitMs).
   */
  private async awaitAcknowledged(revision: number, what: string): Promise<void> {
    await this.waitUntil(
      () => this.unacknowledged(revision).length === 0,
      this.presence.acknowledgementWaitMs,
      () => `router(s) ${this.unacknowledged(revision).join(', ')} to acknowledge ${what}`,
    );
  }

  /**
   * Clears a counter: bumps its generation and records a clear per shard in
   * one transaction; a keyed clear also records its key in the counter's
   * value (pruned past the window), so a retry through any router answers
   * the clear it made.
   */
  async clearCounter(name: string, key: Buffer, windowMs: number): Promise<ClearOutcome> {
    if (!this.counters.has(name)) throw new TallyError(ErrorCode.notFound, `counter "${name}" does not exist`);
    const encodedKey = key.toString('base64');
    const outcome = await this.change<ClearOutcome>(`clearing ${name}`, () => {
      const counter = this.existing(name);
      const record = this.records.get(name)!;
      const nowMs = this.now();
      const recent = record.clearKeys.filter(([, , clearedMs]) => clearedMs > nowMs - windowMs);
      if (key.length > 0) {
        const seen = recent.find(([entry]) => entry === encodedKey);
        if (seen !== undefined) return { done: { counter, generation: seen[1], applied: false } };
      }
      const generation = counter.generation + 1;
      const stored = this.storedOf(counter);
      stored.generation = generation;
      stored.clearKeys = recent;
      if (key.length > 0) stored.clearKeys.push([encodedKey, generation, nowMs]);
      stored.clearKeys = stored.clearKeys.slice(-clearKeysPerCounterMax);
      const ops: IRequestOp[] = [this.put(counterKeyPrefix + name, this.encodeCounter(name, stored))];
      for (const shard of counter.shards)
        ops.push(this.putTask({ shardId: shard.shardId, pairIndex: shard.pairIndex, kind: 'clear', generation, createdMs: nowMs }));
      return { read: [counterKeyPrefix + name], ops, result: () => ({ counter: this.existing(name), generation, applied: true }) };
    });
    // Every live router tags its writes and reads with the new generation
    // before the clear goes out to the shards and returns: an increment made
    // through any router after Clear returned is never cleared away.
    await this.awaitAcknowledged(this.ackWantedRevision, `the clear of ${name}`);
    return outcome;
  }

  /**
   * Forgets tasks their node has confirmed, only as they were sent: each
   * delete is conditioned on the task's key as memory holds it, so a newer
   * clear or a drop recorded meanwhile (by any router) stays owed.
   */
  async completeShardTasks(confirmed: readonly ShardTask[]): Promise<void> {
    const done = confirmed.filter((task) => this.shardTasks.isOwedAsSent(task));
    for (let start = 0; start < done.length; start += etcdTxnOpsMax) {
      const chunk = done.slice(start, start + etcdTxnOpsMax);
      await this.change('forgetting confirmed shard tasks', () => {
        const still = chunk.filter((task) => this.shardTasks.isOwedAsSent(task));
        if (still.length === 0) return { done: undefined };
        const keys = still.map((task) => taskKeyPrefix + task.shardId);
        return { read: keys, ops: keys.map((key) => ({ request_delete_range: { key: this.key(key) } })), result: () => undefined };
      });
    }
  }

  // ---- Pairs ---------------------------------------------------------------

  /**
   * Changes a pair, conditioned on the pair as this router saw it when
   * called (and on the fence): FAILED_PRECONDITION when another change got
   * there first, with memory then holding the winner's. The epoch and the
   * acknowledged lsn never go back.
   */
  shardCountOfPair(pairIndex: number): number {
    return this.shardsPerPair[pairIndex] ?? 0;
  }

  /**
   * See Directory.readBarrier: fresh, and names memory does not hold are
   * read from etcd (one linearizable range per name, in one transaction);
   * memory then catches up with the revision etcd answered at, so a counter
   * created through another router before this read began is held here.
   */
  async readBarrier(names: readonly string[]): Promise<void> {
    this.assertFresh();
    const unknown = [...new Set(names)].filter((name) => !this.counters.has(name));
    // Each unknown name read from etcd (linearizable, in transactions of
    // ranges): one that exists there is waited for until the watch has
    // brought its revision here; one absent there is absent.
    let newest = 0;
    for (let from = 0; from < unknown.length; from += etcdTxnOpsMax) {
      const ops = unknown
        .slice(from, from + etcdTxnOpsMax)
        .map((name): IRequestOp => ({ request_range: { key: this.key(counterKeyPrefix + name), keys_only: true } }));
      try {
        const response = await this.ns
          .if(shardIdNextKey, 'Create', '>', -1)
          .then(...ops)
          .options({ deadline: deadlineIn(etcdCallTimeoutMs) })
          .commit();
        for (const op of response.responses)
          for (const kv of op.response_range?.kvs ?? []) newest = Math.max(newest, Number(kv.mod_revision));
      } catch (error) {
        throw storeError(error);
      }
    }
    if (newest === 0) return;
    await this.waitUntil(
      () => this.appliedRevision >= newest,
      directoryWatchApplyTimeoutMs,
      `the directory watch to reach revision ${newest} for an exact read`,
    );
  }

  /** See Directory.addPair: one transaction creating pairs/<next index>, compared as absent. */
  async addPair(addresses: PairAddresses): Promise<PairInfo> {
    const pairIndex = await this.change('adding a node pair', () => {
      checkPairAddable(addresses, (address) => this.pairOf(address));
      const index = this.pairs.length;
      const stored: StoredPair = {
        primary: addresses.primary,
        follower: addresses.follower,
        epoch: '1',
        inSync: false,
        primaryId: '',
        followerId: '',
        ackedLsn: '0',
        legacy: false,
        replaced: false,
        addedOnline: true,
        draining: false,
      };
      const key = pairKeyPrefix + index;
      return { read: [key], ops: [this.put(key, Buffer.from(JSON.stringify(checkPair(index, stored))))], result: () => index };
    });
    return this.pair(pairIndex);
  }

  /** See Directory.setPairDraining: conditioned on the pair as memory holds it. */
  async setPairDraining(pairIndex: number, draining: boolean): Promise<PairInfo> {
    const pair = this.pair(pairIndex);
    if (draining) checkDrainable(pair, this.pairs);
    return this.updatePair(pairIndex, { draining });
  }

  /** See Directory.exportSnapshot: memory, and the next shard id never reserved by any router. */
  async exportSnapshot(): Promise<DirectorySnapshot> {
    let next: string | null;
    try {
      next = await this.ns.get(shardIdNextKey).string();
    } catch (error) {
      throw storeError(error);
    }
    return {
      format: snapshotFormat,
      version: snapshotVersion,
      exportedMs: this.now(),
      shardIdNext: Math.max(Number(next ?? '1'), this.shardIdNext),
      pairs: this.pairs.map(snapshotPairOf),
      counters: [...this.counters.values()].map(snapshotCounterOf),
      shardTasks: this.shardTasks.all().map((task) => ({ ...task })),
    };
  }

  async updatePair(pairIndex: number, update: PairUpdate, options: { asSupervisor?: boolean } = {}): Promise<PairInfo> {
    const pair = this.pair(pairIndex);
    const wasInSync = pair.inSync;
    const seenRevision = this.pairRevisions[pairIndex]!;
    const next = nextPairState(pair, update);
    const stored: StoredPair = {
      primary: next.primary,
      follower: next.follower,
      epoch: next.epoch.toString(),
      inSync: next.inSync,
      primaryId: next.primaryId,
      followerId: next.followerId,
      ackedLsn: next.ackedLsn.toString(),
      legacy: next.legacy,
      replaced: next.replaced,
      addedOnline: next.addedOnline,
      draining: next.draining,
      configVersion: next.configVersion.toString(),
    };
    const key = pairKeyPrefix + pairIndex;
    const lost = (why: string): TallyError =>
      new TallyError(
        ErrorCode.failedPrecondition,
        `pair ${pairIndex} was not changed: ${why}; the directory now holds epoch ${pair.epoch}`,
      );
    const changed = await this.lane.run(async () => {
      this.assertFresh();
      if (this.pairRevisions[pairIndex] !== seenRevision) throw lost('another change to it got there first');
      const outcome = await this.commit(
        [key],
        [this.put(key, Buffer.from(JSON.stringify(checkPair(pairIndex, stored))))],
        options.asSupervisor === true ? this.pairUpdateFence : undefined,
      );
      // A retry of the transaction by the client may have found its own first attempt.
      if (outcome === 'committed' || samePair(pair, next)) return pair;
      throw lost(outcome === 'fenced' ? 'this router is no longer the supervisor' : 'another change to it got there first');
    });
    // Outside the lane: this router's other changes need not wait for it.
    if (wasInSync && !changed.inSync) await this.awaitAcknowledged(this.ackWantedRevision, `pair ${pairIndex} out of sync`);
    return changed;
  }

  /**
   * --pairs against etcd's, by SqliteDirectory's rules: the same members at
   * each index (roles may have swapped), unless an operator replaced a node;
   * configured pairs etcd lacks are registered (the first router registers
   * them all). Unlike the embedded store, etcd may hold more pairs than
   * --pairs names (added online): etcd's are used, with a warning.
   */
  private async reconcilePairs(configured: readonly PairAddresses[]): Promise<void> {
    const check = (warn: boolean): void => {
      for (let pairIndex = 0; pairIndex < Math.min(this.pairs.length, configured.length); pairIndex++) {
        const held = this.pairs[pairIndex]!;
        const heldSet = [held.primary, held.follower].sort().join(',');
        const configuredSet = [configured[pairIndex]!.primary, configured[pairIndex]!.follower].sort().join(',');
        if (heldSet === configuredSet) continue;
        if (!held.replaced)
          throw new TallyError(
            ErrorCode.failedPrecondition,
            `pair ${pairIndex} is ${heldSet} in the directory but ${configuredSet} in the configuration`,
          );
        if (warn)
          this.warnings.push(
            `pair ${pairIndex} is ${heldSet} since a node replacement, but ${configuredSet} in --pairs: using the directory's (update --pairs)`,
          );
      }
    };
    await this.change('registering the configured node pairs', () => {
      check(false);
      if (configured.length <= this.pairs.length) return { done: undefined };
      const read: string[] = [];
      const ops: IRequestOp[] = [];
      for (let pairIndex = this.pairs.length; pairIndex < configured.length; pairIndex++) {
        const { primary, follower } = configured[pairIndex]!;
        const stored: StoredPair = {
          primary,
          follower,
          epoch: '1',
          inSync: false,
          primaryId: '',
          followerId: '',
          ackedLsn: '0',
          legacy: false,
          replaced: false,
        };
        read.push(pairKeyPrefix + pairIndex);
        ops.push(this.put(pairKeyPrefix + pairIndex, Buffer.from(JSON.stringify(checkPair(pairIndex, stored)))));
      }
      return { read, ops, result: () => undefined };
    });
    check(true);
    if (configured.length > 0 && this.pairs.length > configured.length)
      this.warnings.push(
        `etcd holds ${this.pairs.length} node pairs but --pairs names ${configured.length}: using etcd's (pairs were added online; update --pairs)`,
      );
    if (this.pairs.length === 0)
      this.warnings.push('etcd holds no node pairs and none are configured (--pairs): no counter can be created until one is added');
  }

  // ---- Changes ------------------------------------------------------------

  /**
   * Runs one change in this router's lane: `plan` reads memory and returns
   * the transaction (or the answer without one); it commits only if every
   * key it read is at the revision memory holds (taken in the same turn as
   * the plan). shardIdsNeeded: ids to have reserved before planning. A failed compare waits
   * until memory has caught up with those keys, then plans again (bounded).
   */
  private change<T>(what: string, plan: () => Planned<T>, shardIdsNeeded?: () => number): Promise<T> {
    return this.lane.run(async () => {
      for (let attempt = 1; ; attempt++) {
        this.assertFresh();
        // Reserved first: the plan and its transaction follow in one turn, on what memory holds then.
        if (shardIdsNeeded !== undefined) await this.reserveShardIds(shardIdsNeeded());
        const planned = plan();
        if ('done' in planned) return planned.done;
        if ((await this.commit(planned.read, planned.ops)) === 'committed') return planned.result();
        if (attempt >= directoryChangeAttemptsMax)
          throw new TallyError(ErrorCode.unavailable, `${what}: other routers changed the same directory keys first ${attempt} times`);
      }
    });
  }

  /**
   * One transaction: `ops` if each key of `read` is at the revision memory
   * holds (absent: 0) and the fence passes. Committed: resolves once the
   * watch has applied it. Not: resolves once memory has caught up with the
   * keys read ('fenced' when they had not changed: the fence failed).
   */
  private async commit(read: readonly string[], ops: readonly IRequestOp[], fence?: PairUpdateFence): Promise<CommitOutcome> {
    assert(read.length > 0 && ops.length > 0 && read.length <= etcdTxnOpsMax && ops.length <= etcdTxnOpsMax, 'transaction size');
    const expected = read.map((key) => this.revisionOf(key) ?? 0);
    let txn = this.ns.if(read[0]!, 'Mod', '==', expected[0]!);
    for (let index = 1; index < read.length; index++) txn = txn.and(read[index]!, 'Mod', '==', expected[index]!);
    fence?.(txn);
    txn.then(...ops).else(...read.map((key): IRequestOp => ({ request_range: { key: this.key(key) } })));
    let response: ITxnResponse;
    try {
      response = await txn.options({ deadline: deadlineIn(etcdCallTimeoutMs) }).commit();
    } catch (error) {
      throw storeError(error);
    }
    const revision = Number(response.header.revision);
    if (response.succeeded) {
      await this.waitUntil(
        () => this.appliedRevision >= revision,
        directoryWatchApplyTimeoutMs,
        `the change committed to etcd at revision ${revision} to come back through the watch (it stands, and will)`,
      );
      return 'committed';
    }
    const current = response.responses.map((op) => op.response_range?.kvs?.[0]);
    const fenced = current.every((kv, index) => Number(kv?.mod_revision ?? 0) === expected[index]);
    await this.waitUntil(
      () =>
        read.every((key, index) => {
          const kv = current[index];
          if (kv !== undefined) return this.appliedRevision >= Number(kv.mod_revision);
          // Absent in etcd: caught up once memory has no such key, or a later one.
          const held = this.revisionOf(key);
          return held === undefined || held > revision;
        }),
      directoryWatchApplyTimeoutMs,
      'the directory watch to bring changes other routers made',
    );
    return fenced ? 'fenced' : 'changed';
  }

  private put(relative: string, value: Buffer): IRequestOp {
    return { request_put: { key: this.key(relative), value } };
  }

  private putTask(task: ShardTask): IRequestOp {
    const stored: StoredTask = { pairIndex: task.pairIndex, kind: task.kind, generation: task.generation, createdMs: task.createdMs };
    return this.put(taskKeyPrefix + task.shardId, Buffer.from(JSON.stringify(checkTask(task.shardId, stored))));
  }

  private encodeCounter(name: string, stored: StoredCounter): Buffer {
    return Buffer.from(JSON.stringify(checkCounter(name, stored)));
  }

  private key(relative: string): Buffer {
    return Buffer.from(this.prefix + relative, 'utf8');
  }

  private existing(name: string): CounterInfo {
    const counter = this.counters.get(name);
    if (counter === undefined) throw new TallyError(ErrorCode.notFound, `counter "${name}" does not exist`);
    return counter;
  }

  /** The value a counter's key holds, rebuilt from memory (which the transaction's compare vouches for). */
  private storedOf(counter: CounterInfo): StoredCounter {
    const record = this.records.get(counter.name)!;
    return {
      kind: counter.kind,
      window: { bucketMs: counter.window.bucketMs, retentionMs: counter.window.retentionMs },
      createdMs: counter.createdMs,
      autoscale: counter.autoscale,
      generation: counter.generation,
      ttlMs: counter.ttlMs,
      shards: counter.shards.map((shard): [number, number] => [shard.shardId, shard.pairIndex]),
      writableShardCount: counter.writableShardCount,
      growths: counter.growths.map((growth) => ({ previousShardCount: growth.previousShardCount, grownMs: growth.grownMs })),
      clearKeys: record.clearKeys.map((entry): [string, number, number] => [...entry]),
    };
  }

  private assertPlaceable(): void {
    checkPlaceable(this.pairs);
  }

  /** Shards per pair over all counters, one entry per pair: what placement balances. */
  private placementTotals(): number[] {
    return this.pairs.map((_, pairIndex) => this.shardsPerPair[pairIndex] ?? 0);
  }

  // ---- Freshness -----------------------------------------------------------

  /** Why this router cannot vouch for its copy now, or undefined when it can. */
  private staleReason(): string | undefined {
    if (this.closed) return 'the directory is closed';
    if (this.watch === undefined || !this.watch.connected) return 'the directory watch is not connected';
    return this.presence.staleReason();
  }

  private assertFresh(): void {
    const reason = this.staleReason();
    if (reason !== undefined) throw staleError(reason);
  }

  // ---- Loading and applying ------------------------------------------------

  /**
   * Reads every key under the prefix at one revision (in pages; a page
   * larger than a gRPC message halves the page) and applies the difference
   * with memory. Returns the revision read.
   */
  private async load(strict: boolean): Promise<number> {
    const end = prefixEnd(this.prefixBytes);
    const kvs: IKeyValue[] = [];
    let revision = 0;
    let start = this.prefixBytes;
    let pageKeys = etcdRangePageKeysMax;
    for (;;) {
      let response;
      try {
        response = await this.client.kv.range(
          { key: start, range_end: end, limit: pageKeys, ...(revision > 0 ? { revision } : {}) },
          { deadline: deadlineIn(etcdCallTimeoutMs) },
        );
      } catch (error) {
        if (/larger than max|RESOURCE_EXHAUSTED/i.test((error as Error).message) && pageKeys > 1) {
          pageKeys = Math.ceil(pageKeys / 2);
          continue;
        }
        throw error;
      }
      if (revision === 0) revision = Number(response.header.revision);
      for (const kv of response.kvs) kvs.push(kv);
      if (!response.more || response.kvs.length === 0) break;
      start = Buffer.concat([response.kvs[response.kvs.length - 1]!.key, Buffer.from([0])]);
    }
    this.applySnapshot(kvs, revision, strict);
    return revision;
  }

  /** The watch's start was compacted away: read everything again and watch on from there. */
  private async resync(compactRevision: number): Promise<void> {
    this.logger.warn('directory watch fell behind a compaction: reading the directory again', { router: this.routerId, compactRevision });
    while (!this.closed) {
      try {
        const revision = await this.load(false);
        this.watch?.restartFrom(revision + 1);
        return;
      } catch (error) {
        this.logger.warn('directory reload failed', { router: this.routerId, error: (error as Error).message });
        await sleep(etcdRetryDelayMs);
      }
    }
  }

  private applySnapshot(kvs: readonly IKeyValue[], revision: number, strict: boolean): void {
    const present = new Set<string>();
    for (const kv of kvs) present.add(this.relativeKey(kv.key));
    this.appliedRevisionInFlight = revision;
    for (const relative of this.heldKeys()) if (!present.has(relative)) this.applyOne(relative, undefined, strict);
    // Creation order: liveCounters walks counters in it.
    const ordered = [...kvs].sort((left, right) => Number(left.create_revision) - Number(right.create_revision));
    for (const kv of ordered) {
      const relative = this.relativeKey(kv.key);
      if (this.revisionOf(relative) !== Number(kv.mod_revision)) this.applyOne(relative, kv, strict);
    }
    if (revision > this.appliedRevision) this.appliedRevision = revision;
    this.afterApply();
  }

  private applyEvents(events: readonly IEvent[]): void {
    for (const event of events) {
      // A delete event's kv carries the revision of the delete.
      this.appliedRevisionInFlight = Number(event.kv.mod_revision);
      this.applyOne(this.relativeKey(event.kv.key), event.type === 'Put' ? event.kv : undefined, false);
      const revision = Number(event.kv.mod_revision);
      if (revision > this.appliedRevision) this.appliedRevision = revision;
    }
    this.afterApply();
  }

  private afterApply(): void {
    this.settleWaiters();
    this.presence.acknowledge(this.ackWantedRevision);
  }

  /** Applies one key's new value (undefined: deleted). strict: a bad value throws (at load) rather than being logged and skipped. */
  private applyOne(relative: string, kv: IKeyValue | undefined, strict: boolean): void {
    try {
      if (relative.startsWith(counterKeyPrefix)) {
        const name = relative.slice(counterKeyPrefix.length);
        if (kv === undefined) this.forgetCounter(name);
        else this.applyCounter(name, kv);
      } else if (relative.startsWith(pairKeyPrefix)) {
        const pairIndex = parseId(relative.slice(pairKeyPrefix.length));
        if (pairIndex === undefined) invalid(relative, 'not a pair index');
        if (kv === undefined)
          this.logger.error('directory: a pair was deleted from etcd; pairs are never deleted, it is kept', { pair: pairIndex });
        else this.applyPair(pairIndex, kv);
      } else if (relative === shardIdNextKey) {
        if (kv === undefined) {
          this.logger.error('directory: shard-id-next was deleted from etcd; shard ids go on from the highest seen');
          this.shardIdNextRevision = 0;
          return;
        }
        const next = parseId(kv.value.toString('utf8'));
        if (next === undefined || next < 1) invalid(relative, 'not a shard id');
        this.shardIdNext = next;
        this.shardIdNextRevision = Number(kv.mod_revision);
      } else if (relative.startsWith(taskKeyPrefix)) {
        const shardId = parseId(relative.slice(taskKeyPrefix.length));
        if (shardId === undefined) invalid(relative, 'not a shard id');
        if (kv === undefined) this.forgetTask(shardId);
        else this.applyTask(shardId, kv);
      } else if (relative.startsWith(routerKeyPrefix)) {
        const id = relative.slice(routerKeyPrefix.length);
        if (kv === undefined) {
          this.routers.delete(id);
          return;
        }
        const value = parseJson(relative, kv.value);
        const seenRevision = isObject(value) && isCount(value.seenRevision) ? value.seenRevision : 0;
        this.routers.set(id, { seenRevision, modRevision: Number(kv.mod_revision) });
      }
      // Other keys under the prefix (the supervisor's) are not the directory's.
    } catch (error) {
      if (strict) throw error;
      this.logger.error('directory: an etcd key could not be applied and is ignored', { key: relative, error: (error as Error).message });
    }
  }

  /** Applies a counter's value: in place when it is the same counter (same creation), a new CounterInfo when re-created. */
  private applyCounter(name: string, kv: IKeyValue): void {
    const stored = checkCounter(name, parseJson(`counter ${name}`, kv.value));
    const createRevision = Number(kv.create_revision);
    const modRevision = Number(kv.mod_revision);
    let counter = this.counters.get(name);
    let record = this.records.get(name);
    if (counter === undefined || record === undefined || record.createRevision !== createRevision || !extendsCounter(counter, stored)) {
      if (counter !== undefined) this.forgetCounter(name);
      counter = {
        name,
        kind: stored.kind,
        window: { ...stored.window },
        shards: [],
        writableShardCount: 0,
        createdMs: stored.createdMs,
        growths: [],
        autoscale: stored.autoscale,
        generation: stored.generation,
        ttlMs: stored.ttlMs,
        lastWriteMonotonicMs: this.monotonicNow(),
      };
      record = { createRevision, modRevision, clearKeys: [], announcedSinceMs: undefined };
      this.counters.set(name, counter);
      this.records.set(name, record);
    }
    for (let shardIndex = counter.shards.length; shardIndex < stored.shards.length; shardIndex++) {
      const [shardId, pairIndex] = stored.shards[shardIndex]!;
      counter.shards.push({ shardIndex, shardId, pairIndex });
      this.countShard(pairIndex, 1);
    }
    for (let index = counter.growths.length; index < stored.growths.length; index++) {
      const growth = stored.growths[index]!;
      counter.growths.push({ previousShardCount: growth.previousShardCount, grownMs: growth.grownMs });
    }
    counter.writableShardCount = stored.writableShardCount;
    if (counter.window.bucketMs !== stored.window.bucketMs || counter.window.retentionMs !== stored.window.retentionMs)
      counter.window = { bucketMs: stored.window.bucketMs, retentionMs: stored.window.retentionMs };
    counter.autoscale = stored.autoscale;
    // A clear: every router acknowledges it (clearCounter waits for that).
    if (stored.generation !== counter.generation && modRevision > this.ackWantedRevision) this.ackWantedRevision = modRevision;
    counter.generation = stored.generation;
    counter.ttlMs = stored.ttlMs;
    record.modRevision = modRevision;
    record.clearKeys = stored.clearKeys.length === 0 ? noClearKeys : stored.clearKeys;
    if (counter.writableShardCount < counter.shards.length) {
      // Announced: acknowledge through presence; memory already reads the new shards.
      record.announcedSinceMs ??= monotonicNowMs();
      this.announced.add(name);
      if (modRevision > this.ackWantedRevision) this.ackWantedRevision = modRevision;
    } else {
      record.announcedSinceMs = undefined;
      this.announced.delete(name);
    }
  }

  private forgetCounter(name: string): void {
    const counter = this.counters.get(name);
    if (counter === undefined) return;
    for (const shard of counter.shards) this.countShard(shard.pairIndex, -1);
    this.counters.delete(name);
    this.records.delete(name);
    this.announced.delete(name);
    // A delete: every router acknowledges it (deleteCounters waits for that).
    if (this.appliedRevisionInFlight > this.ackWantedRevision) this.ackWantedRevision = this.appliedRevisionInFlight;
  }

  private countShard(pairIndex: number, delta: number): void {
    while (this.shardsPerPair.length <= pairIndex) this.shardsPerPair.push(0);
    this.shardsPerPair[pairIndex]! += delta;
    this.totalShardCount += delta;
  }

  private applyPair(pairIndex: number, kv: IKeyValue): void {
    const stored = checkPair(pairIndex, parseJson(`pair ${pairIndex}`, kv.value));
    const pair: PairInfo = {
      pairIndex,
      primary: stored.primary,
      follower: stored.follower,
      epoch: BigInt(stored.epoch),
      inSync: stored.inSync,
      primaryId: stored.primaryId,
      followerId: stored.followerId,
      ackedLsn: BigInt(stored.ackedLsn),
      legacy: stored.legacy,
      replaced: stored.replaced,
      addedOnline: stored.addedOnline ?? false,
      draining: stored.draining ?? false,
      configVersion: BigInt(stored.configVersion ?? '0'),
    };
    const modRevision = Number(kv.mod_revision);
    if (pairIndex < this.pairs.length) {
      // Out of sync: every router acknowledges it (updatePair waits), so none
      // reads the follower for an exact sum once its primary acknowledges alone.
      if (this.pairs[pairIndex]!.inSync && !pair.inSync && modRevision > this.ackWantedRevision) this.ackWantedRevision = modRevision;
      // In place: callers hold PairInfo objects.
      Object.assign(this.pairs[pairIndex]!, pair);
      this.pairRevisions[pairIndex] = modRevision;
      return;
    }
    this.pendingPairs.set(pairIndex, { pair, modRevision });
    for (let next = this.pendingPairs.get(this.pairs.length); next !== undefined; next = this.pendingPairs.get(this.pairs.length)) {
      this.pendingPairs.delete(this.pairs.length);
      this.pairs.push(next.pair);
      this.pairRevisions.push(next.modRevision);
    }
  }

  private applyTask(shardId: number, kv: IKeyValue): void {
    const stored = checkTask(shardId, parseJson(`shard task ${shardId}`, kv.value));
    this.shardTasks.set({
      shardId,
      pairIndex: stored.pairIndex,
      kind: stored.kind,
      generation: stored.generation,
      createdMs: stored.createdMs,
    });
    this.taskRevisions.set(shardId, Number(kv.mod_revision));
  }

  private forgetTask(shardId: number): void {
    this.shardTasks.delete(shardId);
    this.taskRevisions.delete(shardId);
  }

  private relativeKey(key: Buffer): string {
    assert(key.subarray(0, this.prefixBytes.length).equals(this.prefixBytes), 'a key outside the prefix');
    return key.subarray(this.prefixBytes.length).toString('utf8');
  }

  /** The mod revision memory holds for a key, or undefined when memory holds no such key. */
  private revisionOf(relative: string): number | undefined {
    if (relative.startsWith(counterKeyPrefix)) return this.records.get(relative.slice(counterKeyPrefix.length))?.modRevision;
    if (relative.startsWith(pairKeyPrefix)) {
      const pairIndex = Number(relative.slice(pairKeyPrefix.length));
      return this.pairRevisions[pairIndex] ?? this.pendingPairs.get(pairIndex)?.modRevision;
    }
    if (relative === shardIdNextKey) return this.shardIdNextRevision === 0 ? undefined : this.shardIdNextRevision;
    if (relative.startsWith(taskKeyPrefix)) return this.taskRevisions.get(Number(relative.slice(taskKeyPrefix.length)));
    if (relative.startsWith(routerKeyPrefix)) return this.routers.get(relative.slice(routerKeyPrefix.length))?.modRevision;
    return undefined;
  }

  /** Every key memory holds (pairs excepted: never deleted). */
  private *heldKeys(): Generator<string> {
    for (const name of this.counters.keys()) yield counterKeyPrefix + name;
    if (this.shardIdNextRevision > 0) yield shardIdNextKey;
    for (const shardId of this.shardTasks.shardIds()) yield taskKeyPrefix + shardId;
    for (const id of this.routers.keys()) yield routerKeyPrefix + id;
  }

  // ---- Waiting ---------------------------------------------------------------

  /** Resolves once `ready` holds (checked as the watch applies changes); UNAVAILABLE after timeoutMs. */
  private waitUntil(ready: () => boolean, timeoutMs: number, what: string | (() => string)): Promise<void> {
    if (ready()) return Promise.resolve();
    if (this.closed) return Promise.reject(new TallyError(ErrorCode.unavailable, 'the directory is closed'));
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        ready,
        resolve,
        reject,
        timer: setTimeout(() => {
          this.waiters.delete(waiter);
          const description = typeof what === 'string' ? what : what();
          reject(new TallyError(ErrorCode.unavailable, `the directory store (etcd): waited ${timeoutMs} ms for ${description}`));
        }, timeoutMs),
      };
      this.waiters.add(waiter);
    });
  }

  private settleWaiters(): void {
    for (const waiter of this.waiters) {
      if (!waiter.ready()) continue;
      this.waiters.delete(waiter);
      clearTimeout(waiter.timer);
      waiter.resolve();
    }
  }

  /** Stops the watch and the keepalive and revokes the lease (this router's presence goes at once); the client stays open. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const timer of this.timers) clearInterval(timer);
    this.watch?.close();
    const closedError = new TallyError(ErrorCode.unavailable, 'the directory is closed');
    for (const waiter of this.waiters) {
      clearTimeout(waiter.timer);
      waiter.reject(closedError);
    }
    this.waiters.clear();
    for (const request of this.creationQueue.splice(0)) request.reject(closedError);
    await this.presence.close();
  }
}

/** True when `stored` is `counter` with more of the same: its shards and growths extended, never changed. */
function extendsCounter(counter: CounterInfo, stored: StoredCounter): boolean {
  if (stored.kind !== counter.kind || stored.createdMs !== counter.createdMs) return false;
  if (stored.shards.length < counter.shards.length || stored.growths.length < counter.growths.length) return false;
  for (let index = 0; index < counter.shards.length; index++) {
    const shard = counter.shards[index]!;
    const [shardId, pairIndex] = stored.shards[index]!;
    if (shard.shardId !== shardId || shard.pairIndex !== pairIndex) return false;
  }
  return true;
}

/** Why this router refuses exact reads and writes: it cannot vouch for its copy of the directory. */
function staleError(reason: string): TallyError {
  return new TallyError(ErrorCode.unavailable, `the directory (etcd) cannot be proven current: ${reason}`);
}

function samePair(left: PairInfo, right: PairInfo): boolean {
  return (
    left.primary === right.primary &&
    left.follower === right.follower &&
    left.epoch === right.epoch &&
    left.inSync === right.inSync &&
    left.primaryId === right.primaryId &&
    left.followerId === right.followerId &&
    left.ackedLsn === right.ackedLsn &&
    left.legacy === right.legacy &&
    left.replaced === right.replaced &&
    left.addedOnline === right.addedOnline &&
    left.draining === right.draining &&
    left.configVersion === right.configVersion
  );
}
