// The directory in memory, whichever store keeps it: counters, pairs, shards
// per pair, the shard-task table and their counts, every read the hot path
// makes, and the rules both stores keep (a new counter and a new pair and
// their defaults, the next pair state, --pairs against the stored pairs,
// kind guards, caps, placement). A store decides what to change, makes it
// durable, and only then applies it here, so memory never holds what the
// store does not. Pure: no SQL, no etcd.
import assert from 'node:assert';
import { ErrorCode, TallyError, type MonotonicClock, type WindowSetting } from '../../wire/index.ts';
import {
  capWarnings,
  checkCreationCaps,
  checkDrainable,
  checkPairAddable,
  checkPlaceable,
  checkShardCountChange,
  checkShardsTotalCap,
} from './checks.ts';
import {
  type CounterInfo,
  type CounterKind,
  type DirectoryLimits,
  type Growth,
  type PairAddresses,
  type PairInfo,
  type PairUpdate,
  type ShardInfo,
  type ShardTask,
  nextPairState,
  zoneOf,
} from './contract.ts';
import { choosePairs, zoneWarningOf } from './placement.ts';
import { snapshotCounterOf, snapshotPairOf, type SnapshotCounter, type SnapshotPair } from './snapshot.ts';
import { ShardTaskTable } from './shard-task-table.ts';
import { CounterTable } from './counter-table.ts';
import type { CounterColumns } from './contract.ts';
import { CounterView, plainCounter, sameCounter } from './counter-view.ts';

/** The fields a counter is created with; the store adds its shards. */
export interface NewCounter {
  name: string;
  kind: CounterKind;
  createdMs: number;
  /** Shards it is created with: one, or a membership counter's fixed partitions. */
  shardCount: number;
  autoscale: boolean;
  window: WindowSetting;
  generation: number;
  ttlMs: number | null;
}

export class DirectoryModel {
  /** Counters as columns by slot; callers get CounterView handles on them. */
  private readonly counters: CounterTable;
  /**
   * Counters removed since this model was made, never going back: a reader
   * that saw it unchanged across an await knows no handle it holds was
   * deleted meanwhile, without looking each name up again.
   */
  removedCount = 0;
  private readonly pairs: PairInfo[] = [];
  private readonly shardsPerPair: number[] = [];
  /** Sum of shardsPerPair: what shardsTotalMax bounds. */
  private totalShardCount = 0;
  /** Drops and clears not yet confirmed by their node, by shard id. */
  readonly shardTasks = new ShardTaskTable();

  constructor(
    readonly limits: DirectoryLimits,
    /** Idle times of counters (lastWriteMonotonicMs). */
    readonly monotonicNow: MonotonicClock,
  ) {
    this.counters = new CounterTable(monotonicNow);
  }

  // ---- Reads ---------------------------------------------------------------

  get(name: string): CounterView | undefined {
    const slot = this.counters.slotOf(name);
    return slot === undefined ? undefined : new CounterView(this.counters, slot, this.counters.incarnationOf(slot), name);
  }

  /** True when both handles name one counter (not one deleted and created again under its name). */
  same(a: CounterInfo | undefined, b: CounterInfo | undefined): boolean {
    return sameCounter(a, b);
  }

  has(name: string): boolean {
    return this.counters.has(name);
  }

  /** The counter, or NOT_FOUND. */
  existing(name: string): CounterView {
    const counter = this.get(name);
    if (counter === undefined) throw new TallyError(ErrorCode.notFound, `counter "${name}" does not exist`);
    return counter;
  }

  /** In creation order, live: survives creations (visited at the end) and deletions (skipped) between steps. */
  /** See Directory.liveCounters. */
  liveCounters(reuseHandle = false): IterableIterator<CounterInfo> {
    return new LiveCounters(this.counters, reuseHandle);
  }

  counterNames(): IterableIterator<string> {
    return this.counters.names();
  }

  get counterCount(): number {
    return this.counters.size;
  }

  /** Shards over all counters. */
  get shardCount(): number {
    return this.totalShardCount;
  }

  pair(pairIndex: number): PairInfo {
    const pair = this.pairs[pairIndex];
    if (pair === undefined) throw new Error(`no pair ${pairIndex}`);
    return pair;
  }

  /** The pair whose primary or follower is at address, or undefined. */
  pairOf(address: string): PairInfo | undefined {
    return this.pairs.find((pair) => pair.primary === address || pair.follower === address);
  }

  allPairs(): readonly PairInfo[] {
    return this.pairs;
  }

  shardCountOfPair(pairIndex: number): number {
    return this.shardsPerPair[pairIndex] ?? 0;
  }

  /** Shards per pair over all counters, one entry per pair: what placement balances. */
  placementTotals(): number[] {
    return this.pairs.map((_, pairIndex) => this.shardsPerPair[pairIndex] ?? 0);
  }

  /** The memory half of an export: pairs, counters and tasks as a snapshot writes them. */
  snapshotParts(): { pairs: SnapshotPair[]; counters: SnapshotCounter[]; shardTasks: ShardTask[] } {
    return {
      pairs: this.pairs.map(snapshotPairOf),
      counters: Array.from(this.liveCounters(), snapshotCounterOf),
      shardTasks: this.shardTasks.all().map((task) => ({ ...task })),
    };
  }

  capWarnings(): string[] {
    return capWarnings({ counters: this.counters.size, shards: this.totalShardCount }, this.limits);
  }

  // ---- Rules ---------------------------------------------------------------

  /**
   * A write's counter as memory holds it, marked written now; undefined
   * when it does not exist yet. FAILED_PRECONDITION for another kind.
   */
  resolve(name: string, kind: CounterKind): CounterView | undefined {
    const existing = this.get(name);
    if (existing === undefined) return undefined;
    if (existing.kind !== kind)
      throw new TallyError(ErrorCode.failedPrecondition, `counter "${name}" is a ${existing.kind} counter, not a ${kind} counter`);
    this.touch(existing);
    return existing;
  }

  /**
   * A write's counters as memory holds them: marks each one that exists
   * written now (one lookup per run of a name: batches name one counter many
   * times in a row) and returns the names that do not exist yet.
   * FAILED_PRECONDITION for a counter of another kind, before anything changes.
   */
  missing(names: readonly string[], kind: CounterKind): Set<string> {
    const missing = new Set<string>();
    const nowMs = this.monotonicNow();
    let previous: string | undefined;
    for (const name of names) {
      if (name === previous) continue;
      previous = name;
      const slot = this.counters.slotOf(name);
      if (slot === undefined) {
        missing.add(name);
        continue;
      }
      const existingKind = this.counters.kindOf(slot);
      if (existingKind !== kind)
        throw new TallyError(ErrorCode.failedPrecondition, `counter "${name}" is a ${existingKind} counter, not a ${kind} counter`);
      this.counters.touch(slot, nowMs);
    }
    return missing;
  }

  /** Every name's counter, in order (each must exist): one lookup per run of a name. */
  inOrder(names: readonly string[]): CounterView[] {
    const found: CounterView[] = new Array(names.length);
    let last: CounterView | undefined;
    for (let index = 0; index < names.length; index++) {
      const name = names[index]!;
      if (last === undefined || last.name !== name) last = this.get(name)!;
      found[index] = last;
    }
    return found;
  }

  /**
   * Slots of the named counters, in order (each must exist), into `slots`:
   * the write path routes by slot, with no handle per counter.
   */
  slotsOf(names: readonly string[], slots: Int32Array): void {
    for (let index = 0; index < names.length; index++) {
      const slot = this.counters.slotOf(names[index]!);
      // Not assert(cond, `template`): the message would be built on every call.
      if (slot === undefined) assert.fail(`counter ${names[index]} resolved but not held`);
      slots[index] = slot;
    }
  }

  /** The columns the write path reads by slot. */
  get columns(): CounterColumns {
    return this.counters;
  }

  /**
   * Creating `count` counters of `kind` on top of what is held and what is
   * already planned: the caps, a directory without pairs, every pair draining.
   */
  checkCreation(count: number, kind: CounterKind, partitions: number, planned = { counters: 0, shards: 0 }): void {
    checkCreationCaps(
      count,
      kind,
      partitions,
      { counters: this.counters.size + planned.counters, shards: this.totalShardCount + planned.shards },
      this.limits,
    );
    if (this.pairs.length === 0)
      throw new TallyError(
        ErrorCode.failedPrecondition,
        'the directory holds no node pairs: add one (tally pair add) before creating counters',
      );
    checkPlaceable(this.pairs);
  }

  /** Growing a counter to shardCount: NOT_FOUND, INVALID_ARGUMENT, FAILED_PRECONDITION (see checkShardCountChange); returns it. */
  checkShardCountChange(name: string, shardCount: number): CounterInfo {
    return checkShardCountChange(name, this.get(name), shardCount);
  }

  checkShardsTotal(addCount: number): void {
    checkShardsTotalCap(addCount, this.totalShardCount, this.limits);
  }

  checkWindowSettable(counter: CounterInfo): void {
    if (counter.kind !== 'total')
      throw new TallyError(
        ErrorCode.failedPrecondition,
        `counter "${counter.name}" is a ${counter.kind} counter: only totals have windows`,
      );
  }

  checkAutoscaleSettable(counter: CounterInfo, autoscale: boolean): void {
    if (autoscale && counter.kind === 'membership')
      throw new TallyError(ErrorCode.failedPrecondition, `${counter.name} is a membership counter: its partitions are fixed`);
  }

  checkPairAddable(addresses: PairAddresses): void {
    checkPairAddable(addresses, (address) => this.pairOf(address));
  }

  checkDrainable(pairIndex: number, draining: boolean): void {
    if (draining) checkDrainable(this.pair(pairIndex), this.pairs);
  }

  /**
   * Pairs for `addCount` new shards of a counter holding `held`: the zones
   * with fewest of its shards (a pair's zone is its primary's), then the
   * pairs with fewest of its shards, then fewest overall (`totals`, updated,
   * so shards planned earlier in one transaction count).
   */
  place(held: readonly ShardInfo[], addCount: number, totals: number[]): number[] {
    checkPlaceable(this.pairs);
    const mine = this.pairs.map(() => 0);
    for (const shard of held) if (shard.pairIndex < mine.length) mine[shard.pairIndex]!++;
    const chosen = choosePairs(
      mine,
      totals,
      addCount,
      (pairIndex) => this.pairs[pairIndex]!.draining,
      (pairIndex) => zoneOf(this.pairs[pairIndex]!, this.pairs[pairIndex]!.primary),
    );
    for (const pairIndex of chosen) totals[pairIndex]!++;
    return chosen;
  }

  /**
   * Why a pair's two nodes share a failure domain while the cluster has
   * another ('' when they do not, or zones are not reported).
   */
  zoneWarning(pairIndex: number): string {
    const pair = this.pair(pairIndex);
    const clusterZones = new Set(this.pairs.flatMap((each) => [zoneOf(each, each.primary), zoneOf(each, each.follower)]));
    return zoneWarningOf(zoneOf(pair, pair.primary), zoneOf(pair, pair.follower), clusterZones);
  }

  /** The pair after `update` (see nextPairState): the store persists it, then puts it here. */
  nextPair(pairIndex: number, update: PairUpdate): PairInfo {
    return nextPairState(this.pair(pairIndex), update);
  }

  /**
   * --pairs against the pairs held: the same members at each index (a
   * failover may have swapped roles) unless an operator replaced a node
   * (then the directory's win, with a warning). Returns the warnings;
   * FAILED_PRECONDITION on a mismatch.
   */
  checkConfiguredPairs(configured: readonly PairAddresses[]): string[] {
    const warnings: string[] = [];
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
      warnings.push(
        `pair ${pairIndex} is ${heldSet} since a node replacement, but ${configuredSet} in --pairs: using the directory's (update --pairs)`,
      );
    }
    return warnings;
  }

  /** A counter with its creation defaults, no shards yet (the store adds them with addShards). */
  newCounter(name: string, kind: CounterKind, createdMs: number, partitions: number): NewCounter {
    return {
      name,
      kind,
      createdMs,
      shardCount: kind === 'membership' ? partitions : 1,
      autoscale: kind !== 'membership',
      window: { bucketMs: 0, retentionMs: 0 },
      generation: 0,
      ttlMs: null,
    };
  }

  // ---- Changes, applied after the store made them durable -------------------

  /** Adds a counter without shards (addShards follows); its idle clock starts now. */
  addCounter(fields: Omit<NewCounter, 'shardCount'>): CounterView {
    const slot = this.counters.add(fields.name, {
      kind: fields.kind,
      window: fields.window,
      createdMs: fields.createdMs,
      autoscale: fields.autoscale,
      generation: fields.generation,
      ttlMs: fields.ttlMs,
      lastWriteMonotonicMs: this.monotonicNow(),
    });
    return new CounterView(this.counters, slot, this.counters.incarnationOf(slot), fields.name);
  }

  /** Appends shards to a counter; writable: the writable shard count from now on (undefined: all of them). */
  addShards(counter: CounterInfo, shards: readonly ShardInfo[], writable?: number): void {
    const slot = this.slotOfHandle(counter);
    for (const shard of shards) {
      this.counters.addShard(slot, shard);
      this.countShard(shard.pairIndex, 1);
    }
    this.counters.setWritableShardCount(slot, writable ?? this.counters.shardCountOf(slot));
  }

  /** A counter's settings as stored now (window, autoscale, generation, TTL): only what differs changes. */
  updateCounter(counter: CounterInfo, settings: Partial<Pick<CounterInfo, 'window' | 'autoscale' | 'generation' | 'ttlMs'>>): void {
    const { window, autoscale, generation, ttlMs } = settings;
    const slot = this.slotOfHandle(counter);
    // One frozen object per distinct setting: readers compare windows by identity.
    if (window !== undefined) this.counters.setWindow(slot, window);
    if (autoscale !== undefined) this.counters.setAutoscale(slot, autoscale);
    if (generation !== undefined) this.counters.setGeneration(slot, generation);
    if (ttlMs !== undefined) this.counters.setTtl(slot, ttlMs);
  }

  /** Records a growth (oldest first: keyed retries consult where earlier shard counts sent a key). */
  addGrowth(counter: CounterInfo, growth: Growth): void {
    this.counters.addGrowth(this.slotOfHandle(counter), growth);
  }

  /** Restarts a counter's idle clock, as a write does (a TTL just set must not delete it at once). */
  touch(counter: CounterInfo): void {
    this.counters.touch(this.slotOfHandle(counter), this.monotonicNow());
  }

  /** Removes a counter and its shards from the counts; returns it (undefined when absent). */
  removeCounter(name: string): CounterInfo | undefined {
    const counter = this.get(name);
    if (counter === undefined) return undefined;
    const removed = plainCounter(counter);
    for (const shard of removed.shards) this.countShard(shard.pairIndex, -1);
    this.counters.remove(name);
    this.removedCount++;
    return removed;
  }

  /** A pair as stored: the next index is appended, a known one changed in place (callers hold PairInfo objects). */
  putPair(pair: PairInfo): PairInfo {
    const held = this.pairs[pair.pairIndex];
    if (held !== undefined) return Object.assign(held, pair);
    if (pair.pairIndex !== this.pairs.length) throw new Error(`pair ${pair.pairIndex} added after ${this.pairs.length - 1}`);
    this.pairs.push(pair);
    while (this.shardsPerPair.length < this.pairs.length) this.shardsPerPair.push(0);
    return pair;
  }

  setTask(task: ShardTask): void {
    this.shardTasks.set(task);
  }

  deleteTask(shardId: number): void {
    this.shardTasks.delete(shardId);
  }

  /** The slot of a live handle this model gave out (a deleted counter's is refused: changes apply to live counters only). */
  private slotOfHandle(counter: CounterInfo): number {
    if (!(counter instanceof CounterView) || !this.same(counter, this.get(counter.name)))
      throw new Error(`counter ${counter.name} is not held by this directory`);
    return counter.slot;
  }

  private countShard(pairIndex: number, delta: number): void {
    while (this.shardsPerPair.length <= pairIndex) this.shardsPerPair.push(0);
    this.shardsPerPair[pairIndex]! += delta;
    this.totalShardCount += delta;
  }
}

/**
 * Every counter as a handle, in creation order, live as a Map iterator is.
 * No generator and one result object, and with reuseHandle one handle: the
 * expiry sweep walks 100,000 counters a second and keeps only names.
 */
class LiveCounters implements IterableIterator<CounterInfo> {
  /** Entries, not names: a walk step then costs no lookup in the name map (a cache miss or two at millions of names). */
  private readonly entries: IterableIterator<[string, number]>;
  private readonly result: { value: CounterInfo | undefined; done: false } = { value: undefined, done: false };

  private reused: CounterView | undefined;

  constructor(
    private readonly table: CounterTable,
    private readonly reuseHandle: boolean,
  ) {
    this.entries = table.entries();
  }

  next(): IteratorResult<CounterInfo> {
    const step = this.entries.next();
    if (step.done === true) return { value: undefined, done: true };
    const [name, slot] = step.value;
    const incarnation = this.table.incarnationOf(slot);
    if (!this.reuseHandle) this.result.value = new CounterView(this.table, slot, incarnation, name);
    else if (this.reused === undefined) this.result.value = this.reused = new CounterView(this.table, slot, incarnation, name);
    else this.reused.repoint(slot, incarnation, name);
    return this.result as IteratorYieldResult<CounterInfo>;
  }

  [Symbol.iterator](): IterableIterator<CounterInfo> {
    return this;
  }
}

/** A pair as first registered (by --pairs or tally pair add): epoch 1, no identities, no version yet. */
export function newPair(pairIndex: number, addresses: PairAddresses, addedOnline: boolean): PairInfo {
  return {
    pairIndex,
    primary: addresses.primary,
    follower: addresses.follower,
    epoch: 1n,
    inSync: false,
    primaryId: '',
    followerId: '',
    ackedLsn: 0n,
    legacy: false,
    replaced: false,
    addedOnline,
    draining: false,
    configVersion: 0n,
    advertised: {},
  };
}
