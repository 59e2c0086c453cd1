// In-memory shard totals: the node's answer to reads. Only ever changed after
// the log has committed the change (or while replaying it). Must not hold a
// total outside int64 (the contract's range; add() asserts it).
//
// Most shards are cold: one total each, millions of them. A Map<number,
// bigint> spends ~53 bytes of heap per shard (the entry plus a BigInt
// object) and leaves every one for the GC to trace. Here a shard is one slot
// of two typed arrays off the heap: its id in a Float64Array (shard ids are
// positive safe integers, exact in a double) and its total in a
// BigInt64Array (exactly int64). Open addressing with linear probing;
// deletes leave a tombstone (id -1) that inserts reuse and a rehash drops.
// At most 3/4 of the slots are used, so a shard costs 16 / load bytes:
// 21-43, about 30 on average (bench/memory/node-memory.mts measures it).
import assert from 'node:assert/strict';
import { isInt64 } from '../../wire/index.ts';

/** Slot id of a slot never used. Shard ids are > 0. */
const emptyId = 0;
/** Slot id of a slot whose shard was deleted: probes pass over it, inserts reuse it. */
const deletedId = -1;
const capacityMin = 16;
/** Used slots (live + tombstones) per slot before the table grows: 3/4. */
const usedPerSlotMax = 0.75;
/** Below this many live shards per slot the table shrinks (after drops): 1/8. */
const livePerSlotMin = 0.125;

/** Slot index a shard id's probe starts at: a 32-bit mix of both halves of the id. */
function hashOf(shardId: number, mask: number): number {
  const low = shardId >>> 0;
  const high = (shardId / 0x1_0000_0000) >>> 0;
  let hash = Math.imul(low ^ Math.imul(high, 0x85eb_ca6b), 0x9e37_79b1);
  hash ^= hash >>> 15;
  hash = Math.imul(hash, 0x2c1b_3c6d);
  hash ^= hash >>> 13;
  return hash & mask;
}

/** The smallest power of two with room for liveCount shards at half load. */
function capacityFor(liveCount: number): number {
  let capacity = capacityMin;
  while (capacity * 0.5 < liveCount) capacity *= 2;
  return capacity;
}

export class ShardTotals {
  private ids = new Float64Array(capacityMin);
  private values = new BigInt64Array(capacityMin);
  private mask = capacityMin - 1;
  /** Shards held. */
  private liveCount = 0;
  /** Slots that are not empty: live shards and tombstones. */
  private usedCount = 0;

  get(shardId: number): bigint {
    const slot = this.slotOf(shardId);
    return slot < 0 ? 0n : this.values[slot]!;
  }

  add(shardId: number, amount: bigint): void {
    let slot = this.slotOf(shardId);
    if (slot < 0) slot = this.insert(shardId);
    const next = this.values[slot]! + amount;
    assert.ok(isInt64(next), `shard ${shardId} total left int64`);
    this.values[slot] = next;
  }

  /** Frees one shard's total (a dropped shard reads 0, like one never written). */
  delete(shardId: number): void {
    const slot = this.slotOf(shardId);
    if (slot < 0) return;
    this.ids[slot] = deletedId;
    this.values[slot] = 0n;
    this.liveCount--;
    if (this.ids.length > capacityMin && this.liveCount < this.ids.length * livePerSlotMin) this.rehash(capacityFor(this.liveCount));
  }

  /** Forgets everything: before a replay that rebuilds memory from the log. */
  clear(): void {
    this.ids = new Float64Array(capacityMin);
    this.values = new BigInt64Array(capacityMin);
    this.mask = capacityMin - 1;
    this.liveCount = 0;
    this.usedCount = 0;
  }

  /** Every shard id held, ascending, for reconciliation. */
  shardIds(): number[] {
    const held = new Float64Array(this.liveCount);
    let count = 0;
    for (let slot = 0; slot < this.ids.length; slot++) if (this.ids[slot]! > 0) held[count++] = this.ids[slot]!;
    assert.equal(count, this.liveCount, 'every live shard has one slot');
    return Array.from(held.sort());
  }

  get shardCount(): number {
    return this.liveCount;
  }

  /** Bytes the table holds (both arrays), for benches and metrics. */
  get memoryBytes(): number {
    return this.ids.byteLength + this.values.byteLength;
  }

  /** The slot holding shardId, or -1. */
  private slotOf(shardId: number): number {
    // Not an id (0 and -1 mark empty and deleted slots): held nowhere.
    if (!(shardId > 0)) return -1;
    const { ids, mask } = this;
    // Bounded: at most 3/4 of the slots are used, so a probe meets an empty one.
    for (let slot = hashOf(shardId, mask); ; slot = (slot + 1) & mask) {
      const id = ids[slot]!;
      if (id === shardId) return slot;
      if (id === emptyId) return -1;
    }
  }

  /** Takes a slot for a shard not held (total 0), growing the table first when needed. */
  private insert(shardId: number): number {
    assert.ok(Number.isSafeInteger(shardId) && shardId > 0, `shard id ${shardId} is not a positive safe integer`);
    if (this.usedCount + 1 > this.ids.length * usedPerSlotMax) this.rehash(capacityFor(this.liveCount + 1));
    const { ids, mask } = this;
    // The first tombstone on the probe path is reused; the shard is known not to be further on.
    let slot = hashOf(shardId, mask);
    while (ids[slot] !== emptyId && ids[slot] !== deletedId) slot = (slot + 1) & mask;
    if (ids[slot] === emptyId) this.usedCount++;
    ids[slot] = shardId;
    this.values[slot] = 0n;
    this.liveCount++;
    return slot;
  }

  /** Moves every live shard into fresh arrays of `capacity` slots, dropping tombstones. */
  private rehash(capacity: number): void {
    const { ids: oldIds, values: oldValues } = this;
    const ids = new Float64Array(capacity);
    const values = new BigInt64Array(capacity);
    const mask = capacity - 1;
    for (let oldSlot = 0; oldSlot < oldIds.length; oldSlot++) {
      const id = oldIds[oldSlot]!;
      if (id <= 0) continue;
      let slot = hashOf(id, mask);
      while (ids[slot] !== emptyId) slot = (slot + 1) & mask;
      ids[slot] = id;
      values[slot] = oldValues[oldSlot]!;
    }
    this.ids = ids;
    this.values = values;
    this.mask = mask;
    this.usedCount = this.liveCount;
  }
}
