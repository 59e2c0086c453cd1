// The counter directory in etcd, shared by several routers. Memory changes
// only by applying the watch, in revision order (this router's own changes
// too: mirror.ts); every change is one etcd transaction conditioned on the
// revisions memory holds of the keys it read, and resolves once the watch
// has brought it back (transactions.ts). It must never let a router write
// where another's exact read would miss it: growth is announced,
// acknowledged by every live router, then activated (growth.ts). Keys and
// values: schema.ts; the contract: contract.ts. A router whose lease keepalive has not succeeded for half the lease TTL,
// or whose watch is down, or whose watch has not brought back a presence
// write sent within the last lease TTL (it may lag behind etcd: see "Proof
// of currency" in presence.ts), is not fresh: its changes fail
// UNAVAILABLE and `fresh` tells the router to refuse writes and exact reads
// (others may have acted on a change it has not applied, their wait for its
// acknowledgement given up). It renews its lease only while its watch is
// connected: a router that cannot follow the directory holds growth back no longer than the TTL.
import assert from 'node:assert';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Etcd3, IRequestOp, Namespace } from 'etcd3';
import {
  ErrorCode,
  TallyError,
  monotonicNowMs,
  newCountersPerCallMax,
  type MonotonicClock,
  type WindowSetting,
} from '../../../wire/index.ts';
import {
  clearKeysPerCounterMax,
  directoryWatchApplyTimeoutMs,
  etcdCallTimeoutMs,
  etcdRetryDelayMs,
  etcdTxnOpsMax,
  etcdWatchReconnectMaxMs,
  etcdWatchReconnectMinMs,
  type Logger,
} from '../../../common/index.ts';
import {
  defaultDirectoryLimits,
  type ClearOutcome,
  type CounterInfo,
  type DeleteOptions,
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
import { DirectoryModel, newPair } from '../model.ts';
import { snapshotFormat, snapshotVersion, type DirectorySnapshot } from '../snapshot.ts';
import { ModelBackedDirectory } from '../store-base.ts';
import { staleError, storeError } from './client.ts';
import { CounterCreation, EtcdDeletion } from './counters.ts';
import { GrowthProtocol } from './growth.ts';
import { counterKeyPrefix, encodeCounter, encodePair, encodeTask, pairKeyPrefix, prefixEnd } from './schema.ts';

import { samePair, shardIdNextKey, storedCounterOf, taskKeyPrefix, type StoredCounter } from './schema.ts';
import { EtcdMirror } from './mirror.ts';
import { RouterPresence } from './presence.ts';
import { EtcdTransactions, type PairUpdateFence } from './transactions.ts';
import { PrefixWatch } from './watch.ts';
import { newestRevisionOf, readPrefix, scanCounters } from './reads.ts';

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

export class EtcdDirectory extends ModelBackedDirectory implements Directory {
  private readonly client: Etcd3;
  private readonly ns: Namespace;
  private readonly prefix: string;
  private readonly prefixBytes: Buffer;
  private readonly routerId: string;
  private readonly now: () => number;
  private readonly logger: Logger;
  private readonly leaseTtlMs: number;
  private readonly pairUpdateFence: PairUpdateFence | undefined;
  private readonly mirror: EtcdMirror;
  private readonly txns: EtcdTransactions;
  private readonly creation: CounterCreation;
  private readonly deletion: EtcdDeletion;
  private readonly growth: GrowthProtocol;
  private readonly presence: RouterPresence;
  private watch: PrefixWatch | undefined;
  private watchDownSinceMs: number | undefined;
  private closed = false;
  private readonly timers: NodeJS.Timeout[] = [];

  private constructor(options: EtcdDirectoryOptions) {
    super(new DirectoryModel(options.limits ?? defaultDirectoryLimits, options.monotonicNow ?? monotonicNowMs));
    this.client = options.client;
    this.ns = options.client.namespace(options.prefix);
    this.prefix = options.prefix;
    this.prefixBytes = Buffer.from(options.prefix, 'utf8');
    this.routerId = options.routerId;
    // eslint-disable-next-line no-restricted-properties -- the clock of stored data (creation, growth, clear times); the router passes a steady one
    this.now = options.now ?? Date.now;
    this.logger = options.logger;
    this.leaseTtlMs = options.leaseTtlMs;
    this.pairUpdateFence = options.pairUpdateFence;
    this.mirror = new EtcdMirror(
      this.model,
      this.prefixBytes,
      options.logger,
      () => {
        this.txns.settleWaiters();
        this.presence.acknowledge(this.mirror.ackWantedRevision);
      },
      this.tombstoneTable,
    );
    const assertFresh = (): void => this.assertFresh();
    this.txns = new EtcdTransactions(this.ns, options.prefix, this.mirror, assertFresh);
    this.deletion = new EtcdDeletion({
      model: this.model,
      txns: this.txns,
      tombstones: this.tombstoneTable,
      now: this.now,
      nextTombstones: (names, deletedMs) => this.nextTombstones(names, deletedMs),
      prunable: (beforeMs) => this.prunable(beforeMs),
      awaitAcknowledged: (what) => this.awaitAcknowledged(what),
    });
    this.creation = new CounterCreation({
      mirror: this.mirror,
      txns: this.txns,
      now: this.now,
      staleReason: () => this.staleReason(),
      assertFresh,
    });
    this.presence = new RouterPresence({
      client: options.client,
      prefix: options.prefix,
      routerId: options.routerId,
      leaseTtlMs: options.leaseTtlMs,
      logger: options.logger,
      appliedRevision: () => this.mirror.appliedRevision,
      watchConnected: () => this.watch?.connected,
      watchStalled: (reason) => {
        this.logger.warn('the directory watch is not delivering: opening it again', { reason });
        this.watch?.reopen();
      },
    });
    this.growth = new GrowthProtocol({
      mirror: this.mirror,
      txns: this.txns,
      creation: this.creation,
      now: this.now,
      logger: options.logger,
      routerId: options.routerId,
      acknowledgementWaitMs: () => this.presence.acknowledgementWaitMs,
      assertFresh,
      fresh: () => this.fresh,
      closed: () => this.closed,
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
        events: (events) => this.mirror.applyEvents(events),
        connected: () => {
          if (this.watchDownSinceMs !== undefined)
            this.logger.info('directory watch connected again', {
              router: this.routerId,
              downMs: Math.round(monotonicNowMs() - this.watchDownSinceMs),
            });
          this.watchDownSinceMs = undefined;
          this.presence.renewSoon();
          this.txns.settleWaiters();
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
    await this.txns.waitUntil(() => this.watch!.connected, etcdCallTimeoutMs * 2, 'the directory watch to connect');
    this.timers.push(setInterval(() => void this.growth.finishAnnounced(), this.leaseTtlMs));
    for (const timer of this.timers) timer.unref();
    // The read is this router's first acknowledgement: it has seen every announcement up to it.
    this.presence.acknowledge(revision);
    await this.reconcilePairs(configuredPairs);
    this.warnings.push(...this.model.capWarnings());
  }

  // ---- Reads beyond memory ------------------------------------------------

  /** See Directory.fresh. */
  get fresh(): boolean {
    return this.staleReason() === undefined;
  }

  /** Routers whose presence key exists now (this one included), by id. */
  liveRouterIds(): readonly string[] {
    return [...this.mirror.routers.keys()].sort();
  }

  /**
   * Up to `limit` counters in `range`, in byte order of their UTF-8 names:
   * one range read of etcd (which orders keys by their bytes), limited.
   */
  async scan(range: NameRange, limit: number): Promise<ListedCounterRow[]> {
    return scanCounters(this.client, this.prefix, range, limit);
  }

  /**
   * See Directory.readBarrier: fresh, and names memory does not hold are
   * read from etcd (one linearizable range per name, in one transaction);
   * memory then catches up with the revision etcd answered at, so a counter
   * created through another router before this read began is held here.
   */
  async readBarrier(names: readonly string[]): Promise<void> {
    this.assertFresh();
    const unknown = [...new Set(names)].filter((name) => !this.model.has(name));
    // Each unknown name read from etcd (linearizable, in transactions of
    // ranges): one that exists there is waited for until the watch has
    // brought its revision here; one absent there is absent.
    const newest = await newestRevisionOf(
      this.ns,
      unknown.map((name) => this.txns.key(counterKeyPrefix + name)),
    );
    if (newest === 0) return;
    await this.txns.waitUntil(
      () => this.mirror.appliedRevision >= newest,
      directoryWatchApplyTimeoutMs,
      `the directory watch to reach revision ${newest} for an exact read`,
    );
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
      shardIdNext: Math.max(Number(next ?? '1'), this.mirror.shardIdNext),
      ...this.model.snapshotParts(),
    };
  }

  // ---- Counters ---------------------------------------------------------------

  async getOrCreate(name: string, kind: CounterKind = 'total', partitions = 1): Promise<CounterInfo> {
    // A write resolves its counter here: not on a view this router cannot vouch for.
    this.assertFresh();
    return this.model.resolve(name, kind) ?? (await this.creation.getOrCreateMany([name], kind, partitions))[0]!;
  }

  /** See CounterCreation.getOrCreateMany. */
  getOrCreateMany(names: readonly string[], kind: CounterKind = 'total', partitions = 1): Promise<CounterInfo[]> {
    return this.creation.getOrCreateMany(names, kind, partitions);
  }

  /** See Directory.resolveSlots. */
  async resolveSlots(names: readonly string[], kind: CounterKind, slots: Int32Array): Promise<void> {
    await this.creation.getOrCreateMany(names, kind, 1);
    this.model.slotsOf(names, slots);
  }

  /** See GrowthProtocol.setShards. */
  setShards(name: string, shardCount: number): Promise<{ previousShardCount: number; counter: CounterInfo }> {
    return this.growth.setShards(name, shardCount);
  }

  async setWindow(name: string, window: WindowSetting): Promise<CounterInfo> {
    return this.changeCounter(name, (counter, stored) => {
      this.model.checkWindowSettable(counter);
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
    this.model.touch(counter);
    return counter;
  }

  async setAutoscale(name: string, autoscale: boolean): Promise<CounterInfo> {
    return this.changeCounter(name, (counter, stored) => {
      this.model.checkAutoscaleSettable(counter, autoscale);
      stored.autoscale = autoscale;
    });
  }

  /** One transaction rewriting one counter's value as `edit` changes it (NOT_FOUND when there is none). */
  private async changeCounter(name: string, edit: (counter: CounterInfo, stored: StoredCounter) => void): Promise<CounterInfo> {
    this.model.existing(name);
    return this.txns.change(`changing ${name}`, () => {
      const counter = this.model.existing(name);
      const stored = this.storedOf(counter);
      edit(counter, stored);
      const key = counterKeyPrefix + name;
      return { read: [key], ops: [this.txns.put(key, encodeCounter(name, stored))], result: () => this.model.existing(name) };
    });
  }

  async deleteCounter(name: string): Promise<CounterInfo> {
    this.model.existing(name);
    const deleted = await this.deleteCounters([name]);
    // Another router deleted it first.
    if (deleted.length === 0) throw new TallyError(ErrorCode.notFound, `counter "${name}" does not exist`);
    return deleted[0]!;
  }

  /** See EtcdDeletion.deleteCounters. */
  deleteCounters(names: readonly string[], options: DeleteOptions = {}): Promise<CounterInfo[]> {
    return this.deletion.deleteCounters(names, options);
  }

  deleteUpTo(name: string, incarnation: number): Promise<{ deleted: CounterInfo | undefined; applied: boolean }> {
    return this.deletion.deleteUpTo(name, incarnation);
  }

  pruneTombstones(retentionMs: number): Promise<number> {
    return this.deletion.pruneTombstones(this.now() - retentionMs);
  }

  /**
   * Clears a counter: bumps its generation and records a clear per shard in
   * one transaction; a keyed clear also records its key in the counter's
   * value (pruned past the window), so a retry through any router answers
   * the clear it made.
   */
  async clearCounter(name: string, key: Buffer, windowMs: number): Promise<ClearOutcome> {
    this.model.existing(name);
    const encodedKey = key.toString('base64');
    const outcome = await this.txns.change<ClearOutcome>(`clearing ${name}`, () => {
      const counter = this.model.existing(name);
      const nowMs = this.now();
      const recent = this.mirror.record(name)!.clearKeys.filter(([, , clearedMs]) => clearedMs > nowMs - windowMs);
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
      const ops: IRequestOp[] = [this.txns.put(counterKeyPrefix + name, encodeCounter(name, stored))];
      for (const shard of counter.shards)
        ops.push(this.putTask({ shardId: shard.shardId, pairIndex: shard.pairIndex, kind: 'clear', generation, createdMs: nowMs }));
      return { read: [counterKeyPrefix + name], ops, result: () => ({ counter: this.model.existing(name), generation, applied: true }) };
    });
    // Every live router tags its writes and reads with the new generation
    // before the clear goes out to the shards and returns: an increment made
    // through any router after Clear returned is never cleared away.
    await this.awaitAcknowledged(`the clear of ${name}`);
    return outcome;
  }

  /**
   * Forgets tasks their node has confirmed, only as they were sent: each
   * delete is conditioned on the task's key as memory holds it, so a newer
   * clear or a drop recorded meanwhile (by any router) stays owed.
   */
  async completeShardTasks(confirmed: readonly ShardTask[]): Promise<void> {
    const { shardTasks } = this.model;
    const done = confirmed.filter((task) => shardTasks.isOwedAsSent(task));
    for (let start = 0; start < done.length; start += etcdTxnOpsMax) {
      const chunk = done.slice(start, start + etcdTxnOpsMax);
      await this.txns.change('forgetting confirmed shard tasks', () => {
        const still = chunk.filter((task) => shardTasks.isOwedAsSent(task));
        if (still.length === 0) return { done: undefined };
        const keys = still.map((task) => taskKeyPrefix + task.shardId);
        return { read: keys, ops: keys.map((key) => this.txns.remove(key)), result: () => undefined };
      });
    }
  }

  // ---- Pairs ----------------------------------------------------------------

  /**
   * Changes a pair, conditioned on the pair as this router saw it when
   * called (and on the fence): FAILED_PRECONDITION when another change got
   * there first, with memory then holding the winner's. The epoch and the
   * acknowledged lsn never go back.
   */
  async updatePair(pairIndex: number, update: PairUpdate, options: { asSupervisor?: boolean } = {}): Promise<PairInfo> {
    const pair = this.model.pair(pairIndex);
    const wasInSync = pair.inSync;
    const seenRevision = this.mirror.pairRevision(pairIndex);
    const next = this.model.nextPair(pairIndex, update);
    const key = pairKeyPrefix + pairIndex;
    const lost = (why: string): TallyError =>
      new TallyError(
        ErrorCode.failedPrecondition,
        `pair ${pairIndex} was not changed: ${why}; the directory now holds epoch ${pair.epoch}`,
      );
    const changed = await this.txns.lane.run(async () => {
      this.assertFresh();
      if (this.mirror.pairRevision(pairIndex) !== seenRevision) throw lost('another change to it got there first');
      const outcome = await this.txns.commit(
        [key],
        [this.txns.put(key, encodePair(next))],
        options.asSupervisor === true ? this.pairUpdateFence : undefined,
      );
      // A retry of the transaction by the client may have found its own first attempt.
      if (outcome === 'committed' || samePair(pair, next)) return pair;
      throw lost(outcome === 'fenced' ? 'this router is no longer the supervisor' : 'another change to it got there first');
    });
    // Outside the lane: this router's other changes need not wait for it.
    if (wasInSync && !changed.inSync) await this.awaitAcknowledged(`pair ${pairIndex} out of sync`);
    return changed;
  }

  /** See Directory.addPair: one transaction creating pairs/<next index>, compared as absent. */
  async addPair(addresses: PairAddresses): Promise<PairInfo> {
    const pairIndex = await this.txns.change('adding a node pair', () => {
      this.model.checkPairAddable(addresses);
      const pair = newPair(this.model.allPairs().length, addresses, true);
      const key = pairKeyPrefix + pair.pairIndex;
      return { read: [key], ops: [this.txns.put(key, encodePair(pair))], result: () => pair.pairIndex };
    });
    return this.model.pair(pairIndex);
  }

  /** See Directory.setPairDraining: conditioned on the pair as memory holds it. */
  async setPairDraining(pairIndex: number, draining: boolean): Promise<PairInfo> {
    this.model.checkDrainable(pairIndex, draining);
    return this.updatePair(pairIndex, { draining });
  }

  /**
   * --pairs against etcd's, by the model's rule; configured pairs etcd
   * lacks are registered (the first router registers them all). Unlike the
   * embedded store, etcd may hold more pairs than --pairs names (added
   * online): etcd's are used, with a warning.
   */
  private async reconcilePairs(configured: readonly PairAddresses[]): Promise<void> {
    await this.txns.change('registering the configured node pairs', () => {
      this.model.checkConfiguredPairs(configured);
      const held = this.model.allPairs().length;
      if (configured.length <= held) return { done: undefined };
      const added = configured.slice(held).map((addresses, index) => newPair(held + index, addresses, false));
      return {
        read: added.map((pair) => pairKeyPrefix + pair.pairIndex),
        ops: added.map((pair) => this.txns.put(pairKeyPrefix + pair.pairIndex, encodePair(pair))),
        result: () => undefined,
      };
    });
    this.warnings.push(...this.model.checkConfiguredPairs(configured));
    const held = this.model.allPairs().length;
    if (configured.length > 0 && held > configured.length)
      this.warnings.push(
        `etcd holds ${held} node pairs but --pairs names ${configured.length}: using etcd's (pairs were added online; update --pairs)`,
      );
    if (held === 0)
      this.warnings.push('etcd holds no node pairs and none are configured (--pairs): no counter can be created until one is added');
  }

  // ---- Helpers ----------------------------------------------------------------

  private putTask(task: ShardTask): IRequestOp {
    return this.txns.put(taskKeyPrefix + task.shardId, encodeTask(task));
  }

  /** The value a counter's key holds, rebuilt from memory (which the transaction's compare vouches for). */
  private storedOf(counter: CounterInfo): StoredCounter {
    return storedCounterOf(counter, this.mirror.record(counter.name)!.clearKeys);
  }

  private awaitAcknowledged(what: string): Promise<void> {
    return this.txns.awaitAcknowledged(this.mirror.ackWantedRevision, what, this.presence.acknowledgementWaitMs);
  }

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

  // ---- Loading -------------------------------------------------------------------

  /**
   * Reads every key under the prefix at one revision (in pages; a page
   * larger than a gRPC message halves the page) and applies the difference
   * with memory. Returns the revision read.
   */
  private async load(strict: boolean): Promise<number> {
    const { kvs, revision } = await readPrefix(this.client, this.prefixBytes);
    this.mirror.applySnapshot(kvs, revision, strict);
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

  /** Stops the watch and the keepalive and revokes the lease (this router's presence goes at once); the client stays open. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const timer of this.timers) clearInterval(timer);
    this.watch?.close();
    const closedError = new TallyError(ErrorCode.unavailable, 'the directory is closed');
    this.txns.close(closedError);
    this.creation.close(closedError);
    await this.presence.close();
  }
}
