// Regions under faults (real processes on loopback): the publishing region's
// router SIGKILLed and restarted mid-stream (a new term, a link that resumes)
// and the receiving region's primary SIGKILLed while components arrive (its
// follower takes over): once load stops, every region's global read equals
// the sum of the regions' exact totals, which hold every acknowledged increment.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { performance } from 'node:perf_hooks';
import { scrapeMetric, waitFor } from '../helpers/cluster.ts';
import { globalRead, rawRead, startRegions, stopRegions, type TestRegion } from '../helpers/regions.ts';

interface Outcomes {
  acked: bigint;
  unknown: bigint;
}

async function load(region: TestRegion, counters: readonly string[], durationMs: number, outcomes: Map<string, Outcomes>): Promise<void> {
  const endMs = performance.now() + durationMs;
  let sequence = 0;
  const writer = async (keyed: boolean): Promise<void> => {
    while (performance.now() < endMs) {
      const counter = counters[sequence % counters.length]!;
      const amount = BigInt(1 + (sequence++ % 7));
      const outcome = outcomes.get(counter)!;
      outcome.unknown += amount;
      try {
        await region.tc.client.increment(counter, amount, { deadlineMs: 3_000, ...(keyed ? {} : { idempotencyKey: null }) });
        outcome.acked += amount;
        outcome.unknown -= amount;
      } catch {
        // Unknown: it may or may not have applied.
      }
    }
  };
  await Promise.all([writer(true), writer(true), writer(false)]);
}

describe('regions under faults', () => {
  let regions: TestRegion[];

  beforeAll(async () => {
    regions = await startRegions(['eu', 'us']);
  }, 60_000);
  afterAll(async () => {
    await stopRegions(regions ?? []);
  });

  it(
    "regions: the publishing router SIGKILLed and restarted mid-stream and the receiving region's primary failed over while components arrive: exact convergence",
    { timeout: 90_000 },
    async () => {
      const [eu, us] = regions;
      const counters = ['chaos:a', 'chaos:b', 'chaos:c'];
      const outcomes = new Map(
        regions.map((region) => [region.name, new Map(counters.map((counter) => [counter, { acked: 0n, unknown: 0n }]))]),
      );
      const loads = Promise.all(regions.map((region) => load(region, counters, 4_000, outcomes.get(region.name)!)));
      await waitFor(async () => (await globalRead(us!, 'chaos:a')).parts.has('eu'), { timeoutMs: 10_000, what: 'eu components in us' });
      // eu's router (its publisher and its receiver) dies mid-stream; us's primary dies while eu's components arrive.
      await Promise.all([eu!.tc.cluster.router.stop('SIGKILL'), us!.tc.cluster.node(0, 'primary').process.stop('SIGKILL')]);
      await eu!.tc.cluster.router.start();
      // us's old primary stays down while the load runs: its follower, promoted, serves alone (if it was in
      // sync at the kill; if not, the shard waits for the primary, as G2 asks). Then it returns as a follower.
      await loads;
      await us!.tc.cluster.node(0, 'primary').process.start();

      for (const counter of counters) {
        const exact = new Map<string, bigint>();
        for (const region of regions) {
          const read = await waitFor(() => rawRead(region, { counter }), {
            timeoutMs: 30_000,
            what: `an exact read of ${counter} in ${region.name}`,
          });
          const total = BigInt(read.total);
          const outcome = outcomes.get(region.name)!.get(counter)!;
          // Nothing acknowledged lost, nothing counted that was never sent.
          expect(total >= outcome.acked && total <= outcome.acked + outcome.unknown, `${region.name} ${counter}`).toBe(true);
          exact.set(region.name, total);
        }
        const sum = [...exact.values()].reduce((total, part) => total + part, 0n);
        await waitFor(
          async () => {
            for (const region of regions) if ((await globalRead(region, counter)).total !== sum) return false;
            return true;
          },
          { timeoutMs: 20_000, what: `${counter} converged to ${sum}` },
        );
        for (const region of regions) expect((await globalRead(region, counter)).parts).toEqual(exact);
      }
      expect(await scrapeMetric(us!.tc.routerMetricsPort, 'tally_region_link_up', { peer: 'eu' })).toBe(1);
      await waitFor(async () => (await scrapeMetric(eu!.tc.routerMetricsPort, 'tally_region_link_up', { peer: 'us' })) === 1, {
        timeoutMs: 10_000,
      });
    },
  );
});
