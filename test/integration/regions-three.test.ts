// Three regions, each peered with the other two: keyed and unkeyed load in
// every region, then each region's global read equals the sum of the three
// exact totals, and a whole region stopped keeps its last part in the
// others' global reads with a growing staleness.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../helpers/cluster.ts';
import { globalRead, rawRead, startRegions, stopRegions, type TestRegion } from '../helpers/regions.ts';

describe('three regions', () => {
  let regions: TestRegion[];

  beforeAll(async () => {
    regions = await startRegions(['eu', 'us', 'ap']);
  }, 90_000);
  afterAll(async () => {
    await stopRegions(regions ?? []);
  });

  it("regions: a delete reaching a region first through a third region's post-delete part: that part survives, the region's own pre-delete part goes, and the deleting region's tombstone then deletes nothing more", async () => {
    const [eu, us, ap] = regions;
    const counter = 'three:deleted';
    await eu!.tc.client.increment(counter, 1);
    await us!.tc.client.increment(counter, 2);
    await ap!.tc.client.increment(counter, 4);
    await waitFor(
      async () => {
        for (const region of regions) if ((await globalRead(region, counter)).total !== 7n) return false;
        return true;
      },
      { timeoutMs: 15_000, what: 'every region reads 7' },
    );
    // us hears nothing; eu deletes and ap applies the delete, then counts again (incarnation 1).
    us!.proxy.forwarding = false;
    us!.proxy.dropConnections();
    await eu!.tc.client.deleteCounter(counter);
    await waitFor(async () => (await globalRead(ap!, counter)).total === 0n, { timeoutMs: 10_000, what: 'ap applied the delete' });
    await ap!.tc.client.increment(counter, 10);
    // eu's router away: us learns of the delete from ap's post-delete part alone.
    await eu!.tc.cluster.router.stop('SIGKILL');
    us!.proxy.forwarding = true;
    await waitFor(async () => (await globalRead(us!, counter)).total === 10n, { timeoutMs: 10_000, what: "us holds ap's part alone" });
    expect((await globalRead(us!, counter)).parts.get('ap')).toBe(10n);
    expect(BigInt((await rawRead(us!, { counter })).total), "us's pre-delete part went with its delete").toBe(0n);
    // eu back: a new term resends what it holds; us deletes nothing more and every region converges on ap's part.
    await eu!.tc.cluster.router.start();
    // eu's client channel backs off after the kill: the next test writes through it.
    await waitFor(() => eu!.tc.client.clusterStatus(), { timeoutMs: 10_000, what: "eu's client back" });
    await us!.tc.client.increment(counter, 5);
    await waitFor(
      async () => {
        for (const region of regions) if ((await globalRead(region, counter)).total !== 15n) return false;
        return true;
      },
      { timeoutMs: 15_000, what: 'every region reads 15' },
    );
    // eu never counted again: its part is 0 (listed at home, absent where it never shipped one).
    for (const region of regions) {
      const { parts } = await globalRead(region, counter);
      expect([parts.get('eu') ?? 0n, parts.get('us'), parts.get('ap')], region.name).toEqual([0n, 5n, 10n]);
    }
  });

  it('regions: three regions under load converge exactly; a region gone keeps its last part, staleness growing', async () => {
    const counter = 'three:votes';
    const acked = new Map<string, bigint>(regions.map((region) => [region.name, 0n]));
    await Promise.all(
      regions.map(async (region, index) => {
        for (let round = 0; round < 30; round++) {
          const amount = BigInt(index + 1 + (round % 3));
          const items = [
            { counter, amount },
            { counter, amount: -1n, idempotencyKey: null },
          ];
          await region.tc.client.incrementBatch(items);
          acked.set(region.name, acked.get(region.name)! + amount - 1n);
        }
      }),
    );
    const exact = new Map<string, bigint>();
    for (const region of regions) exact.set(region.name, BigInt((await rawRead(region, { counter })).total));
    expect(exact).toEqual(acked);
    const sum = [...acked.values()].reduce((total, part) => total + part, 0n);
    await waitFor(
      async () => {
        for (const region of regions) if ((await globalRead(region, counter)).total !== sum) return false;
        return true;
      },
      { timeoutMs: 15_000, what: `every region reads ${sum}` },
    );
    for (const region of regions) expect((await globalRead(region, counter)).parts).toEqual(exact);

    // ap goes away for good: the others keep its last part, older with every read.
    const [eu, , ap] = regions;
    await ap!.proxy.close();
    await ap!.tc.cluster.stop('SIGKILL');
    const first = (await globalRead(eu!, counter)).response.regions.find((part) => part.region === 'ap')!;
    await waitFor(
      async () => {
        const later = (await globalRead(eu!, counter)).response.regions.find((part) => part.region === 'ap')!;
        return Number(later.stalenessMs) > Number(first.stalenessMs) + 300;
      },
      { timeoutMs: 5_000, what: "ap's part growing stale" },
    );
    expect((await globalRead(eu!, counter)).total).toBe(sum);
  });
});
