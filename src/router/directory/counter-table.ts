// The directory's counters as columns: every routing fact the hot path reads
// per counter lives in a typed array indexed by the counter's slot, with one
// Map from name to slot, so ten million counters cost ~140 bytes each (name
// and map entry included), not an object graph each. Rare facts (more than
// one shard, growths, a TTL) live in side maps by slot. Pure storage: the
// rules stay in DirectoryModel.
import assert from 'node:assert';
import type { WindowSetting } from '../../wire/index.ts';
import { counterKinds, type CounterColumns, type CounterKind, type Growth, type ShardInfo } from './contract.ts';

/** The columns a counter is created with (its shards follow with addShard). */
export interface CounterRow {
  kind: CounterKind;
  window: WindowSetting;
  createdMs: number;
  autoscale: boolean;
  generation: number;
  ttlMs: number | null;
  lastWriteMonotonicMs: number;
}

const initialCapacity = 1_024;
const autoscaleBit = 0b100;
const kindMask = 0b011;
const uint16Max = 0xffff;
const uint32Max = 0xffff_ffff;
/** In firstShardIds: the id is too large for the column and sits in largeShardIds. */
const largeShardId = uint32Max;

/**
 * A freed slot is given to a new counter only after this long: a caller
 * that resolved the deleted counter before it went (an increment in flight,
 * a read) goes on reading its last facts meanwhile, as it would have from
 * an object, never another counter's. Longer than any call's deadline.
 */
export const slotReuseDelayMs = 10 * 60_000;

export class CounterTable implements CounterColumns {
  private readonly slotOfName = new Map<string, number>();
  /** Slots never used yet start at `highWater`; freed ones wait in `freed` (oldest first) until reusable. */
  private highWater = 0;
  private freedSlots: number[] = [];
  private freedAtMs: number[] = [];
  private freedHead = 0;
  private capacity = 0;

  // Columns, one entry per slot.
  /**
   * Bumped when a freed slot is reused: a handle to its previous counter can
   * tell it is gone. 16 bits: a slot is reused at most once per
   * slotReuseDelayMs, so it cannot wrap around under a handle still in use.
   */
  private incarnations = new Uint16Array(0);
  /** kind index (counterKinds) in the low bits, autoscale above. */
  private kindFlags = new Uint8Array(0);
  private shardCounts = new Uint16Array(0);
  /** Shard 0's id (largeShardId: see largeShardIds) and pair; other shards of a counter grown past one are in `shardLists`. */
  private firstShardIds = new Uint32Array(0);
  private firstPairIndexes = new Uint16Array(0);
  private generations = new Uint32Array(0);
  private windowIndexes = new Uint16Array(0);
  private createdMs = new Float64Array(0);
  private lastWriteMonotonicMs = new Float64Array(0);

  // Side maps by slot, for the few counters that need them.
  private readonly shardLists = new Map<number, ShardInfo[]>();
  private readonly growthLists = new Map<number, Growth[]>();
  private readonly ttls = new Map<number, number | null>();
  /** Writable shard counts that differ from the shard count: a growth announced, not yet written to. */
  private readonly writableShardCounts = new Map<number, number>();
  private readonly largeShardIds = new Map<number, number>();

  /** Distinct window settings, each one frozen object: readers compare a counter's window by identity. */
  private readonly windows: WindowSetting[] = [Object.freeze({ bucketMs: 0, retentionMs: 0 })];
  private readonly windowIndexOf = new Map<string, number>([['0/0', 0]]);

  constructor(private readonly monotonicNow: () => number) {
    this.grow(initialCapacity);
  }

  get size(): number {
    return this.slotOfName.size;
  }

  /** Slots held by counters plus those freed and not yet reused (what the columns are sized for). */
  get slotsUsed(): number {
    return this.highWater;
  }

  slotOf(name: string): number | undefined {
    return this.slotOfName.get(name);
  }

  has(name: string): boolean {
    return this.slotOfName.has(name);
  }

  /** Names in insertion order, live as a Map iterator is (creations visited at the end, deletions skipped). */
  names(): IterableIterator<string> {
    return this.slotOfName.keys();
  }

  entries(): IterableIterator<[string, number]> {
    return this.slotOfName.entries();
  }

  /** Adds a counter without shards; returns its slot. */
  add(name: string, row: CounterRow): number {
    assert(!this.slotOfName.has(name), `counter ${name} added twice`);
    const slot = this.takeSlot();
    this.slotOfName.set(name, slot);
    this.kindFlags[slot] = counterKinds.indexOf(row.kind) | (row.autoscale ? autoscaleBit : 0);
    this.shardCounts[slot] = 0;
    this.firstShardIds[slot] = 0;
    this.firstPairIndexes[slot] = 0;
    this.setGeneration(slot, row.generation);
    this.setWindow(slot, row.window);
    this.createdMs[slot] = row.createdMs;
    this.lastWriteMonotonicMs[slot] = row.lastWriteMonotonicMs;
    this.setTtl(slot, row.ttlMs);
    return slot;
  }

  /**
   * Forgets the name; the slot's facts stay readable (through incarnation
   * `incarnationOf(slot)` before this call) until slotReuseDelayMs has passed.
   */
  remove(name: string): number | undefined {
    const slot = this.slotOfName.get(name);
    if (slot === undefined) return undefined;
    this.slotOfName.delete(name);
    this.freedSlots.push(slot);
    this.freedAtMs.push(this.monotonicNow());
    return slot;
  }

  incarnationOf(slot: number): number {
    return this.incarnations[slot]!;
  }

  // ---- Reads by slot ---------------------------------------------------------

  kindOf(slot: number): CounterKind {
    return counterKinds[this.kindFlags[slot]! & kindMask]!;
  }

  autoscaleOf(slot: number): boolean {
    return (this.kindFlags[slot]! & autoscaleBit) !== 0;
  }

  shardCountOf(slot: number): number {
    return this.shardCounts[slot]!;
  }

  writableShardCountOf(slot: number): number {
    return this.writableShardCounts.get(slot) ?? this.shardCounts[slot]!;
  }

  shardIdOf(slot: number, shardIndex: number): number {
    return shardIndex === 0 ? this.firstShardIdOf(slot) : this.shardLists.get(slot)![shardIndex]!.shardId;
  }

  private firstShardIdOf(slot: number): number {
    const shardId = this.firstShardIds[slot]!;
    return shardId === largeShardId ? this.largeShardIds.get(slot)! : shardId;
  }

  pairIndexOf(slot: number, shardIndex: number): number {
    return shardIndex === 0 ? this.firstPairIndexes[slot]! : this.shardLists.get(slot)![shardIndex]!.pairIndex;
  }

  /** Every shard; a counter of one shard gets a new array each call (callers keep it, not the table). */
  shardsOf(slot: number): ShardInfo[] {
    const list = this.shardLists.get(slot);
    if (list !== undefined) return list;
    if (this.shardCounts[slot] === 0) return [];
    return [{ shardIndex: 0, shardId: this.firstShardIdOf(slot), pairIndex: this.firstPairIndexes[slot]! }];
  }

  generationOf(slot: number): number {
    return this.generations[slot]!;
  }

  windowOf(slot: number): WindowSetting {
    return this.windows[this.windowIndexes[slot]!]!;
  }

  createdMsOf(slot: number): number {
    return this.createdMs[slot]!;
  }

  lastWriteMonotonicMsOf(slot: number): number {
    return this.lastWriteMonotonicMs[slot]!;
  }

  growthsOf(slot: number): readonly Growth[] {
    return this.growthLists.get(slot) ?? noGrowths;
  }

  ttlMsOf(slot: number): number | null {
    const ttlMs = this.ttls.get(slot);
    return ttlMs === undefined ? null : ttlMs;
  }

  // ---- Changes by slot -------------------------------------------------------

  /** Appends a shard (its index must be the next one). */
  addShard(slot: number, shard: ShardInfo): void {
    const count = this.shardCounts[slot]!;
    assert(shard.shardIndex === count, `shard ${shard.shardIndex} added after ${count}`);
    assert(count < uint16Max && shard.pairIndex <= uint16Max && Number.isSafeInteger(shard.shardId) && shard.shardId >= 0);
    if (count === 0) {
      if (shard.shardId >= largeShardId) this.largeShardIds.set(slot, shard.shardId);
      this.firstShardIds[slot] = Math.min(shard.shardId, largeShardId);
      this.firstPairIndexes[slot] = shard.pairIndex;
    } else {
      let list = this.shardLists.get(slot);
      if (list === undefined) {
        list = [{ shardIndex: 0, shardId: this.firstShardIdOf(slot), pairIndex: this.firstPairIndexes[slot]! }];
        this.shardLists.set(slot, list);
      }
      list.push({ shardIndex: shard.shardIndex, shardId: shard.shardId, pairIndex: shard.pairIndex });
    }
    // The writable count stays what it was until setWritableShardCount says otherwise.
    if (!this.writableShardCounts.has(slot)) this.writableShardCounts.set(slot, count);
    this.shardCounts[slot] = count + 1;
  }

  setWritableShardCount(slot: number, writableShardCount: number): void {
    assert(writableShardCount >= 0 && writableShardCount <= this.shardCounts[slot]!);
    if (writableShardCount === this.shardCounts[slot]) this.writableShardCounts.delete(slot);
    else this.writableShardCounts.set(slot, writableShardCount);
  }

  setWindow(slot: number, window: WindowSetting): void {
    const key = `${window.bucketMs}/${window.retentionMs}`;
    let index = this.windowIndexOf.get(key);
    if (index === undefined) {
      index = this.windows.length;
      assert(index <= uint16Max, 'too many distinct window settings');
      this.windows.push(Object.freeze({ bucketMs: window.bucketMs, retentionMs: window.retentionMs }));
      this.windowIndexOf.set(key, index);
    }
    this.windowIndexes[slot] = index;
  }

  setAutoscale(slot: number, autoscale: boolean): void {
    this.kindFlags[slot] = (this.kindFlags[slot]! & kindMask) | (autoscale ? autoscaleBit : 0);
  }

  setGeneration(slot: number, generation: number): void {
    assert(Number.isInteger(generation) && generation >= 0 && generation <= uint32Max, `generation ${generation}`);
    this.generations[slot] = generation;
  }

  setTtl(slot: number, ttlMs: number | null): void {
    if (ttlMs === null) this.ttls.delete(slot);
    else this.ttls.set(slot, ttlMs);
  }

  addGrowth(slot: number, growth: Growth): void {
    let list = this.growthLists.get(slot);
    if (list === undefined) this.growthLists.set(slot, (list = []));
    list.push({ previousShardCount: growth.previousShardCount, grownMs: growth.grownMs });
  }

  touch(slot: number, monotonicNowMs: number): void {
    this.lastWriteMonotonicMs[slot] = monotonicNowMs;
  }

  // ---- Slots -----------------------------------------------------------------

  private takeSlot(): number {
    if (this.freedHead < this.freedSlots.length && this.monotonicNow() - this.freedAtMs[this.freedHead]! >= slotReuseDelayMs) {
      const slot = this.freedSlots[this.freedHead]!;
      this.freedHead++;
      if (this.freedHead * 2 >= this.freedSlots.length && this.freedHead >= 64) {
        this.freedSlots = this.freedSlots.slice(this.freedHead);
        this.freedAtMs = this.freedAtMs.slice(this.freedHead);
        this.freedHead = 0;
      }
      this.incarnations[slot] = (this.incarnations[slot]! + 1) & uint16Max;
      this.shardLists.delete(slot);
      this.growthLists.delete(slot);
      this.ttls.delete(slot);
      this.writableShardCounts.delete(slot);
      this.largeShardIds.delete(slot);
      return slot;
    }
    if (this.highWater === this.capacity) this.grow(this.capacity * 2);
    return this.highWater++;
  }

  private grow(capacity: number): void {
    const widen = <T extends Uint8Array | Uint16Array | Uint32Array | Float64Array>(old: T, make: (length: number) => T): T => {
      const next = make(capacity);
      next.set(old);
      return next;
    };
    this.incarnations = widen(this.incarnations, (length) => new Uint16Array(length));
    this.kindFlags = widen(this.kindFlags, (length) => new Uint8Array(length));
    this.shardCounts = widen(this.shardCounts, (length) => new Uint16Array(length));
    this.firstShardIds = widen(this.firstShardIds, (length) => new Uint32Array(length));
    this.firstPairIndexes = widen(this.firstPairIndexes, (length) => new Uint16Array(length));
    this.generations = widen(this.generations, (length) => new Uint32Array(length));
    this.windowIndexes = widen(this.windowIndexes, (length) => new Uint16Array(length));
    this.createdMs = widen(this.createdMs, (length) => new Float64Array(length));
    this.lastWriteMonotonicMs = widen(this.lastWriteMonotonicMs, (length) => new Float64Array(length));
    this.capacity = capacity;
  }
}

const noGrowths: readonly Growth[] = Object.freeze([]);
