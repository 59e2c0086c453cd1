// Two regions on loopback (one cluster each, real processes): distinct
// counters count the union of every region's members, and a clear made in
// one region under load in both holds its documented cut in each region.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { performance } from 'node:perf_hooks';
import { status, type ServiceError } from '@grpc/grpc-js';
import type { counterV1 } from '../../src/common/index.ts';
import { hllStandardError } from '../../src/sketch/index.ts';
import { waitFor } from '../helpers/cluster.ts';
import { tally } from '../helpers/cli.ts';
import { expectCutHeld, globalRead, load, rawRead, startRegions, stopRegions, type Sent, type TestRegion } from '../helpers/regions.ts';

type RawCountDistinct = (
  request: counterV1.CountDistinctRequest,
  callback: (error: ServiceError | null, response?: counterV1.CountDistinctResponse__Output) => void,
) => void;

function rawCountDistinct(region: TestRegion, request: counterV1.CountDistinctRequest): Promise<counterV1.CountDistinctResponse__Output> {
  const call = (region.raw as unknown as { CountDistinct: RawCountDistinct }).CountDistinct.bind(region.raw);
  return new Promise((resolve, reject) => call(request, (error, response) => (error ? reject(error) : resolve(response!))));
}

async function globalDistinct(region: TestRegion, counters: string[]): Promise<number> {
  return Number((await rawCountDistinct(region, { counters, scope: 'SCOPE_GLOBAL' })).estimate);
}

function members(prefix: string, count: number): string[] {
  return Array.from({ length: count }, (_, index) => `${prefix}${index}`);
}

describe('regions: distinct counters and clears under load', () => {
  let regions: TestRegion[];

  beforeAll(async () => {
    regions = await startRegions(['eu', 'us']);
  }, 60_000);
  afterAll(async () => {
    await stopRegions(regions ?? []);
  });

  it('regions: a distinct counter counts the union of every region: the same members once, disjoint members added up', async () => {
    const [eu, us] = regions;
    // The same 1,000 members in both regions: the union's registers are either region's.
    await eu!.tc.client.addDistinct('kinds:same', members('m', 1_000));
    await us!.tc.client.addDistinct('kinds:same', members('m', 1_000));
    const local = (await eu!.tc.client.countDistinct('kinds:same')).estimate;
    expect(Math.abs(local - 1_000)).toBeLessThan(1_000 * 4 * hllStandardError);
    // Disjoint members: 1,000 in eu, 2,000 in us.
    await eu!.tc.client.addDistinct('kinds:disjoint', members('a', 1_000));
    await us!.tc.client.addDistinct('kinds:disjoint', members('b', 2_000));
    const euOnly = (await eu!.tc.client.countDistinct('kinds:disjoint')).estimate;
    const usOnly = (await us!.tc.client.countDistinct('kinds:disjoint')).estimate;
    // Converged: both regions hold both sketches, and a union is the same wherever it is taken.
    let union = 0;
    await waitFor(
      async () => {
        const [fromEu, fromUs] = [await globalDistinct(eu!, ['kinds:disjoint']), await globalDistinct(us!, ['kinds:disjoint'])];
        union = fromEu;
        return fromEu === fromUs && fromEu > Math.max(euOnly, usOnly);
      },
      { timeoutMs: 10_000, what: 'both regions count the union of the disjoint members' },
    );
    expect(Math.abs(union - 3_000)).toBeLessThan(3_000 * 4 * hllStandardError);
    await waitFor(async () => (await globalDistinct(us!, ['kinds:same'])) === local, { timeoutMs: 10_000, what: 'us holds eu sketch' });
    expect(await globalDistinct(eu!, ['kinds:same'])).toBe(local);
    // Duplicates are harmless: the same members again change no register, so no estimate.
    await us!.tc.client.addDistinct('kinds:same', members('m', 1_000));
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(await globalDistinct(eu!, ['kinds:same'])).toBe(local);
    // A union over several counters across regions, through the client and the CLI.
    const both = await eu!.tc.client.countDistinct(['kinds:same', 'kinds:disjoint'], { scope: 'global' });
    expect(Math.abs(both.estimate - 4_000)).toBeLessThan(4_000 * 4 * hllStandardError);
    const cli = await tally(['distinct', 'count', '--global', 'kinds:disjoint', '--router', us!.tc.cluster.routerAddress]);
    expect(cli.stdout).toContain(`kinds:disjoint: ${union} distinct`);
    // Region scope is unchanged: this region's members only.
    expect((await us!.tc.client.countDistinct('kinds:disjoint')).estimate).toBe(usOnly);
  });

  it('regions: a clear of a distinct counter in one region empties it everywhere; members added after count', async () => {
    const [eu, us] = regions;
    const counter = 'kinds:cleared';
    await eu!.tc.client.addDistinct(counter, members('x', 500));
    await us!.tc.client.addDistinct(counter, members('y', 500));
    await waitFor(async () => (await globalDistinct(us!, [counter])) > 900, { timeoutMs: 10_000, what: 'us sees both' });
    await us!.tc.client.clear(counter);
    // At once in us: eu's sketch, taken before the clear, counts empty.
    expect(await globalDistinct(us!, [counter])).toBe(0);
    await waitFor(async () => (await eu!.tc.client.countDistinct(counter)).estimate === 0, { timeoutMs: 10_000, what: 'eu cleared' });
    await eu!.tc.client.addDistinct(counter, members('z', 100));
    await waitFor(
      async () => {
        const [fromEu, fromUs] = [await globalDistinct(eu!, [counter]), await globalDistinct(us!, [counter])];
        return fromEu === fromUs && Math.abs(fromEu - 100) < 100 * 4 * hllStandardError;
      },
      { timeoutMs: 10_000, what: 'both count the members added after the clear' },
    );
  });

  it('regions: bad input — a global Read of a distinct counter, a global CountDistinct of a total, an unknown scope, one name two kinds in two regions — a clear status, nothing changed', async () => {
    const [eu, us] = regions;
    await eu!.tc.client.addDistinct('kinds:bad', ['a']);
    await expect(rawRead(eu!, { counter: 'kinds:bad', scope: 'SCOPE_GLOBAL' })).rejects.toMatchObject({
      code: status.FAILED_PRECONDITION,
      details: expect.stringContaining('CountDistinct'),
    });
    await eu!.tc.client.increment('kinds:total', 1);
    await expect(rawCountDistinct(eu!, { counters: ['kinds:total'], scope: 'SCOPE_GLOBAL' })).rejects.toMatchObject({
      code: status.FAILED_PRECONDITION,
      details: expect.stringContaining('not a distinct counter'),
    });
    await expect(rawCountDistinct(eu!, { counters: ['kinds:bad'], scope: 7 as unknown as 'SCOPE_GLOBAL' })).rejects.toMatchObject({
      code: status.INVALID_ARGUMENT,
    });
    // One name, a total in eu and a distinct counter in us: each region refuses the other's component and keeps its own kind.
    await eu!.tc.client.increment('kinds:mixed', 5);
    await us!.tc.client.addDistinct('kinds:mixed', members('q', 10));
    await waitFor(async () => (await eu!.tc.client.clusterStatus()).peerRegions[0]?.componentsPending === 0, {
      timeoutMs: 10_000,
      what: 'eu link drained',
    });
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect((await globalRead(eu!, 'kinds:mixed')).parts).toEqual(new Map([['eu', 5n]]));
    expect((await us!.tc.client.countDistinct('kinds:mixed', { scope: 'global' })).estimate).toBe(10);
    expect((await eu!.tc.client.describe('kinds:mixed')).kind).toBe('total');
  });

  it('regions: a clear in one region under load in both holds the cut in each: nothing acknowledged after a region applied it is lost, nothing before it survives', async () => {
    const [eu, us] = regions;
    const counter = 'kinds:clear-load';
    const logs = new Map<string, Sent[]>([
      ['eu', []],
      ['us', []],
    ]);
    let loading = true;
    const loads = Promise.all([load(eu!, counter, () => loading, logs.get('eu')!), load(us!, counter, () => loading, logs.get('us')!)]);
    await new Promise((resolve) => setTimeout(resolve, 800));
    // us applies the clear when eu's component of generation 1 arrives: its own exact total drops then (increments
    // only add). Watched from before the clear is made, so the drop cannot slip between two looks.
    let usCutSeenMs = 0;
    const watchStartMs = performance.now();
    const watcher = (async () => {
      let previous = -1n;
      while (usCutSeenMs === 0 && performance.now() - watchStartMs < 10_000) {
        const total = BigInt((await rawRead(us!, { counter })).total);
        if (total < previous) usCutSeenMs = performance.now();
        previous = total;
      }
    })();
    const clearStartMs = performance.now();
    const cleared = await eu!.tc.client.clear(counter);
    const clearDoneMs = performance.now();
    expect(cleared.generation).toBe(1);
    await watcher;
    expect(usCutSeenMs, 'us applied the clear').toBeGreaterThan(0);
    await new Promise((resolve) => setTimeout(resolve, 800));
    loading = false;
    await loads;
    // Per region: everything sent after the region's cut was certainly made and acknowledged counts; nothing
    // acknowledged before the clear could have begun there survives.
    const cuts = new Map([
      ['eu', { after: clearDoneMs, before: clearStartMs }],
      ['us', { after: usCutSeenMs, before: clearStartMs }],
    ]);
    await expectCutHeld(regions, counter, logs, cuts, 'clear');
    // One clear per region: the next one made anywhere is the counter's second.
    expect((await us!.tc.client.clear(counter, { idempotencyKey: 'probe-generation' })).generation).toBe(2);
  });
});
