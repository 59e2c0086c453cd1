// The router->node streams (ApplyStream, ReadShardsStream) under attack:
// a stream cut mid-frame (its node SIGKILLed under batched load), a router
// SIGKILLed with frames in flight, a follower SIGSTOPped while the
// primary's frames wait for it. Each ends with ok <= total <= ok + unknown
// for every counter, no drift, and exact reads that never went backwards
// while it ran (each read a ReadMany: one frame per pair on the read stream).
import { afterEach, describe, expect, it } from 'vitest';
import type { TallyClient } from '../../src/client/index.ts';
import { metricsText, scrapeMetric, startCluster, waitFor, waitForHealthy, type TestCluster } from '../helpers/cluster.ts';
import { expectNoDrift, startLoad } from '../helpers/load.ts';
import { pause } from '../helpers/pause.ts';

const counters = Array.from({ length: 40 }, (_, index) => `page:${index}`);
const pickCounter = (): string => counters[Math.floor(Math.random() * counters.length)]!;

/** ReadMany of every counter in a loop: totals only grow (amounts are positive), or the read fails. */
function startReader(client: TallyClient): { stop: () => Promise<{ reads: number; failures: number }> } {
  let running = true;
  const seen = new Map<string, bigint>();
  let reads = 0;
  let failures = 0;
  const loop = (async () => {
    while (running) {
      try {
        const values = await client.readMany(counters, { deadlineMs: 2_000 });
        for (const value of values) {
          const before = seen.get(value.counter) ?? 0n;
          expect(value.total, `${value.counter} went backwards`).toBeGreaterThanOrEqual(before);
          seen.set(value.counter, value.total);
        }
        reads++;
      } catch (error) {
        if ((error as Error).name === 'AssertionError') throw error;
        failures++;
        await pause(20);
      }
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      return { reads, failures };
    },
  };
}

/** Every counter exists with one shard per pair: increments and reads touch both pairs' streams. */
async function prepare(client: TallyClient): Promise<void> {
  for (const counter of counters) await client.increment(counter, 1);
  await client.setShards(counters[0]!, 4);
  await waitForHealthy(client);
}

describe('chaos: router-node streams', () => {
  let tc: TestCluster | undefined;
  afterEach(async () => {
    await tc?.stop();
    tc = undefined;
  });

  it(
    'a primary SIGKILLed mid-frame under batched load fails its frames as unknown, the stream reopens, and nothing counts twice',
    { timeout: 90_000 },
    async () => {
      tc = await startCluster({ pairs: 2, metrics: true, routerArgs: ['--failover-timeout-ms', '1500', '--follower-timeout-ms', '800'] });
      const { client, cluster } = tc;
      await prepare(client);
      const load = startLoad(client, { concurrency: 12, batchSize: 50, counters: pickCounter });
      for (const counter of counters) load.ledger.record(counter, 1n, 'ok');
      const reader = startReader(client);
      await waitFor(() => load.ledger.okCalls > 4_000, { timeoutMs: 20_000, what: 'load' });
      const victim = cluster.node(0, 'primary').process;
      await victim.stop('SIGKILL');
      const okAtKill = load.ledger.okCalls;
      await waitFor(() => load.ledger.okCalls > okAtKill + 4_000, { timeoutMs: 20_000, what: 'writes while the node is dead' });
      await victim.start();
      await waitForHealthy(client);
      const okAtRestart = load.ledger.okCalls;
      await waitFor(() => load.ledger.okCalls > okAtRestart + 4_000, { timeoutMs: 20_000, what: 'writes after the restart' });
      await load.stop();
      const { reads } = await reader.stop();
      expect(reads).toBeGreaterThan(0);
      await load.ledger.expectWithinBounds(client);
      await expectNoDrift(client);
      // The writes went as frames: the router replaced the broken stream.
      expect(await scrapeMetric(tc.routerMetricsPort, 'tally_router_node_streams_abandoned_total', { why: 'broken' })).toBeGreaterThan(0);
      expect(await scrapeMetric(tc.routerMetricsPort, 'tally_router_node_stream_stray_answers_total')).toBe(0);
    },
  );

  it(
    'a router SIGKILLed with frames in flight and restarted: the nodes drop its streams, nothing counts twice',
    { timeout: 90_000 },
    async () => {
      tc = await startCluster({ pairs: 2, metrics: true });
      const { client, cluster } = tc;
      await prepare(client);
      const load = startLoad(client, { concurrency: 12, batchSize: 50, counters: pickCounter, deadlineMs: 2_000 });
      for (const counter of counters) load.ledger.record(counter, 1n, 'ok');
      await waitFor(() => load.ledger.okCalls > 4_000, { timeoutMs: 20_000, what: 'load' });
      await cluster.router.stop('SIGKILL');
      const failedAtKill = load.ledger.unknownCalls + load.ledger.failedCalls;
      await waitFor(() => load.ledger.unknownCalls + load.ledger.failedCalls > failedAtKill, { timeoutMs: 10_000, what: 'calls to fail' });
      await cluster.router.start();
      await waitForHealthy(client);
      const okAtRestart = load.ledger.okCalls;
      await waitFor(() => load.ledger.okCalls > okAtRestart + 4_000, { timeoutMs: 20_000, what: 'writes through the new router' });
      await load.stop();
      await load.ledger.expectWithinBounds(client);
      await expectNoDrift(client);
      // Each primary saw the dead router's ApplyStream end (whatever status its end was counted with) and serves the new one.
      for (const pairIndex of [0, 1]) {
        const port = cluster.node(pairIndex, 'primary').metricsPort;
        const ended = (text: string): string[] =>
          text.split('\n').filter((line) => /^tally_rpc_total\{[^}]*method="ApplyStream"/.test(line));
        await waitFor(async () => ended(await metricsText(port)).length > 0, {
          timeoutMs: 10_000,
          what: `pair ${pairIndex}'s primary to count the dead router's ApplyStream as ended`,
        });
      }
    },
  );

  it(
    'a follower SIGSTOPped mid-stream stalls frames past their deadline; they fail unknown, the stream reopens, and nothing counts twice',
    { timeout: 90_000 },
    async () => {
      tc = await startCluster({
        pairs: 2,
        metrics: true,
        routerArgs: [
          '--failover-timeout-ms',
          '1500',
          '--follower-timeout-ms',
          '1500',
          '--node-call-timeout-ms',
          '300',
          '--read-timeout-ms',
          '300',
        ],
      });
      const { client, cluster } = tc;
      await prepare(client);
      const load = startLoad(client, { concurrency: 12, batchSize: 50, counters: pickCounter, deadlineMs: 3_000 });
      for (const counter of counters) load.ledger.record(counter, 1n, 'ok');
      const reader = startReader(client);
      await waitFor(() => load.ledger.okCalls > 4_000, { timeoutMs: 20_000, what: 'load' });
      const follower = cluster.node(0, 'follower').process;
      follower.signal('SIGSTOP');
      try {
        await pause(3_000);
        // The primary stops waiting for it once the router takes the pair out of sync: writes go on.
        const okWhilePaused = load.ledger.okCalls;
        await waitFor(() => load.ledger.okCalls > okWhilePaused + 2_000, {
          timeoutMs: 20_000,
          what: 'writes while the follower is paused',
        });
      } finally {
        follower.signal('SIGCONT');
      }
      await waitForHealthy(client);
      await load.stop();
      await reader.stop();
      await load.ledger.expectWithinBounds(client);
      await expectNoDrift(client);
      expect(await scrapeMetric(tc.routerMetricsPort, 'tally_router_node_streams_abandoned_total', { why: 'deadline' })).toBeGreaterThan(0);
    },
  );
});
