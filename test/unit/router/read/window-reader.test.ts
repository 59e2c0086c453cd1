// Unit tests for WindowReader's cache of window sums, against a directory and
// a node that are plain objects: a flood of CACHED reads with distinct lastMs
// stays within the bound, lastMs values that sum the same buckets share one
// entry, and a counter that does not exist (or has no window) leaves nothing.
import { describe, expect, it } from 'vitest';
import type { Directory } from '../../../../src/router/directory/contract.ts';
import type { NodePool } from '../../../../src/router/nodes/node-pool.ts';
import { WindowReader } from '../../../../src/router/read/window-reader.ts';
import { rejection } from '../../../helpers/rejection.ts';

const bucketMs = 1_000;

function fakeCluster(windowedNames: string[]) {
  const pair = { pairIndex: 0, primary: 'p:1', follower: 'f:1', epoch: 1n, inSync: true, primaryId: '', followerId: '' };
  const counters = new Map(
    [...windowedNames, 'plain'].map((name, index) => [
      name,
      {
        name,
        kind: 'total',
        window: name === 'plain' ? { bucketMs: 0, retentionMs: 0 } : { bucketMs, retentionMs: 3_600 * bucketMs },
        shards: [{ shardIndex: 0, shardId: index + 1, pairIndex: 0 }],
      },
    ]),
  );
  const directory = { get: (name: string) => counters.get(name), pair: () => pair } as unknown as Directory;
  let nodeReads = 0;
  const pool = {
    read: async () => {
      nodeReads++;
      return { totals: ['5'], role: 'primary', epoch: '1', lsn: '1', nodeId: '' };
    },
  } as unknown as NodePool;
  return { directory, pool, nodeReads: () => nodeReads };
}

describe('window reader', () => {
  it('a flood of 10,000 CACHED reads with distinct lastMs keeps at most cacheEntriesMax sums; lastMs in one bucket share a sum', async () => {
    const cluster = fakeCluster(['hits', 'other']);
    const nowMs = 1_000_000;
    const reader = new WindowReader(
      cluster.directory,
      cluster.pool,
      { readTimeoutMs: 1_000, refreshIntervalMs: 1_000, cacheEntriesMax: 500 },
      () => nowMs,
    );
    // 1 ms to 1,000 ms is one bucket: one node read, one entry.
    for (let lastMs = 1; lastMs <= 1_000; lastMs++) expect((await reader.read('hits', lastMs, true)).total).toBe(5n);
    expect(cluster.nodeReads()).toBe(1);
    expect(reader.cacheSize).toBe(1);
    let sizeMax = 0;
    // 10,000 distinct lastMs over 3,600 bucket counts: more sums than the cache holds.
    for (let index = 0; index < 10_000; index++) {
      const lastMs = 1 + Math.floor((index * 3_600 * bucketMs) / 10_000);
      await reader.read('hits', lastMs, true);
      sizeMax = Math.max(sizeMax, reader.cacheSize);
    }
    expect(sizeMax).toBe(500);
    expect(cluster.nodeReads()).toBe(1 + 3_599);
  });

  it('reads of a counter that does not exist or has no window fail and cache nothing', async () => {
    const cluster = fakeCluster(['hits']);
    const reader = new WindowReader(cluster.directory, cluster.pool, {
      readTimeoutMs: 1_000,
      refreshIntervalMs: 1_000,
      cacheEntriesMax: 500,
    });
    for (let index = 0; index < 1_000; index++)
      expect((await rejection(reader.read(`never:${index}`, 1_000, true))).code).toBe('not_found');
    expect((await rejection(reader.read('plain', 1_000, true))).code).toBe('failed_precondition');
    expect(reader.cacheSize).toBe(0);
    expect(cluster.nodeReads()).toBe(0);
  });
});
