// Two regions on loopback (one cluster each, real processes): a
// DeleteCounter in one region deletes the counter in every region, each at
// its own cut, through a durable tombstone that a router restart does not
// lose and that, resent, deletes nothing twice; a part counted after a
// region applied the delete survives.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { performance } from 'node:perf_hooks';
import { waitFor } from '../helpers/cluster.ts';
import { expectCutHeld, globalRead, load, rawRead, startRegions, stopRegions, type Sent, type TestRegion } from '../helpers/regions.ts';

/** Whether `region` holds a counter of that name (Describe). */
async function exists(region: TestRegion, counter: string): Promise<boolean> {
  try {
    await region.tc.client.describe(counter);
    return true;
  } catch (error) {
    if ((error as { code?: string }).code === 'not_found') return false;
    throw error;
  }
}

/** The first shard id of the region's counter of that name (undefined: none). */
async function shardIdOf(region: TestRegion, counter: string): Promise<number | undefined> {
  try {
    return (await region.tc.client.describe(counter)).placements[0]?.shardId;
  } catch (error) {
    if ((error as { code?: string }).code === 'not_found') return undefined;
    throw error;
  }
}

/**
 * SIGKILLs the region's router and starts it again: a new publishing term, memory gone, the directory kept.
 * Returns once the region's client reaches it again (its channel backs off after the kill).
 */
async function restartRouter(region: TestRegion): Promise<void> {
  await region.tc.cluster.router.stop('SIGKILL');
  await region.tc.cluster.router.start();
  await waitFor(() => region.tc.client.clusterStatus(), { timeoutMs: 10_000, what: `${region.name}'s client back` });
}

/** The region's link to its one peer is up and holds nothing unacknowledged (its publisher's rounds have run since). */
async function linkDrained(region: TestRegion): Promise<void> {
  await waitFor(
    async () => {
      const peer = (await region.tc.client.clusterStatus()).peerRegions[0];
      return peer?.link === 'up' && peer.componentsPending === 0;
    },
    { timeoutMs: 15_000, what: `${region.name}'s link drained` },
  );
}

describe('regions: DeleteCounter across regions', () => {
  let regions: TestRegion[];

  beforeAll(async () => {
    regions = await startRegions(['eu', 'us']);
  }, 60_000);
  afterAll(async () => {
    await stopRegions(regions ?? []);
  });

  it('regions: a delete in one region under load in both holds the cut in each: nothing acknowledged after a region applied it is lost, nothing before it survives', async () => {
    const [eu, us] = regions;
    const counter = 'del:load';
    const logs = new Map<string, Sent[]>([
      ['eu', []],
      ['us', []],
    ]);
    let loading = true;
    const loads = Promise.all([load(eu!, counter, () => loading, logs.get('eu')!), load(us!, counter, () => loading, logs.get('us')!)]);
    /** Monotonic ms: the delete's call in eu, and when us was first seen to have applied it. */
    const at = { deleteStartMs: 0, deleteDoneMs: 0, usCutSeenMs: 0 };
    // The writers stop whatever happens, so a failed check never leaves them running.
    try {
      await waitFor(async () => (await globalRead(eu!, counter)).parts.has('us'), { timeoutMs: 10_000, what: "us's part in eu" });
      // us applies the delete when eu's tombstone (or a component of incarnation 1) arrives: its counter
      // then has another shard (or none for a moment), and its exact total drops (increments only add).
      // Watched from before the delete is made.
      const usShardIdBefore = await shardIdOf(us!, counter);
      const watchStartMs = performance.now();
      const watcher = (async () => {
        let previous = -1n;
        while (at.usCutSeenMs === 0 && performance.now() - watchStartMs < 15_000) {
          const total = BigInt((await rawRead(us!, { counter })).total);
          if (total < previous || (await shardIdOf(us!, counter)) !== usShardIdBefore) at.usCutSeenMs = performance.now();
          previous = total;
        }
      })();
      at.deleteStartMs = performance.now();
      await eu!.tc.client.deleteCounter(counter);
      at.deleteDoneMs = performance.now();
      await watcher;
      expect(at.usCutSeenMs, 'us applied the delete').toBeGreaterThan(0);
      await new Promise((resolve) => setTimeout(resolve, 800));
    } finally {
      loading = false;
      await loads;
    }
    // Per region: everything sent after the region's cut was certainly made and acknowledged counts; nothing
    // acknowledged before the delete could have begun there survives.
    const cuts = new Map([
      ['eu', { after: at.deleteDoneMs, before: at.deleteStartMs }],
      ['us', { after: at.usCutSeenMs, before: at.deleteStartMs }],
    ]);
    await expectCutHeld(regions, counter, logs, cuts, 'delete');
  });

  it('regions: the tombstone is durable (a restart of the deleting router before it shipped still delivers it) and, resent by a new term, deletes nothing twice: a part counted after the delete survives', async () => {
    const [eu, us] = regions;
    const counter = 'del:durable';
    await eu!.tc.client.increment(counter, 3);
    await us!.tc.client.increment(counter, 5);
    await waitFor(async () => (await globalRead(us!, counter)).total === 8n && (await globalRead(eu!, counter)).total === 8n, {
      timeoutMs: 10_000,
      what: 'both regions at 8',
    });
    // No link either way: the delete stays in eu's directory, then eu's router loses its memory.
    for (const region of regions) {
      region.proxy.forwarding = false;
      region.proxy.dropConnections();
    }
    await eu!.tc.client.deleteCounter(counter);
    expect((await globalRead(eu!, counter)).total, "eu: us's pre-delete part counts as nothing").toBe(0n);
    await restartRouter(eu!);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await exists(us!, counter), 'us cannot have heard of the delete').toBe(true);
    // eu → us back: the restarted publisher ships the tombstone from its directory.
    us!.proxy.forwarding = true;
    await waitFor(async () => !(await exists(us!, counter)), { timeoutMs: 10_000, what: 'us applied the delete' });
    expect((await globalRead(us!, counter)).total).toBe(0n);
    // us counts again (its part of incarnation 1), unseen by eu; eu's next term resends the tombstone.
    await us!.tc.client.increment(counter, 7);
    await restartRouter(eu!);
    await linkDrained(eu!);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(BigInt((await rawRead(us!, { counter })).total), 'the resent tombstone deleted nothing').toBe(7n);
    // us → eu back: us's post-delete part re-creates the counter in eu, holding that part alone.
    eu!.proxy.forwarding = true;
    await waitFor(async () => (await globalRead(eu!, counter)).total === 7n, { timeoutMs: 10_000, what: "eu holds us's 7" });
    expect((await globalRead(eu!, counter)).parts).toEqual(
      new Map([
        ['eu', 0n],
        ['us', 7n],
      ]),
    );
    expect((await globalRead(us!, counter)).total).toBe(7n);
  });

  it('regions: bad input — a delete of a counter that does not exist — NOT_FOUND, and nothing changes: no tombstone, the peers still count in', async () => {
    const [eu, us] = regions;
    const counter = 'del:unknown';
    await expect(eu!.tc.client.deleteCounter(counter)).rejects.toMatchObject({ code: 'not_found' });
    // Had the failed delete left a tombstone, eu would refuse us's parts (incarnation 0) as pre-delete parts.
    await us!.tc.client.increment(counter, 2);
    await waitFor(async () => (await globalRead(eu!, counter)).total === 2n, { timeoutMs: 10_000, what: "eu holds us's part" });
    expect(await exists(us!, counter)).toBe(true);
  });
});
