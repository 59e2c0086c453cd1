// The router's work per call, not per item (issue 27): a batch resolves each
// distinct counter once, a heat tick looks up only the counters that could
// grow or that it lists, and an exact read sums a page's shards per pair in
// one node call. Real directory (SQLite) and increment path; the node pool
// is a stand-in that records what it was sent.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Registry } from 'prom-client';
import { SqliteDirectory as Directory } from '../../../src/router/directory/sqlite/store.ts';
import { IncrementPath, distinctNames } from '../../../src/router/write/increment-path.ts';
import { readExact } from '../../../src/router/read/exact-reader.ts';
import { Autoscaler } from '../../../src/router/sizing/autoscaler.ts';
import { HeatTracker } from '../../../src/router/sizing/heat.ts';
import { SizingPolicy } from '../../../src/router/sizing/sizing-policy.ts';
import { createRouterMetrics } from '../../../src/router/metrics/router-metrics.ts';
import type { NodePool } from '../../../src/router/nodes/node-pool.ts';
import type { OutgoingGroup } from '../../../src/router/nodes/node-sender.ts';
import type { Logger } from '../../../src/common/index.ts';
import { hotCountersListedMax } from '../../../src/common/index.ts';
import { makeTempDir, removeTempDir } from '../../helpers/temp-dir.ts';

const quiet: Logger = { debug() {}, info() {}, warn() {}, error() {} };

/** Shard id and summed amount of every packed record a group carries. */
function packedSums(group: OutgoingGroup): Map<number, number> {
  const sums = new Map<number, number>();
  for (const packed of group.increments) {
    const records = packed.records as Buffer;
    for (let offset = 0; offset < records.length; offset += 16) {
      const shardId = records.readUInt32LE(offset) + records.readUInt32LE(offset + 4) * 2 ** 32;
      sums.set(shardId, (sums.get(shardId) ?? 0) + Number(records.readBigInt64LE(offset + 8)));
    }
  }
  return sums;
}

describe('router work per call', () => {
  let dataDir: string;
  let directory: Directory;
  beforeEach(() => {
    dataDir = makeTempDir('per-call-work');
    directory = Directory.open(dataDir, [
      { primary: 'p0:1', follower: 'f0:1' },
      { primary: 'p1:1', follower: 'f1:1' },
    ]);
  });
  afterEach(() => {
    directory.close();
    removeTempDir(dataDir);
  });

  it('distinctNames: each name once, in order of first appearance, and every item its place', () => {
    const items = ['a', 'a', 'b', 'a', 'c', 'c', 'b'].map((counter) => ({ counter }));
    const { names, slots } = distinctNames(items);
    expect(names).toEqual(['a', 'b', 'c']);
    expect(slots).toEqual([0, 0, 1, 0, 2, 2, 1]);
    expect(distinctNames([{ counter: 'x' }, { counter: 'x' }])).toEqual({ names: ['x'], slots: undefined });
  });

  it('a batch naming counters many times resolves each once and sends each its own sum', async () => {
    const resolved: string[][] = [];
    const lookups = {
      resolveSlots: (names: readonly string[], kind: 'total', slots: Int32Array) => {
        resolved.push([...names]);
        return directory.resolveSlots(names, kind, slots);
      },
      counterColumns: directory.counterColumns,
      pair: (pairIndex: number) => directory.pair(pairIndex),
    };
    const sent: OutgoingGroup[] = [];
    const pool = {
      get: () => ({
        sender: {
          async sendGroup(group: OutgoingGroup) {
            sent.push(group);
            return { code: 0, message: '', applied: [], packedRecordsApplied: group.itemCount - group.items.length };
          },
        },
      }),
      isKnownDown: () => false,
    } as unknown as NodePool;
    const path = new IncrementPath(lookups, pool, 60_000);
    const names = ['hot', 'cold-1', 'hot', 'hot', 'cold-2', 'cold-1', 'hot'];
    const outcomes = await path.apply(names.map((counter, index) => ({ counter, amount: index + 1, idempotencyKey: Buffer.alloc(0) })));
    expect(resolved).toEqual([['hot', 'cold-1', 'cold-2']]);
    expect(outcomes).toEqual(names.map(() => ({ applied: true, shard: 0 })));
    const sums = new Map<number, number>();
    for (const group of sent) for (const [shardId, amount] of packedSums(group)) sums.set(shardId, (sums.get(shardId) ?? 0) + amount);
    const shardOf = (name: string) => directory.get(name)!.shards[0]!.shardId;
    expect(sums).toEqual(
      new Map([
        [shardOf('hot'), 1 + 3 + 4 + 7],
        [shardOf('cold-1'), 2 + 6],
        [shardOf('cold-2'), 5],
      ]),
    );
  });

  it('an exact read of a page sums every shard of its counters with one node call per pair', async () => {
    await directory.getOrCreateMany(['a', 'b', 'c']);
    await directory.setShards('b', 3);
    const calls: { address: string; shardIds: number[] }[] = [];
    const pool = {
      async readShards(address: string, shardIds: readonly number[]) {
        calls.push({ address, shardIds: [...shardIds] });
        // Shard id 10x + 1 as its total: every sum below is checkable.
        return {
          totals: shardIds.map((id) => String(10 * id + 1)),
          newerGenerationIndexes: [],
          lsn: '1',
          role: 'primary',
          epoch: '1',
          nodeId: '',
        };
      },
    } as unknown as NodePool;
    const { totals, nodeCalls } = await readExact(['a', 'b', 'missing', 'a', 'c'], directory, pool, 1_000);
    const expected = (name: string) => directory.get(name)!.shards.reduce((sum, shard) => sum + BigInt(10 * shard.shardId + 1), 0n);
    expect(totals.get('a')!.total).toBe(expected('a'));
    expect(totals.get('b')!.total).toBe(expected('b'));
    expect(totals.get('b')!.shardCount).toBe(3);
    expect(totals.get('c')!.total).toBe(expected('c'));
    expect(totals.get('missing')).toMatchObject({ total: 0n, shardCount: 0, source: undefined });
    const pairsHolding = new Set(['a', 'b', 'c'].flatMap((name) => directory.get(name)!.shards.map((shard) => shard.pairIndex)));
    expect(nodeCalls).toBe(pairsHolding.size);
    expect(calls).toHaveLength(pairsHolding.size);
    // Each shard once, as a number (no decimal string per id).
    const ids = calls.flatMap((call) => call.shardIds);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.every((id) => typeof id === 'number')).toBe(true);
  });

  it('autoscaler: a tick looks up only the counters it lists or that could grow, and still counts and rates every tracked one', async () => {
    let clockMs = 1_700_000_000_000;
    const now = () => clockMs;
    const coolCount = hotCountersListedMax + 500;
    const names = Array.from({ length: coolCount }, (_, index) => `cool-${index}`);
    for (let offset = 0; offset < names.length; offset += 500) await directory.getOrCreateMany(names.slice(offset, offset + 500));
    await directory.getOrCreateMany(['hot']);
    let gets = 0;
    const counting = {
      get: (name: string) => {
        gets++;
        return directory.get(name);
      },
      setShards: (name: string, shardCount: number) => directory.setShards(name, shardCount),
    } as unknown as Directory;
    const heat = new HeatTracker(1_000, now, 60_000, coolCount + 10);
    const policy = new SizingPolicy({ shardCeilingPerSec: 100, shardsMax: 8, growThreshold: 1.1, sustainMs: 0, headroom: 1.25 });
    const registry = new Registry();
    const autoscaler = new Autoscaler(counting, heat, policy, createRouterMetrics(registry), quiet, {
      intervalMs: 1_000,
      topK: 5,
      skewMinIncrements: 100,
    });
    for (let second = 0; second < 3; second++) {
      heat.record('hot', 1_000, 0);
      for (const name of names) heat.record(name, 1, 0);
      clockMs += 1_000;
      gets = 0;
      await autoscaler.tick();
    }
    // The listed head (hot first) plus the one counter above one shard's capacity, not all 1,501.
    expect(gets).toBeLessThanOrEqual(hotCountersListedMax + 1);
    const { counters, tracked } = autoscaler.hot(hotCountersListedMax);
    expect(tracked).toBe(coolCount + 1);
    expect(counters).toHaveLength(hotCountersListedMax);
    expect(counters[0]!.counter).toBe('hot');
    // It grew: above 100/s x 1.1 on one shard.
    expect(directory.get('hot')!.shards.length).toBeGreaterThan(1);
    const metrics = await registry.metrics();
    expect(metrics).toMatch(new RegExp(`^tally_heat_tracked_counters ${coolCount + 1}$`, 'm'));
  });
});
