import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCluster, scrapeMetric, type TestCluster } from '../helpers/cluster.ts';

describe('increments and exact reads', () => {
  let tc: TestCluster;
  beforeAll(async () => {
    tc = await startCluster({ pairs: 2, metrics: true });
  });
  afterAll(async () => {
    await tc?.stop();
  });

  it('router: 64 concurrent callers with mixed amounts; the exact read equals the acknowledged sum', async () => {
    const callers = 64;
    const perCaller = 40;
    let acknowledgedSum = 0n;
    await tc.client.setShards(await firstIncrement(tc, 'hot', 3n), 4).then(() => undefined);
    acknowledgedSum += 3n;
    await Promise.all(
      Array.from({ length: callers }, async (_, caller) => {
        for (let index = 0; index < perCaller; index++) {
          const amount = BigInt(((caller * 31 + index * 17) % 19) - 9 || 1);
          await tc.client.increment('hot', amount);
          acknowledgedSum += amount;
        }
      }),
    );
    const read = await tc.client.read('hot');
    expect(read.exact).toBe(true);
    expect(read.shards).toBe(4);
    expect(read.total).toBe(acknowledgedSum);
  });

  it('router: IncrementBatch applies items for several counters and ReadMany returns them in order', async () => {
    const results = await tc.client.incrementBatch([
      { counter: 'post:100:like', amount: 2 },
      { counter: 'post:100:fav', amount: 1 },
      { counter: 'post:100:view', amount: 10 },
      { counter: 'post:100:view', amount: -3 },
    ]);
    expect(results).toHaveLength(4);
    expect(results.every((result) => result.applied)).toBe(true);
    const reads = await tc.client.readMany(['post:100:view', 'post:100:like', 'post:100:fav', 'post:100:none']);
    expect(reads.map((read) => [read.counter, read.total])).toEqual([
      ['post:100:view', 7n],
      ['post:100:like', 2n],
      ['post:100:fav', 1n],
      ['post:100:none', 0n],
    ]);
  });

  it('router: an exact read of an 8-shard counter makes one node call per node, not one per shard', async () => {
    await tc.client.increment('eight', 1);
    await tc.client.setShards('eight', 8);
    for (let index = 0; index < 50; index++) await tc.client.increment('eight', 1);
    const description = await tc.client.describe('eight');
    const nodesHoldingShards = new Set(description.placements.map((placement) => placement.primary)).size;
    expect(nodesHoldingShards).toBe(2);
    const before = await scrapeMetric(tc.routerMetricsPort, 'tally_router_node_calls_total', { kind: 'read' });
    const read = await tc.client.read('eight');
    const after = await scrapeMetric(tc.routerMetricsPort, 'tally_router_node_calls_total', { kind: 'read' });
    expect(read.total).toBe(51n);
    expect(after - before).toBe(nodesHoldingShards);
  });

  it("router: unkeyed increments spread uniformly over a counter's shards", async () => {
    await tc.client.increment('spread', 1);
    await tc.client.setShards('spread', 4);
    const perShard = [0, 0, 0, 0];
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        for (let index = 0; index < 100; index++) perShard[(await tc.client.increment('spread', 1)).shard]!++;
      }),
    );
    // 800 draws over 4 shards: each expects 200; 120 is more than 6 standard deviations away.
    for (const count of perShard) expect(count).toBeGreaterThan(120);
  });

  it('router: a new counter has one shard and Describe shows its placement', async () => {
    await tc.client.increment('cold:1', 1);
    const description = await tc.client.describe('cold:1');
    expect(description.shards).toBe(1);
    expect(description.placements).toHaveLength(1);
    expect(description.placements[0]!.primary).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(description.placements[0]!.follower).not.toBe(description.placements[0]!.primary);
  });
});

async function firstIncrement(tc: TestCluster, counter: string, amount: bigint): Promise<string> {
  await tc.client.increment(counter, amount);
  return counter;
}
