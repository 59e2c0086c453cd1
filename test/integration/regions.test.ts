// Two regions on loopback (one cluster each, real processes): writes stay
// local, a global read adds the peer's last component and stays within
// [acknowledged before shipping, acknowledged + unknown], and once load
// stops every region's global read equals everything acknowledged anywhere.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { performance } from 'node:perf_hooks';
import { status } from '@grpc/grpc-js';
import { scrapeMetric, waitFor } from '../helpers/cluster.ts';
import { tally } from '../helpers/cli.ts';
import { globalRead, rawRead, rawReadMany, startRegions, stopRegions, type TestRegion } from '../helpers/regions.ts';

/** What one region's writers know: acknowledged and unknown sums (positive amounts only, so totals only rise). */
interface Tally {
  acked: bigint;
  unknown: bigint;
}

/** Keyed and unkeyed increments of `counter` through `region` for durationMs; the sums by outcome. */
async function load(region: TestRegion, counter: string, durationMs: number, tally: Tally): Promise<void> {
  const endMs = performance.now() + durationMs;
  let sequence = 0;
  const writer = async (keyed: boolean): Promise<void> => {
    while (performance.now() < endMs) {
      const amount = BigInt(1 + (sequence++ % 5));
      tally.unknown += amount;
      try {
        await region.tc.client.increment(counter, amount, keyed ? {} : { idempotencyKey: null });
        tally.acked += amount;
        tally.unknown -= amount;
      } catch {
        // Unknown outcome: stays counted in `unknown`.
      }
    }
  };
  await Promise.all([writer(true), writer(true), writer(false), writer(false)]);
}

describe('regions', () => {
  let regions: TestRegion[];

  beforeAll(async () => {
    // eu also names a region "ap" at us's address: a peer that answers with another name.
    regions = await startRegions(['eu', 'us'], { extraPeers: { eu: 'ap={us}' } });
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
    // The TypeScript client and the CLI ask for the same thing.
    const viaClient = await eu!.tc.client.read('likes', { scope: 'global' });
    expect(viaClient.total).toBe(12n);
    expect(viaClient.exact).toBe(false);
    expect(viaClient.regions!.map((part) => [part.region, part.total, part.home])).toEqual([
      ['eu', 5n, true],
      ['us', 7n, false],
    ]);
    expect((await eu!.tc.client.readMany(['likes'], { scope: 'global', consistency: 'cached' }))[0]!.total).toBe(12n);
    expect((await eu!.tc.client.read('likes')).regions).toBeUndefined();
    const cli = await tally(['get', 'likes', '--global', '--router', us!.tc.cluster.routerAddress]);
    expect(cli.stdout).toContain('likes = 12 (global over 2 regions');
    expect(cli.stdout).toMatch(/us \(home\) = 7/);
    const status = await tally(['status', '--router', us!.tc.cluster.routerAddress]);
    expect(status.stdout).toContain('region us');
    expect(status.stdout).toMatch(/peer region eu: link (up|connecting)/);
    // The components were logged packed: the pairs' followers said they hold packed entries.
    const usMetrics = us!.tc.cluster.routerMetricsPort;
    expect(await scrapeMetric(usMetrics, 'tally_region_components_applied_total', { peer: 'eu' })).toBeGreaterThan(0);
    expect(await scrapeMetric(usMetrics, 'tally_region_components_unpacked_total', { peer: 'eu' }).catch(() => 0)).toBe(0);
  });

  it('regions: under keyed and unkeyed load in both, every global read lies within [home acknowledged, all acknowledged + unknown], never goes back, and converges exactly', async () => {
    const [eu, us] = regions;
    const tallies = new Map<string, Tally>([
      ['eu', { acked: 0n, unknown: 0n }],
      ['us', { acked: 0n, unknown: 0n }],
    ]);
    const counter = 'load:views';
    let loading = true;
    const checks: string[] = [];
    const reader = async (region: TestRegion): Promise<number> => {
      let reads = 0;
      let previous = 0n;
      while (loading) {
        const homeBefore = tallies.get(region.name)!.acked;
        const read = await globalRead(region, counter);
        const all = [...tallies.values()].reduce((sum, tally) => sum + tally.acked + tally.unknown, 0n);
        const home = read.parts.get(region.name) ?? 0n;
        if (home < homeBefore) checks.push(`${region.name}: home part ${home} < acknowledged before the read ${homeBefore}`);
        if (read.total > all) checks.push(`${region.name}: total ${read.total} > acknowledged + unknown ${all}`);
        if (read.total < previous) checks.push(`${region.name}: total went back from ${previous} to ${read.total}`);
        previous = read.total;
        reads++;
      }
      return reads;
    };
    const readers = Promise.all([reader(eu!), reader(us!)]);
    await Promise.all([load(eu!, counter, 2_000, tallies.get('eu')!), load(us!, counter, 2_000, tallies.get('us')!)]);
    loading = false;
    const readCounts = await readers;
    expect(checks).toEqual([]);
    expect(Math.min(...readCounts)).toBeGreaterThan(5);
    for (const [name, tally] of tallies) expect(tally.acked, name).toBeGreaterThan(0n);
    // Converged: each region's part equals that region's own exact total, and the sum is within the outcomes.
    const exact = new Map<string, bigint>();
    for (const region of regions) exact.set(region.name, BigInt((await rawRead(region, { counter })).total));
    const sum = [...exact.values()].reduce((total, part) => total + part, 0n);
    for (const [name, tally] of tallies) {
      expect(exact.get(name)! >= tally.acked && exact.get(name)! <= tally.acked + tally.unknown, name).toBe(true);
    }
    await waitFor(
      async () => {
        for (const region of regions) if ((await globalRead(region, counter)).total !== sum) return false;
        return true;
      },
      { timeoutMs: 10_000 },
    );
    for (const region of regions) expect((await globalRead(region, counter)).parts).toEqual(exact);
  });

  it('regions: bad input — an unknown scope, a global read of a window or membership counter, a peer that is another region — gets a clear status and changes nothing', async () => {
    const [eu, us] = regions;
    await eu!.tc.client.configure('windowed', { window: { bucketMs: 1_000, retentionMs: 60_000 } });
    await eu!.tc.client.increment('windowed', 3);
    await eu!.tc.client.setMember('members', 7n, true);
    const before = (await eu!.tc.client.clusterStatus()).nodes.map((node) => node.lastLsn);
    await expect(rawRead(eu!, { counter: 'likes', scope: 7 as unknown as 'SCOPE_GLOBAL' })).rejects.toMatchObject({
      code: status.INVALID_ARGUMENT,
      details: expect.stringContaining('scope must be SCOPE_REGION or SCOPE_GLOBAL'),
    });
    for (const counter of ['windowed', 'members'])
      await expect(rawRead(eu!, { counter, scope: 'SCOPE_GLOBAL' })).rejects.toMatchObject({
        code: status.FAILED_PRECONDITION,
        details: expect.stringContaining('region-local, read them with SCOPE_REGION'),
      });
    await expect(rawReadMany(eu!, { counters: ['likes', 'windowed'], scope: 'SCOPE_GLOBAL' })).rejects.toMatchObject({
      code: status.FAILED_PRECONDITION,
    });
    expect((await eu!.tc.client.clusterStatus()).nodes.map((node) => node.lastLsn)).toEqual(before);
    // A window counter's total stays home: us never hears of it.
    expect((await rawRead(us!, { counter: 'windowed' })).shards).toBe(0);
    // "ap" answers as us: refused, said in the status, and us stored nothing under the wrong name.
    await waitFor(
      async () => {
        const status = await eu!.tc.client.clusterStatus();
        return status.peerRegions?.find((peer) => peer.region === 'ap')?.link === 'refused';
      },
      { timeoutMs: 10_000, what: 'the link to "ap" refused' },
    );
    const peers = (await eu!.tc.client.clusterStatus()).peerRegions!;
    expect(peers.find((peer) => peer.region === 'ap')!.error).toContain('serves region "us", not "ap"');
    expect(peers.find((peer) => peer.region === 'us')!.link).toBe('up');
    expect((await globalRead(us!, 'likes')).parts.has('ap')).toBe(false);
  });

  it('regions: a clear in one region takes effect in every region at its own cut; increments after it count everywhere', async () => {
    const [eu, us] = regions;
    const counter = 'cut:likes';
    await eu!.tc.client.increment(counter, 10);
    await us!.tc.client.increment(counter, 20);
    const converged = async (total: bigint): Promise<void> => {
      await waitFor(
        async () => {
          for (const region of regions) if ((await globalRead(region, counter)).total !== total) return false;
          return true;
        },
        { timeoutMs: 10_000, what: `global ${total} in every region` },
      );
    };
    await converged(30n);
    const cleared = await eu!.tc.client.clear(counter);
    expect(cleared.generation).toBe(1);
    // At once in eu: us's part, taken before the clear, counts 0 (us clears it when it learns).
    expect((await globalRead(eu!, counter)).total).toBe(0n);
    // us clears its own counter when eu's component of generation 1 arrives.
    await waitFor(async () => (await rawRead(us!, { counter })).total === '0', { timeoutMs: 10_000, what: 'us cleared' });
    await converged(0n);
    // Acknowledged after each region applied the clear: counted everywhere, and the clear is not made again.
    await eu!.tc.client.increment(counter, 3);
    await us!.tc.client.increment(counter, 4);
    await converged(7n);
    for (const region of regions)
      expect((await globalRead(region, counter)).parts).toEqual(
        new Map([
          ['eu', 3n],
          ['us', 4n],
        ]),
      );
    expect((await us!.tc.client.clear(counter, { idempotencyKey: 'probe-generation' })).generation).toBe(2);
  });
});
