// The publisher's reverse map from a shard id to its counter's name, for the
// region feed: shard ids are handed out in sequence, so a typed column indexed
// by id (4 bytes a shard) points into a list of the directory's own name
// strings (8 bytes a counter). It may be stale (a deleted counter's shards):
// the caller checks every hit against the directory.
import assert from 'node:assert/strict';

/** Ids past this go to a side map (the column would be too large to index by them). */
const columnShardIdMax = 1 << 30;

export class ShardIndex {
  private slots = new Int32Array(1_024);
  private readonly largeIds = new Map<number, number>();
  private names: string[] = [];

  /** Counters indexed (stale ones included). */
  get size(): number {
    return this.names.length;
  }

  nameOf(shardId: number): string | undefined {
    const slot =
      shardId < columnShardIdMax ? (shardId < this.slots.length ? this.slots[shardId]! - 1 : -1) : (this.largeIds.get(shardId) ?? -1);
    return slot < 0 ? undefined : this.names[slot];
  }

  add(name: string, shardIds: Iterable<number>): void {
    const slot = this.names.length;
    this.names.push(name);
    for (const shardId of shardIds) {
      assert.ok(Number.isSafeInteger(shardId) && shardId > 0, `shard id ${shardId}`);
      if (shardId >= columnShardIdMax) {
        this.largeIds.set(shardId, slot);
        continue;
      }
      if (shardId >= this.slots.length) {
        let length = this.slots.length;
        while (length <= shardId) length *= 2;
        const grown = new Int32Array(length);
        grown.set(this.slots);
        this.slots = grown;
      }
      this.slots[shardId] = slot + 1;
    }
  }

  /** Bytes the index holds beyond the name strings (which the directory holds anyway). */
  get memoryBytes(): number {
    return this.slots.byteLength + this.names.length * 8 + this.largeIds.size * 40;
  }
}
