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
