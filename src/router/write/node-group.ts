// One call's share for one node (NodeGroup): plain increments summed per
// shard into packed records, keyed ones kept an item each, and the int64 sum
// and key hash the increment path routes by. It sends nothing: the
// increment path hands the encoded group to the node's sender.
import { INT64_MAX, INT64_MIN, type WindowSetting } from '../../wire/index.ts';
import type { shardV1 } from '../../common/index.ts';
import { packedIncrementsSize, writePackedIncrement } from '../../wire/internal/index.ts';
import { itemsWireBytes, type ApplyItem, type OutgoingGroup } from '../nodes/index.ts';

/** FNV-1a, 32 bits: stable across processes and versions, cheap. */
export function hashKey(key: Buffer): number {
  let hash = 0x811c9dc5;
  for (let index = 0; index < key.length; index++) {
    hash ^= key[index]!;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}

const safeIntegerMax = BigInt(Number.MAX_SAFE_INTEGER);

/** a + b as an int64 (a number when exact), or undefined beyond int64. */
export function addInt64(a: number | bigint, b: number | bigint): number | bigint | undefined {
  if (typeof a === 'number' && typeof b === 'number') {
    // Both below 2^53 in size: a safe result is the exact sum, an unsafe one may be rounded.
    const sum = a + b;
    if (Number.isSafeInteger(sum)) return sum;
  }
  const sum = BigInt(a) + BigInt(b);
  if (sum > INT64_MAX || sum < INT64_MIN) return undefined;
  return sum <= safeIntegerMax && sum >= -safeIntegerMax ? Number(sum) : sum;
}

interface Run {
  window: WindowSetting;
  generation: number;
  /** Record positions in the group's sum columns. */
  positions: number[];
}

/** What one round's sends report back to apply(). */

/**
 * What one call sends one node: one atomic group. Plain (unkeyed) increments
 * to one shard are summed into one packed record; keyed increments stay one
 * item each (the node records each key). Only this call's increments are
 * summed: the node answers per group, and a group must fail alone (an
 * overflow, say) whatever else the node call carries. The sums are columns,
 * one entry per record: no object per shard or per increment.
 */
export class NodeGroup {
  /** Call item indexes (and their shard indexes) of the plain increments. */
  readonly plainIndexes: number[] = [];
  readonly plainShardIndexes: number[] = [];
  /** Call item indexes (and shard indexes) of the keyed items, in the order of `items`. */
  readonly keyedIndexes: number[] = [];
  readonly keyedShardIndexes: number[] = [];
  readonly items: ApplyItem[] = [];
  /** One entry per packed record: its shard, summed amount, increments summed, window setting and generation. */
  private readonly sumShardIds: number[] = [];
  private readonly sumAmounts: (number | bigint)[] = [];
  private readonly sumCounts: number[] = [];
  private readonly sumWindows: WindowSetting[] = [];
  private readonly sumGenerations: number[] = [];
  /** The open record of each shard id (a record closed because it would have left int64 stays behind). */
  private readonly openSumOf = new Map<number, number>();

  /**
   * `openSums`, when given: the open record of each of the call's counters
   * that has one shard, by its place among the call's names (-1: none yet),
   * shared by the round's groups; such a counter's increments all go to one
   * group, and an array by place costs no map entry per counter.
   */
  addPlain(
    index: number,
    shardIndex: number,
    shardId: number,
    amount: number | bigint,
    window: WindowSetting,
    generation = 0,
    openSums?: { positions: Int32Array; place: number },
  ): void {
    this.plainIndexes.push(index);
    this.plainShardIndexes.push(shardIndex);
    let position: number | undefined;
    if (openSums === undefined) position = this.openSumOf.get(shardId);
    else if (openSums.positions[openSums.place]! >= 0) position = openSums.positions[openSums.place];
    if (position !== undefined) {
      const next = addInt64(this.sumAmounts[position]!, amount);
      if (next !== undefined) {
        this.sumAmounts[position] = next;
        this.sumCounts[position]!++;
        return;
      }
      // Never in practice. The node checks the total after each record: two records reach the same total as one would.
    }
    if (openSums === undefined) this.openSumOf.set(shardId, this.sumShardIds.length);
    else openSums.positions[openSums.place] = this.sumShardIds.length;
    this.sumShardIds.push(shardId);
    this.sumAmounts.push(amount);
    this.sumCounts.push(1);
    this.sumWindows.push(window);
    this.sumGenerations.push(generation);
  }

  addKeyed(index: number, shardIndex: number, item: ApplyItem): void {
    this.keyedIndexes.push(index);
    this.keyedShardIndexes.push(shardIndex);
    this.items.push(item);
  }

  /** The group as the wire carries it: one run of packed records per window setting and generation. */
  encode(): OutgoingGroup {
    // A call names few window settings and generations (nearly always one): a scan of the runs beats a map.
    const runs: Run[] = [];
    let records = 0;
    for (let position = 0; position < this.sumShardIds.length; position++) {
      const amount = this.sumAmounts[position]!;
      // Cancelled out: nothing to send.
      if (amount === 0 || amount === 0n) continue;
      records++;
      const window = this.sumWindows[position]!;
      const generation = this.sumGenerations[position]!;
      let run: Run | undefined;
      for (const candidate of runs)
        if (
          candidate.window.bucketMs === window.bucketMs &&
          candidate.window.retentionMs === window.retentionMs &&
          candidate.generation === generation
        )
          run = candidate;
      if (run === undefined) runs.push((run = { window, generation, positions: [] }));
      run.positions.push(position);
    }
    const increments: shardV1.PackedIncrements[] = new Array(runs.length);
    for (let runIndex = 0; runIndex < runs.length; runIndex++) {
      const { window, generation, positions } = runs[runIndex]!;
      const buffer = Buffer.allocUnsafe(packedIncrementsSize(positions.length));
      let incrementCount = 0;
      for (let index = 0; index < positions.length; index++) {
        const position = positions[index]!;
        incrementCount += this.sumCounts[position]!;
        writePackedIncrement(buffer, index, this.sumShardIds[position]!, this.sumAmounts[position]!);
      }
      const packed: shardV1.PackedIncrements = { records: buffer, incrementCount };
      // Absent means none (0, 0) and costs nothing on the wire.
      if (window.bucketMs > 0) {
        packed.windowBucketMs = window.bucketMs;
        packed.windowRetentionMs = window.retentionMs;
      }
      if (generation > 0) packed.generation = generation;
      increments[runIndex] = packed;
    }
    return {
      items: this.items,
      increments,
      itemCount: records + this.items.length,
      incrementCount: this.plainIndexes.length + this.items.length,
      sizeBytes: packedIncrementsSize(records) + itemsWireBytes(this.items),
    };
  }
}

/** The records sharing one window setting and generation (the same counter's, or equal ones): one PackedIncrements. */
