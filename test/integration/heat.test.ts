// G6 against a started cluster: shards follow measured heat, writes spread
// evenly, metrics stay bounded, and `tally top` shows it.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../../src/cluster/managed-process.ts';
import { cliNodeArgs } from '../helpers/cli.ts';
import { metricsText, pause, scrapeMetric, startCluster, waitFor, type TestCluster } from '../helpers/cluster.ts';

const ceilingPerSec = 100;

describe('heat and automatic sizing', () => {
  let tc: TestCluster;
  beforeAll(async () => {
    tc = await startCluster({
      pairs: 2,
      metrics: true,
      routerArgs: ['--shard-ceiling-per-sec', String(ceilingPerSec), '--shards-max', '16', '--top-k', '2', '--heat-half-life-ms', '1000'],
    });
  });
  afterAll(async () => {
    await tc?.stop();
  });

  /** Drives about ratePerSec increments/s into counter until stop() (batches every 50 ms). */
  function drive(counter: string, ratePerSec: number): { stop: () => Promise<void> } {
    let running = true;
    const loop = (async () => {
      const perTick = Math.max(1, Math.round(ratePerSec / 20));
      while (running) {
        const startedMs = Date.now();
        await tc.client.incrementBatch(Array.from({ length: perTick }, () => ({ counter, amount: 1, idempotencyKey: null })));
        await pause(Math.max(0, 50 - (Date.now() - startedMs)));
      }
    })();
    return {
      stop: async () => {
        running = false;
        await loop;
      },
    };
  }

  it(
    'a counter driven past the ceiling grows within seconds; a cold one and one with autoscale off stay at 1; no shrink, no flapping',
    { timeout: 60_000 },
    async () => {
      const { client } = tc;
      for (const counter of ['heat:hot', 'heat:cold', 'heat:fixed']) await client.increment(counter, 1, { idempotencyKey: null });
      expect((await client.configure('heat:fixed', { autoscale: false })).autoscale).toBe(false);
      const hot = drive('heat:hot', 800);
      const fixed = drive('heat:fixed', 800);
      const cold = drive('heat:cold', 20);
      const startedMs = Date.now();
      // Waits past the bound asserted below, so a slow growth fails with its time.
      const grown = await waitFor(
        async () => {
          const description = await client.describe('heat:hot');
          return description.shards > 1 ? description : undefined;
        },
        { timeoutMs: 30_000, intervalMs: 200, what: 'heat:hot to grow' },
      );
      const growMs = Date.now() - startedMs;
      // Grown toward ceil(peak x 1.25 / ceiling): several shards, within shardsMax.
      expect(grown.shards).toBeGreaterThanOrEqual(3);
      expect(grown.shards).toBeLessThanOrEqual(16);
      expect(grown.peakPerSec).toBeGreaterThan(ceilingPerSec);
      expect(growMs).toBeLessThan(20_000);
      // Driven on, it settles where the sizing policy stops growing it: its rate within 1.1 x its shards' capacity.
      await waitFor(
        async () => {
          const entry = (await client.hot(20)).counters.find((candidate) => candidate.counter === 'heat:hot');
          return entry !== undefined && entry.ratePerSec <= entry.shards * ceilingPerSec * 1.1;
        },
        { timeoutMs: 15_000, intervalMs: 200, what: 'heat:hot sized for its rate' },
      );
      await Promise.all([hot.stop(), fixed.stop(), cold.stop()]);
      const settled = (await client.describe('heat:hot')).shards;
      expect(settled).toBeGreaterThanOrEqual(grown.shards);
      expect((await client.describe('heat:cold')).shards).toBe(1);
      expect((await client.describe('heat:fixed')).shards).toBe(1);
      // Cooling never shrinks and never grows again: the same shard count at every look until it is cold.
      const shardCountsWhileCooling = new Set<number>();
      await waitFor(
        async () => {
          shardCountsWhileCooling.add((await client.describe('heat:hot')).shards);
          const entry = (await client.hot(20)).counters.find((candidate) => candidate.counter === 'heat:hot');
          return entry === undefined || entry.ratePerSec < ceilingPerSec;
        },
        { timeoutMs: 15_000, intervalMs: 250, what: 'heat:hot to cool below one shard of rate' },
      );
      expect([...shardCountsWhileCooling]).toEqual([settled]);
      expect((await client.describe('heat:hot')).placements.map((placement) => placement.pair)).toEqual(expect.arrayContaining([0, 1]));
    },
  );

  it(
    'router: random shard choice over 100,000 increments on 16 shards stays within 6 standard deviations of even',
    { timeout: 60_000 },
    async () => {
      const { client } = tc;
      await client.increment('skew', 1, { idempotencyKey: null });
      await client.configure('skew', { autoscale: false });
      await client.setShards('skew', 16);
      for (let batch = 0; batch < 50; batch++) {
        await client.incrementBatch(Array.from({ length: 2_000 }, () => ({ counter: 'skew', amount: 1, idempotencyKey: null })));
      }
      const report = await client.reconcile('skew');
      const perShard = report.shards.map((shard) => Number(shard.primaryMemory));
      expect(perShard).toHaveLength(16);
      expect(perShard.reduce((sum, count) => sum + count, 0)).toBe(100_001);
      // Each shard's count is Binomial(100,000, 1/16): mean 6,250, sd = sqrt(n p (1-p)) = 76.5.
      // 6 sd = 459; the chance that any of 16 shards strays that far is about 16 x 2e-9.
      const mean = 100_000 / 16;
      const sd = Math.sqrt(100_000 * (1 / 16) * (15 / 16));
      for (const count of perShard) expect(Math.abs(count - mean)).toBeLessThan(6 * sd + 1);
      expect(Math.max(...perShard) / mean).toBeLessThan(1 + (6 * sd + 1) / mean);
    },
  );

  it(
    'metrics: docs/operations.md documents exactly the metrics router and node export, and per-counter series exist only for the top K',
    { timeout: 30_000 },
    async () => {
      const { client } = tc;
      const drivers = ['top:a', 'top:b', 'top:c', 'top:d'].map((counter, index) => drive(counter, 100 * (index + 1)));
      const counterLabelsOf = (text: string): Set<string> => new Set([...text.matchAll(/counter="([^"]+)"/g)].map((match) => match[1]!));
      // All four measured, and series for the two hottest only (earlier tests' counters cool meanwhile).
      await waitFor(
        async () => {
          const labels = counterLabelsOf(await metricsText(tc.routerMetricsPort));
          return (
            (await scrapeMetric(tc.routerMetricsPort, 'tally_heat_tracked_counters')) >= 4 &&
            labels.size === 2 &&
            labels.has('top:d') &&
            labels.has('top:c')
          );
        },
        {
          timeoutMs: 20_000,
          intervalMs: 200,
          what: 'more than K counters tracked and series for exactly the K = 2 hottest, top:d and top:c',
        },
      );
      await Promise.all(drivers.map((driver) => driver.stop()));
      await client.read('top:a', { consistency: 'cached' });
      const body = await metricsText(tc.routerMetricsPort);
      expect(counterLabelsOf(body).size).toBeLessThanOrEqual(2);
      const { readFileSync } = await import('node:fs');
      // The region links' series are the router's too, listed in docs/regions.md.
      const guide = ['docs/operations.md', 'docs/regions.md'].map((file) => readFileSync(path.join(repoRoot, file), 'utf8')).join('\n');
      // The relay's series (its alerts are in the same guide) come from the relay process, not router or node.
      const documented = new Set(
        [...guide.matchAll(/`(tally_[a-z_]+)/g)].map((match) => match[1]!).filter((name) => !name.startsWith('tally_relay_')),
      );
      const nodeBody = await metricsText(tc.cluster.nodes[0]!.metricsPort);
      const exported = new Set([...`${body}\n${nodeBody}`.matchAll(/^# TYPE (tally_[a-z_]+)/gm)].map((match) => match[1]!));
      expect(documented.size).toBeGreaterThan(20);
      for (const name of documented) expect(exported.has(name), `${name} is documented but not exported`).toBe(true);
      // prom-client's default process and Node.js metrics are documented as a group, not by name.
      const ours = [...exported].filter((name) => !/^tally_(process|nodejs)_/.test(name));
      for (const name of ours)
        expect(documented.has(name), `${name} is exported but not in docs/operations.md or docs/regions.md`).toBe(true);
    },
  );

  it('cli: tally top in non-TTY mode prints the counter columns and the nodes', { timeout: 30_000 }, async () => {
    const driver = drive('top:shown', 300);
    await waitFor(async () => (await tc.client.hot(20)).counters.some((entry) => entry.counter === 'top:shown' && entry.ratePerSec > 0), {
      timeoutMs: 10_000,
      intervalMs: 200,
      what: 'top:shown measured hot',
    });
    const output = await new Promise<{ code: number | null; stdout: string }>((resolve) => {
      const child = spawn(
        process.execPath,
        [...cliNodeArgs, 'top', '--iterations', '2', '--interval-ms', '300', '--router', tc.cluster.routerAddress],
        { cwd: repoRoot },
      );
      let stdout = '';
      child.stdout.on('data', (chunk) => (stdout += chunk));
      child.on('exit', (code) => resolve({ code, stdout }));
    });
    await driver.stop();
    expect(output.code).toBe(0);
    const blocks = output.stdout.trim().split('\n\n');
    expect(blocks.length).toBeGreaterThanOrEqual(2);
    expect(output.stdout).toMatch(/COUNTER\s+RATE\/S\s+PEAK\/S\s+SHARDS\s+SKEW\s+PER-SHARD/);
    expect(output.stdout).toMatch(/top:shown\s+[\d,]+\s+[\d,]+\s+\d+\s+\d\.\d\d/);
    expect(output.stdout).toMatch(/pair 1 {2}follower .* SERVING/);
  });
});
