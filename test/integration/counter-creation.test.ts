// Counter creation through a real router and nodes: a call's new counters
// are created together (one directory transaction) before anything is sent,
// within the per-call and total caps; a call past a cap is
// RESOURCE_EXHAUSTED and changes nothing, and counters that exist keep
// taking increments whatever the caps.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { status } from '@grpc/grpc-js';
import { batchItemsMax, newCountersPerCallMax, readManyCountersMax } from '../../src/wire/index.ts';
import type { TallyClient } from '../../src/client/index.ts';
import { scrapeMetric, startCluster, waitFor, waitForHealthy, type TestCluster } from '../helpers/cluster.ts';
import { rejection } from '../helpers/rejection.ts';

/** Sum of every node's last lsn: any log write changes it. */
async function logPosition(client: TallyClient): Promise<bigint> {
  const cluster = await client.clusterStatus();
  return cluster.nodes.reduce((sum, node) => sum + node.lastLsn, 0n);
}

/** batchItemsMax items spread round-robin over `names`, item i adding i % 7 + 1. */
function batchOver(names: readonly string[]): { counter: string; amount: number }[] {
  return Array.from({ length: batchItemsMax }, (_, index) => ({ counter: names[index % names.length]!, amount: (index % 7) + 1 }));
}

/** What batchOver adds to each name. */
function expectedTotals(names: readonly string[]): Map<string, bigint> {
  const totals = new Map<string, bigint>(names.map((name) => [name, 0n]));
  batchOver(names).forEach(({ counter, amount }) => totals.set(counter, totals.get(counter)! + BigInt(amount)));
  return totals;
}

async function totalsOf(client: TallyClient, names: readonly string[]): Promise<Map<string, bigint>> {
  const totals = new Map<string, bigint>();
  for (let start = 0; start < names.length; start += readManyCountersMax) {
    for (const read of await client.readMany(names.slice(start, start + readManyCountersMax))) totals.set(read.counter, read.total);
  }
  return totals;
}

const namesOf = (prefix: string, count: number): string[] => Array.from({ length: count }, (_, index) => `${prefix}:${index}`);

describe('counter creation: per-call cap and one transaction', () => {
  let tc: TestCluster;
  beforeAll(async () => {
    tc = await startCluster({ pairs: 2, metrics: true });
    await tc.client.increment('kept', 5);
    // The followers hold that write too: a log position taken while they catch up would move by itself.
    await waitForHealthy(tc.client);
  });
  afterAll(async () => {
    await tc?.stop();
  });

  it('router: a batch naming more new counters than newCountersPerCallMax is RESOURCE_EXHAUSTED and changes nothing', async () => {
    const names = ['kept', ...namesOf('over', newCountersPerCallMax + 1)];
    const countersBefore = (await tc.client.clusterStatus()).counters;
    const positionBefore = await logPosition(tc.client);
    const error = await rejection(tc.client.incrementBatch(batchOver(names)));
    expect(error.grpcCode).toBe(status.RESOURCE_EXHAUSTED);
    expect(error.message).toContain(`${newCountersPerCallMax} new counters per call`);
    expect((await tc.client.clusterStatus()).counters).toBe(countersBefore);
    expect(await logPosition(tc.client)).toBe(positionBefore);
    expect((await tc.client.read('kept')).total).toBe(5n);
    expect((await rejection(tc.client.describe('over:0'))).grpcCode).toBe(status.NOT_FOUND);
    expect((await rejection(tc.client.describe(`over:${newCountersPerCallMax}`))).grpcCode).toBe(status.NOT_FOUND);
  });

  it('router: a batch creating newCountersPerCallMax counters applies in one go while an honest read keeps answering', async () => {
    await tc.client.increment('honest', 1);
    const names = namesOf('fresh', newCountersPerCallMax);
    const countersBefore = (await tc.client.clusterStatus()).counters;
    let batchDone = false;
    const readLatenciesMs: number[] = [];
    const reader = (async () => {
      while (!batchDone) {
        const startedMs = performance.now();
        expect((await tc.client.read('honest')).total).toBe(1n);
        readLatenciesMs.push(performance.now() - startedMs);
      }
    })();
    const startedMs = performance.now();
    const results = await tc.client.incrementBatch(batchOver(names)).finally(() => (batchDone = true));
    const creatingBatchMs = performance.now() - startedMs;
    await reader;
    // Every item answered. The client keys every item it is not told otherwise, so
    // under load it may retry the batch after its 2 s attempt timeout, and the items
    // the first attempt applied then answer applied=false: the totals below are what
    // must be exact.
    expect(results).toHaveLength(batchItemsMax);
    // The same batch again, every counter existing now: what creating them added to the first.
    const againStartedMs = performance.now();
    await tc.client.incrementBatch(batchOver(names));
    const existingBatchMs = performance.now() - againStartedMs;
    const slowestReadMs = Math.max(...readLatenciesMs);
    console.info(
      `counter creation: batch of ${batchItemsMax} items creating ${names.length} counters ${Math.round(creatingBatchMs)} ms, ` +
        `same batch on existing counters ${Math.round(existingBatchMs)} ms; ${readLatenciesMs.length} honest reads meanwhile, slowest ${Math.round(slowestReadMs)} ms`,
    );
    expect(readLatenciesMs.length).toBeGreaterThan(0);
    expect(slowestReadMs).toBeLessThan(2_000);

    expect((await tc.client.clusterStatus()).counters).toBe(countersBefore + names.length);
    const expected = expectedTotals(names);
    const totals = await totalsOf(tc.client, names);
    for (const name of names) expect(totals.get(name), name).toBe(expected.get(name)! * 2n);
    const description = await tc.client.describe(names[names.length - 1]!);
    expect(description.shards).toBe(1);
    // Every counter here is a one-shard total: both gauges count the same.
    const expectedCount = countersBefore + names.length;
    await waitFor(
      async () =>
        (await scrapeMetric(tc.routerMetricsPort, 'tally_directory_counters')) === expectedCount &&
        (await scrapeMetric(tc.routerMetricsPort, 'tally_directory_shards')) === expectedCount,
      { timeoutMs: 5_000, what: 'the directory gauges to count the new counters and their shards' },
    );
  });

  it('router: concurrent batches creating the same new counters agree on one counter each', async () => {
    const names = namesOf('raced', 100);
    const batches = 4;
    await Promise.all(Array.from({ length: batches }, () => tc.client.incrementBatch(names.map((counter) => ({ counter, amount: 1 })))));
    const totals = await totalsOf(tc.client, names);
    const shardIds = new Set<string>();
    for (const name of names) {
      expect(totals.get(name), name).toBe(BigInt(batches));
      const description = await tc.client.describe(name);
      expect(description.shards, name).toBe(1);
      shardIds.add(String(description.placements[0]!.shardId));
    }
    expect(shardIds.size).toBe(names.length);
  });
});

describe('counter creation: total caps', () => {
  let tc: TestCluster;
  // One membership counter (16 partitions, the default) and three totals fill both caps exactly.
  const countersMax = 4;
  const shardsTotalMax = 20;
  beforeAll(async () => {
    tc = await startCluster({
      pairs: 1,
      metrics: true,
      routerArgs: ['--counters-max', String(countersMax), '--shards-total-max', String(shardsTotalMax)],
    });
  });
  afterAll(async () => {
    await tc?.stop();
  });

  it('router: past --counters-max and --shards-total-max new counters are RESOURCE_EXHAUSTED while existing ones keep taking increments', async () => {
    const { client } = tc;
    expect((await client.setMember('likes', 1n, true)).changed).toBe(true);
    await client.incrementBatch([
      { counter: 'a', amount: 1 },
      { counter: 'b', amount: 2 },
    ]);
    // 3 counters, 18 shards: a second membership counter would need 16 more.
    await waitForHealthy(client);
    const shardsRefused = await rejection(client.setMember('likes:2', 1n, true));
    expect(shardsRefused.grpcCode).toBe(status.RESOURCE_EXHAUSTED);
    expect(shardsRefused.message).toContain(`limit of ${shardsTotalMax} shards`);

    // Two new counters would make 5: the whole batch is refused, 'a' included.
    const positionBefore = await logPosition(client);
    const countersRefused = await rejection(
      client.incrementBatch([
        { counter: 'a', amount: 10 },
        { counter: 'c', amount: 1 },
        { counter: 'd', amount: 1 },
      ]),
    );
    expect(countersRefused.grpcCode).toBe(status.RESOURCE_EXHAUSTED);
    expect(countersRefused.message).toContain(`limit of ${countersMax} counters`);
    expect(await logPosition(client)).toBe(positionBefore);
    expect((await client.clusterStatus()).counters).toBe(3);

    await client.incrementBatch([
      { counter: 'a', amount: 10 },
      { counter: 'c', amount: 3 },
    ]);
    expect((await client.clusterStatus()).counters).toBe(countersMax);
    for (const attempt of [client.increment('e', 1), client.addDistinct('e', ['x']), client.setMember('e', 1n, true)]) {
      expect((await rejection(attempt)).grpcCode).toBe(status.RESOURCE_EXHAUSTED);
    }

    // Existing counters are never refused: increments, batches, member flips, growth within the shard cap.
    await client.increment('a', 1);
    await client.incrementBatch(batchOver(['a', 'b', 'c']));
    expect((await client.setMember('likes', 2n, true)).count).toBe(2n);
    expect((await client.setShards('a', 2)).shards).toBe(2);
    expect((await rejection(client.setShards('a', 3))).grpcCode).toBe(status.RESOURCE_EXHAUSTED);
    const added = expectedTotals(['a', 'b', 'c']);
    const totals = await totalsOf(client, ['a', 'b', 'c', 'e']);
    expect([...totals]).toEqual([
      ['a', 12n + added.get('a')!],
      ['b', 2n + added.get('b')!],
      ['c', 3n + added.get('c')!],
      ['e', 0n],
    ]);
    expect((await client.clusterStatus()).counters).toBe(countersMax);
    await waitFor(
      async () =>
        (await scrapeMetric(tc.routerMetricsPort, 'tally_directory_counters')) === countersMax &&
        (await scrapeMetric(tc.routerMetricsPort, 'tally_directory_shards')) === shardsTotalMax,
      { timeoutMs: 5_000, what: 'the directory gauges at both caps' },
    );
    expect(await scrapeMetric(tc.routerMetricsPort, 'tally_increments_rejected_total', { reason: 'resource_exhausted' })).toBe(4);
  });
});
