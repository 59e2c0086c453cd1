// Clear against real processes: every kind reads 0 after it and counts again
// from there; under concurrent keyed and unkeyed load the total after a clear
// is bounded by the cut (every increment acknowledged before the clear was
// called is cleared away, every one made after it returned is counted, each
// at most once); a keyed retry across a clear counts at most once; the clear
// survives a primary SIGKILLed mid-clear and a node restarted mid-clear.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { TallyClient } from '../../src/client/index.ts';
import { pause, scrapeMetric, startCluster, waitFor, waitForHealthy, type TestCluster } from '../helpers/cluster.ts';
import { classify, expectNoDrift } from '../helpers/load.ts';
import { rejection } from '../helpers/rejection.ts';
import { tally } from '../helpers/cli.ts';
import { ShardNodeClient, type shardV1 } from '../../src/common/index.ts';
import { credentials, status } from '@grpc/grpc-js';

/** ReadShards straight to a node, as the router sends it. */
function readShardsAt(address: string, request: shardV1.ReadShardsRequest): Promise<shardV1.ReadShardsResponse__Output> {
  const rpc = new ShardNodeClient(address, credentials.createInsecure());
  return new Promise((resolve, reject) =>
    rpc.ReadShards(request, { deadline: Date.now() + 5_000 }, (error, response) => {
      rpc.close();
      if (error || response === undefined) reject(error ?? new Error('no response'));
      else resolve(response);
    }),
  );
}

const routerArgs = ['--failover-timeout-ms', '1500', '--follower-timeout-ms', '800'];

interface Attempt {
  amount: bigint;
  startedMs: number;
  endedMs: number;
  outcome: 'ok' | 'unknown' | 'failed';
}

/**
 * Writers of one counter, half keyed (the client retries with the key, and
 * each key is sent twice, the second time as a caller's own retry would),
 * half unkeyed; every attempt recorded with when it started and ended.
 */
function startWriters(client: TallyClient, counter: string, concurrency: number): { attempts: Attempt[]; stop: () => Promise<void> } {
  const attempts: Attempt[] = [];
  let running = true;
  const writers = Array.from({ length: concurrency }, async (_, writer) => {
    const keyed = writer % 2 === 0;
    for (let sequence = 0; running; sequence++) {
      const amount = BigInt((writer % 5) + 1);
      const key = keyed ? `w${writer}-${sequence}` : null;
      const attempt: Attempt = { amount, startedMs: Date.now(), endedMs: 0, outcome: 'ok' };
      try {
        await client.increment(counter, amount, { idempotencyKey: key, deadlineMs: 4_000 });
        // The caller's own retry of an acknowledged keyed increment: never counted again.
        if (key !== null && sequence % 3 === 0) await client.increment(counter, amount, { idempotencyKey: key, deadlineMs: 4_000 });
      } catch (error) {
        attempt.outcome = classify(error);
        await pause(20);
      }
      attempt.endedMs = Date.now();
      attempts.push(attempt);
    }
  });
  return {
    attempts,
    stop: async () => {
      running = false;
      await Promise.all(writers);
    },
  };
}

/**
 * The bounds the cut gives a total read after every writer stopped, for a
 * clear called at clearStartedMs that returned at clearEndedMs:
 *   counted for sure:  acknowledged, and started after the clear returned;
 *   never counted:     ended (acknowledged or not) before the clear was called... except
 *                      an unknown outcome, which may still be on its way;
 *   maybe:             acknowledged while the clear ran (overlapping), or unknown.
 */
function expectWithinCut(total: bigint, attempts: readonly Attempt[], clearStartedMs: number, clearEndedMs: number): void {
  let after = 0n;
  let maybe = 0n;
  let before = 0n;
  for (const attempt of attempts) {
    if (attempt.outcome === 'failed') continue;
    if (attempt.outcome === 'unknown') maybe += attempt.amount;
    else if (attempt.startedMs > clearEndedMs) after += attempt.amount;
    else if (attempt.endedMs < clearStartedMs) before += attempt.amount;
    else maybe += attempt.amount;
  }
  const what = `total ${total}: acknowledged after the clear ${after}, overlapping or unknown ${maybe}, cleared away ${before}`;
  expect(before, 'some increments were acknowledged before the clear').toBeGreaterThan(0n);
  expect(after, 'some increments were acknowledged after the clear').toBeGreaterThan(0n);
  expect(total, what).toBeGreaterThanOrEqual(after);
  expect(total, what).toBeLessThanOrEqual(after + maybe);
}

// The cases that kill no process share one cluster: each clears counters of
// its own names and counts counters and clears from what it found at its start.
describe('chaos: clear on a running cluster', () => {
  let tc: TestCluster;
  beforeAll(async () => {
    tc = await startCluster({ pairs: 2, routerArgs, metrics: true });
  });
  afterAll(async () => {
    await tc?.stop();
  });

  it(
    'every kind reads 0 after it and counts again from there; a keyed clear retried clears nothing more; a keyed increment retried across a clear counts at most once',
    { timeout: 60_000 },
    async () => {
      const { client, cluster } = tc;
      const countersBefore = (await client.clusterStatus()).counters;
      // The router exports the series from its first clear.
      const clearedBefore = await scrapeMetric(tc.routerMetricsPort, 'tally_counters_cleared_total').catch(() => 0);
      await client.increment('c:total', 1);
      await client.setShards('c:total', 8);
      await client.incrementBatch(Array.from({ length: 80 }, () => ({ counter: 'c:total', amount: 2, idempotencyKey: null })));
      await client.increment('c:total', 7, { idempotencyKey: 'before' });
      await client.configure('c:window', { window: { bucketMs: 1_000, retentionMs: 60_000 } });
      await client.increment('c:window', 9);
      await client.addDistinct('c:distinct', ['a', 'b', 'c', 'd']);
      await client.setShards('c:distinct', 2);
      await client.addDistinct('c:distinct', ['e', 'f']);
      await client.configure('c:likes', { membershipPartitions: 4 });
      for (const member of [1n, 2n, 3n]) await client.setMember('c:likes', member, true);
      expect((await client.read('c:total', { consistency: 'cached' })).total).toBe(168n);
      await waitForHealthy(client);

      for (const name of ['c:total', 'c:window', 'c:distinct', 'c:likes']) {
        const result = await client.clear(name);
        expect(result, name).toMatchObject({ counter: name, generation: 1, applied: true, shardsPending: 0 });
      }
      for (const consistency of ['exact', 'cached'] as const) expect((await client.read('c:total', { consistency })).total).toBe(0n);
      expect((await client.read('c:total')).shards).toBe(8);
      expect((await client.readWindow('c:window', 60_000)).total).toBe(0n);
      expect((await client.countDistinct('c:distinct')).estimate).toBe(0);
      expect(await client.isMember('c:likes', [1n, 2n, 3n])).toEqual([false, false, false]);
      expect((await client.read('c:likes')).total).toBe(0n);

      // Counting again from 0, every kind.
      await client.incrementBatch(Array.from({ length: 10 }, () => ({ counter: 'c:total', amount: 1, idempotencyKey: null })));
      await client.increment('c:window', 4);
      await client.addDistinct('c:distinct', ['a', 'z']);
      expect((await client.setMember('c:likes', 2n, true)).changed).toBe(true);
      expect((await client.read('c:total')).total).toBe(10n);
      expect((await client.readWindow('c:window', 60_000)).total).toBe(4n);
      expect((await client.countDistinct('c:distinct')).estimate).toBe(2);
      expect((await client.read('c:likes')).total).toBe(1n);

      // A keyed increment counted before the clear and retried after it is not counted again.
      expect((await client.increment('c:total', 7, { idempotencyKey: 'before' })).applied).toBe(false);
      expect((await client.read('c:total')).total).toBe(10n);

      // A keyed clear: its retry answers the same clear and clears nothing made since.
      const keyed = await client.clear('c:total', { idempotencyKey: 'daily-reset' });
      expect(keyed).toMatchObject({ generation: 2, applied: true });
      await client.increment('c:total', 3);
      const retried = await client.clear('c:total', { idempotencyKey: 'daily-reset' });
      expect(retried).toMatchObject({ generation: 2, applied: false });
      expect((await client.read('c:total')).total).toBe(3n);
      const cli = await tally(['clear', 'c:total', '--key', 'daily-reset', '--router', cluster.routerAddress]);
      expect(cli.stdout).toMatch(/already cleared with this key/);
      expect((await tally(['clear', 'c:total', '--router', cluster.routerAddress])).stdout).toMatch(
        /cleared c:total \(generation 3, 8 shards\)/,
      );
      expect((await client.read('c:total')).total).toBe(0n);

      // What a node answers a read tagged with a generation: a shard that has not seen the tagged
      // clear reads 0; one past the tagged generation is named, so the router reads again.
      await client.incrementBatch(Array.from({ length: 16 }, () => ({ counter: 'c:total', amount: 1, idempotencyKey: null })));
      const placements = (await client.describe('c:total')).placements.filter((placement) => placement.pair === 0);
      const ids = placements.map((placement) => String(placement.shardId));
      const readAt = (generation: number) =>
        readShardsAt(placements[0]!.primary, { shardIds: ids, generations: ids.map(() => String(generation)) });
      const current = await readAt(3);
      expect(current.newerGenerationIndexes).toEqual([]);
      expect(current.totals.reduce((sum, total) => sum + BigInt(total), 0n)).toBeGreaterThan(0n);
      const ahead = await readAt(4);
      expect(ahead.totals.every((total) => total === '0')).toBe(true);
      const behind = await readAt(2);
      expect(behind.newerGenerationIndexes).toEqual(ids.map((_, index) => index));
      await client.clear('c:total');

      // Bad input changes nothing.
      expect((await rejection(client.clear('nowhere'))).grpcCode).toBe(status.NOT_FOUND);
      expect((await rejection(client.clear(''))).grpcCode).toBe(status.INVALID_ARGUMENT);
      expect((await client.clusterStatus()).counters).toBe(countersBefore + 4);
      expect(await scrapeMetric(tc.routerMetricsPort, 'tally_counters_cleared_total')).toBe(clearedBefore + 7);
      await waitForHealthy(client);
      await expectNoDrift(client);

      // The cost of a clear on a 64-shard counter.
      await client.setShards('wide', 1).catch(() => undefined);
      await client.increment('wide', 1);
      await client.setShards('wide', 64);
      await client.incrementBatch(Array.from({ length: 640 }, () => ({ counter: 'wide', amount: 1, idempotencyKey: null })));
      await waitForHealthy(client);
      const lsnOf = async () =>
        (await client.clusterStatus()).nodes.reduce((sum, node) => sum + (node.role === 'primary' ? node.lastLsn : 0n), 0n);
      const callsBefore = await scrapeMetric(tc.routerMetricsPort, 'tally_router_node_calls_total', { kind: 'apply' });
      const lsnBefore = await lsnOf();
      const startedMs = performance.now();
      const wide = await client.clear('wide');
      const clearMs = performance.now() - startedMs;
      const nodeCalls = (await scrapeMetric(tc.routerMetricsPort, 'tally_router_node_calls_total', { kind: 'apply' })) - callsBefore;
      const logRows = (await lsnOf()) - lsnBefore;
      console.log(
        `clear of a 64-shard counter on 2 pairs: ${clearMs.toFixed(1)} ms, ${nodeCalls} Apply calls, ${logRows} log rows on the primaries`,
      );
      expect(wide).toMatchObject({ shards: 64, shardsPending: 0 });
      expect(logRows).toBe(64n);
      // One frame per pair; the sender sends the first item it has at once and coalesces the rest
      // behind it (two frames in flight), so a loaded machine can split a pair's clear in two.
      // Per shard would be 64.
      expect(nodeCalls).toBeGreaterThanOrEqual(2);
      expect(nodeCalls).toBeLessThanOrEqual(4);
      expect(clearMs).toBeLessThan(5_000);
      expect((await client.read('wide')).total).toBe(0n);
    },
  );

  it(
    'clear under concurrent keyed and unkeyed load: the total is bounded by the cut (acknowledged after the clear <= total <= that + overlapping + unknown)',
    { timeout: 90_000 },
    async () => {
      const { client } = tc;
      await client.increment('busy', 1);
      await client.setShards('busy', 6);
      await waitForHealthy(client);
      const writers = startWriters(client, 'busy', 24);
      let clearStartedMs = 0;
      let clearEndedMs = 0;
      // Three clears, 1.5 s apart: the bounds hold against the last one.
      for (let round = 0; round < 3; round++) {
        await waitFor(() => writers.attempts.filter((attempt) => attempt.startedMs > clearEndedMs).length > 150, {
          timeoutMs: 20_000,
          what: 'load between clears',
        });
        clearStartedMs = Date.now();
        const result = await client.clear('busy');
        clearEndedMs = Date.now();
        expect(result.applied).toBe(true);
        expect(result.generation).toBe(round + 1);
      }
      await waitFor(() => writers.attempts.filter((attempt) => attempt.startedMs > clearEndedMs).length > 300, {
        timeoutMs: 20_000,
        what: 'load after the last clear',
      });
      await writers.stop();
      expectWithinCut((await client.read('busy')).total, writers.attempts, clearStartedMs, clearEndedMs);
      await waitForHealthy(client);
      await expectNoDrift(client);
    },
  );
});

describe('chaos: clear', () => {
  let tc: TestCluster | undefined;
  afterEach(async () => {
    await tc?.stop();
    tc = undefined;
  });

  it(
    'clear survives its primary SIGKILLed mid-clear and a node restarted mid-clear: the cut holds through failover and replay, and the owed clears land',
    { timeout: 120_000 },
    async () => {
      tc = await startCluster({ pairs: 2, routerArgs, metrics: true });
      const { client, cluster } = tc;
      await client.increment('crash', 1);
      await client.setShards('crash', 4);
      await waitForHealthy(client);
      const writers = startWriters(client, 'crash', 16);
      await waitFor(() => writers.attempts.length > 200, { timeoutMs: 20_000, what: 'load before the clear' });

      // Pair 0's primary dies as the clear goes out; pair 1's follower restarts under it.
      const clearStartedMs = Date.now();
      const [cleared] = await Promise.all([
        client.clear('crash', { deadlineMs: 15_000 }),
        cluster.node(0, 'primary').process.stop('SIGKILL'),
        cluster.node(1, 'follower').process.stop('SIGKILL'),
      ]);
      const clearEndedMs = Date.now();
      expect(cleared.applied).toBe(true);
      await cluster.node(1, 'follower').process.start();
      await waitFor(() => writers.attempts.filter((attempt) => attempt.startedMs > clearEndedMs && attempt.outcome === 'ok').length > 200, {
        timeoutMs: 30_000,
        what: 'load after the clear, through the failover',
      });
      await writers.stop();
      const total = (await client.read('crash')).total;
      expectWithinCut(total, writers.attempts, clearStartedMs, clearEndedMs);
      await waitFor(async () => (await scrapeMetric(tc!.routerMetricsPort, 'tally_shard_tasks_pending', { kind: 'clear' })) === 0, {
        timeoutMs: 20_000,
        what: 'every clear confirmed',
      });

      // The killed primary rejoins as follower; then pair 1's restarted follower is promoted: same total.
      await cluster.node(0, 'primary').process.start();
      await waitForHealthy(client, 40_000);
      await expectNoDrift(client);
      await cluster.node(1, 'primary').process.stop('SIGKILL');
      await waitFor(async () => (await client.read('crash', { deadlineMs: 2_000 })).total === total, {
        timeoutMs: 20_000,
        what: "the same total from pair 1's promoted follower",
      });
      await cluster.node(1, 'primary').process.start();
      await waitForHealthy(client, 40_000);
      expect((await client.read('crash')).total).toBe(total);
      await expectNoDrift(client);
    },
  );
});
