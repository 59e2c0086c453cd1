// Two regions on loopback (one cluster each, real processes): writes stay
// local, a global read adds the peer's last component and stays within
// [acknowledged before shipping, acknowledged + unknown], and once load
// stops every region's global read equals everything acknowledged anywhere.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../helpers/cluster.ts';
import { globalRead, rawRead, rawReadMany, startRegions, stopRegions, type TestRegion } from '../helpers/regions.ts';

describe('regions', () => {
  let regions: TestRegion[];

  beforeAll(async () => {
    regions = await startRegions(['eu', 'us']);
  }, 60_000);
  afterAll(async () => {
    await stopRegions(regions ?? []);
  });

  it('regions: a global read converges to every acknowledged increment of both regions', async () => {
    const [eu, us] = regions;
    await eu!.tc.client.increment('likes', 5);
    await us!.tc.client.increment('likes', 7);
    await waitFor(async () => (await globalRead(eu!, 'likes')).total === 12n && (await globalRead(us!, 'likes')).total === 12n, {
      timeoutMs: 10_000,
    });
    const read = await globalRead(eu!, 'likes');
    expect(read.response.exact).toBe(false);
    expect(read.parts).toEqual(
      new Map([
        ['eu', 5n],
        ['us', 7n],
      ]),
    );
    expect(read.response.regions[0]!.home).toBe(true);
    // Region scope is unchanged: this region's own total, exact.
    const local = await rawRead(eu!, { counter: 'likes' });
    expect(local.total).toBe('5');
    expect(local.exact).toBe(true);
    const many = await rawReadMany(us!, { counters: ['likes', 'nothing'], scope: 'SCOPE_GLOBAL' });
    expect(many.values.map((value) => value.total)).toEqual(['12', '0']);
    expect(many.values[0]!.regions.map((part) => part.region)).toEqual(['us', 'eu']);
  });
});
