// NodeGroup, the write path's group for one node: plain increments summed
// per shard into packed records (by shard id, or by the counter's place in
// the call for a counter with one shard), a sum that would leave int64 split
// into two records, a sum of zero not sent, keyed items kept one each.
import { describe, expect, it } from 'vitest';
import { NodeGroup } from '../../../src/router/write/node-group.ts';
import type { OutgoingGroup } from '../../../src/router/nodes/node-sender.ts';
import { INT64_MAX } from '../../../src/wire/index.ts';

const noWindow = { bucketMs: 0, retentionMs: 0 };
const window = { bucketMs: 60_000, retentionMs: 3_600_000 };

/** [shardId, amount] per record, in the order sent. */
function records(group: OutgoingGroup): [number, bigint][] {
  const rows: [number, bigint][] = [];
  for (const packed of group.increments) {
    const bytes = packed.records as Buffer;
    for (let offset = 0; offset < bytes.length; offset += 16)
      rows.push([bytes.readUInt32LE(offset) + bytes.readUInt32LE(offset + 4) * 2 ** 32, bytes.readBigInt64LE(offset + 8)]);
  }
  return rows;
}

describe('node group', () => {
  it('node group: increments to one shard are one record, by shard id or by place, and every item is answered by its shard', () => {
    const group = new NodeGroup();
    const openSums = { positions: new Int32Array(2).fill(-1), place: 0 };
    // Place 0 (a one-shard counter, shard id 7) named three times; shard 9 of a counter with several shards, twice.
    group.addPlain(0, 0, 7, 2, noWindow, 0, { ...openSums, place: 0 });
    group.addPlain(1, 3, 9, 5, noWindow);
    group.addPlain(2, 0, 7, -1, noWindow, 0, Object.assign(openSums, { place: 0 }));
    group.addPlain(3, 3, 9, 1, noWindow);
    group.addPlain(4, 0, 7, 4, noWindow, 0, Object.assign(openSums, { place: 0 }));
    group.addPlain(5, 0, 11, 3, noWindow, 0, Object.assign(openSums, { place: 1 }));
    const encoded = group.encode();
    expect(records(encoded)).toEqual([
      [7, 5n],
      [9, 6n],
      [11, 3n],
    ]);
    expect(encoded.itemCount).toBe(3);
    expect(encoded.incrementCount).toBe(6);
    expect(group.plainIndexes).toEqual([0, 1, 2, 3, 4, 5]);
    expect(group.plainShardIndexes).toEqual([0, 3, 0, 3, 0, 0]);
  });

  it('node group: a sum that would leave int64 starts a second record; a sum of zero is not sent; window settings and generations each get a run', () => {
    const group = new NodeGroup();
    const openSums = { positions: new Int32Array(1).fill(-1), place: 0 };
    group.addPlain(0, 0, 1, INT64_MAX, noWindow, 0, openSums);
    group.addPlain(1, 0, 1, 1n, noWindow, 0, openSums);
    group.addPlain(2, 0, 2, INT64_MAX, noWindow);
    group.addPlain(3, 0, 2, 1, noWindow);
    group.addPlain(4, 0, 3, 5, noWindow);
    group.addPlain(5, 0, 3, -5, noWindow);
    group.addPlain(6, 0, 4, 8, window, 2);
    const encoded = group.encode();
    expect(records(encoded)).toEqual([
      [1, INT64_MAX],
      [1, 1n],
      [2, INT64_MAX],
      [2, 1n],
      [4, 8n],
    ]);
    expect(encoded.increments.map((packed) => [packed.windowBucketMs ?? 0, packed.generation ?? 0, packed.incrementCount])).toEqual([
      [0, 0, 4],
      [60_000, 2, 1],
    ]);
    // The cancelled sum is answered (applied) like the rest: its items are in plainIndexes.
    expect(group.plainIndexes).toHaveLength(7);
    expect(encoded.itemCount).toBe(5);
  });
});
