// Regions under real link faults: two regions, each a cluster of hosts in
// network namespaces, the link between them cut with iptables (both ways, then
// one way) under keyed and unkeyed load in each region, then one region killed
// whole and started again. Writes stay local (each region keeps acknowledging),
// a global read never goes back and never counts what no region could have
// counted, and once the links are up and the load stops every region's global
// total is exactly the sum of the regions' exact totals, each within what its
// own client saw acknowledged (nothing lost, nothing doubled). One harness for
// every phase; each phase its own counters.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { machineMonotonicMs, type GlobalRead, type LoadOptions } from '../helpers/nemesis/index.ts';
import { RegionCluster, acknowledgedBefore, acknowledgedShare, countIncrements } from '../helpers/region-hosts/index.ts';
import { pause } from '../helpers/pause.ts';
import { waitFor } from '../helpers/cluster.ts';

const regionNames = ['eu', 'us'] as const;
type RegionName = (typeof regionNames)[number];
const convergeTimeoutMs = 15_000;

interface SampledRead {
  region: RegionName;
  startMs: number;
  endMs: number;
  read: GlobalRead;
}

describe('chaos: links between regions', () => {
  let regions: RegionCluster | undefined;

  beforeAll(async () => {
    regions = await RegionCluster.start({ regions: [...regionNames] });
  }, 90_000);
  afterAll(async () => {
    await regions?.stop({ removeData: true });
  }, 30_000);

  const client = (region: RegionName) => regions!.region(region).client;
  const tail = (): string => regions!.logs.slice(-30).join('\n');

  function loadOptions(phase: string, counters: string[], seed: number): LoadOptions {
    return {
      counters,
      writersPerRouter: 3,
      readShare: 0,
      keyedShare: 0.5,
      duplicateShare: 0,
      deadlineMs: 2_000,
      pauseMs: 10,
      keyPrefix: `${phase}-`,
      seed,
    };
  }

  /** Global reads of every counter through every region, one after another, until stopped. */
  function sampleGlobalReads(counters: string[]): { stop: () => Promise<SampledRead[]> } {
    const reads: SampledRead[] = [];
    let running = true;
    const loops = regionNames.map(async (region) => {
      while (running) {
        for (const counter of counters) {
          const startMs = machineMonotonicMs();
          const read = await client(region)
            .globalRead(0, counter, { deadlineMs: 2_000 })
            .catch(() => undefined);
          if (read !== undefined) reads.push({ region, startMs, endMs: machineMonotonicMs(), read });
        }
        await pause(200);
      }
    });
    return {
      stop: async () => {
        running = false;
        await Promise.all(loops);
        return reads;
      },
    };
  }

  /** Every sampled global read: its home part holds what home acknowledged before it began, the sum at most everything that may have applied, and through one router no total goes back. */
  function checkSampledReads(reads: SampledRead[]): void {
    const possible = new Map<string, bigint>();
    for (const { read } of reads) {
      if (possible.has(read.counter)) continue;
      possible.set(
        read.counter,
        regionNames.reduce((sum, region) => {
          const counted = countIncrements(client(region).history, read.counter);
          return sum + counted.acknowledged + counted.unknown;
        }, 0n),
      );
    }
    const lastTotal = new Map<string, bigint>();
    for (const sample of reads) {
      const { read, region } = sample;
      expect(read.exact, 'a global read is never exact').toBe(false);
      const home = read.regions.find((part) => part.home);
      expect(home?.region, `the home part of a global read in ${region}`).toBe(region);
      const homeAcknowledged = acknowledgedBefore(client(region).history, read.counter, sample.startMs);
      expect(
        home!.total >= homeAcknowledged,
        `${region} ${read.counter}: home part ${home!.total} holds ${homeAcknowledged} acknowledged before the read`,
      ).toBe(true);
      expect(read.total, 'the sum of the parts').toBe(read.regions.reduce((sum, part) => sum + part.total, 0n));
      expect(
        read.total <= possible.get(read.counter)!,
        `${region} ${read.counter}: ${read.total} over every increment that may have applied`,
      ).toBe(true);
      const key = `${region}/${read.counter}`;
      expect(read.total >= (lastTotal.get(key) ?? 0n), `${key}: a global total went back through one router`).toBe(true);
      lastTotal.set(key, read.total);
    }
  }

  /** Once load stops and links are up: every region's global read is the sum of the regions' exact totals, each within its own client's bounds. */
  async function expectConverged(counters: string[]): Promise<void> {
    const exactTotals = new Map<string, bigint>();
    for (const counter of counters) {
      let sum = 0n;
      for (const region of regionNames) {
        const read = await client(region).read(0, counter);
        expect(read.outcome, `${region}: exact read of ${counter}`).toBe('ok');
        const counted = countIncrements(client(region).history, counter);
        expect(
          read.total! >= counted.acknowledged && read.total! <= counted.acknowledged + counted.unknown,
          `${region} ${counter}: exact ${read.total} within [${counted.acknowledged}, ${counted.acknowledged + counted.unknown}]`,
        ).toBe(true);
        sum += read.total!;
      }
      exactTotals.set(counter, sum);
    }
    for (const counter of counters) {
      for (const region of regionNames) {
        await waitFor(async () => (await client(region).globalRead(0, counter)).total === exactTotals.get(counter), {
          timeoutMs: convergeTimeoutMs,
          what: `${region}'s global read of ${counter} equal to ${exactTotals.get(counter)}`,
        }).catch(async (error: Error) => {
          const last = await client(region)
            .globalRead(0, counter)
            .catch(() => undefined);
          throw new Error(
            `${error.message}; last ${JSON.stringify(last, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v))}\n${tail()}`,
          );
        });
      }
    }
  }

  /** Load in every region, a fault held `holdMs` in its middle, then the heal: each region acknowledged >= 99% throughout, and everything converges. */
  async function loadThroughFault(
    phase: string,
    seed: number,
    fault: () => void,
    heal: () => void,
    holdMs: number,
    /** [reader, origin]: the reader's view of the origin must go stale during the cut (the cut reached the link). */
    staleViews: [RegionName, RegionName][],
  ): Promise<void> {
    const counters = [0, 1, 2].map((index) => `${phase}-${index}`);
    for (const region of regionNames) client(region).resetHistory();
    await Promise.all(
      regionNames.map((region, index) => client(region).startLoad(loadOptions(`${phase}-${region}`, counters, seed + index))),
    );
    const sampler = sampleGlobalReads(counters);
    let cutFromMs = 0;
    let healedMs = 0;
    try {
      await pause(1_500);
      cutFromMs = machineMonotonicMs();
      fault();
      await pause(holdMs);
      heal();
      healedMs = machineMonotonicMs();
      await pause(1_500);
    } finally {
      heal();
      await Promise.all(regionNames.map((region) => client(region).stopLoad()));
    }
    const reads = await sampler.stop();
    for (const region of regionNames) {
      const during = acknowledgedShare(client(region).history, cutFromMs, healedMs);
      expect(during.started, `${region}: increments made during the cut`).toBeGreaterThan(50);
      expect(
        during.share,
        `${region}: ${during.acknowledged} of ${during.started} increments acknowledged during the cut\n${tail()}`,
      ).toBeGreaterThanOrEqual(0.99);
    }
    expect(
      reads.filter((sample) => sample.startMs > cutFromMs && sample.endMs < healedMs).length,
      'global reads answered during the cut',
    ).toBeGreaterThan(5);
    checkSampledReads(reads);
    for (const [reader, origin] of staleViews) {
      const stalenessDuringCut = reads
        .filter((sample) => sample.region === reader && sample.startMs > cutFromMs && sample.endMs < healedMs)
        .map((sample) => sample.read.regions.find((part) => part.region === origin)?.stalenessMs ?? 0);
      expect(
        Math.max(...stalenessDuringCut),
        `${reader}'s view of ${origin} went stale during the cut (${stalenessDuringCut.length} reads)`,
      ).toBeGreaterThan(holdMs - 3_000);
    }
    await expectConverged(counters);
  }

  it('the link cut both ways (DROP) for 10 s under load: each region keeps acknowledging, then every global total converges exactly', async () => {
    await loadThroughFault(
      'both-ways',
      11,
      () => regions!.cut('eu-us', 'eu', 'us'),
      () => regions!.heal('eu-us'),
      10_000,
      [
        ['eu', 'us'],
        ['us', 'eu'],
      ],
    );
  }, 60_000);

  it('the link cut one way (eu to us dropped) under load: each region keeps acknowledging, then every global total converges exactly', async () => {
    await loadThroughFault(
      'one-way',
      21,
      () => regions!.cut('eu-to-us', 'eu', 'us', { oneWay: true }),
      () => regions!.heal('eu-to-us'),
      6_000,
      [['us', 'eu']],
    );
  }, 60_000);

  it("a whole region down: the other's global reads keep its last part with growing staleness, writes go on, and it picks up when the region returns", async () => {
    const counter = 'region-down';
    for (const region of regionNames) client(region).resetHistory();
    for (const region of regionNames) {
      for (let index = 0; index < 5; index++) expect((await client(region).increment(0, counter, 3n)).outcome).toBe('ok');
    }
    await expectConverged([counter]);
    const euPart = async (): Promise<GlobalRead['regions'][number]> => {
      const read = await client('us').globalRead(0, counter);
      const part = read.regions.find((one) => one.region === 'eu');
      if (part === undefined) throw new Error(`no eu part in ${JSON.stringify(read.regions.map((one) => one.region))}`);
      return part;
    };

    await regions!.killRegion('eu');
    const first = await euPart();
    expect(first.total, "eu's last component kept").toBe(15n);
    // us writes on, alone.
    for (let index = 0; index < 5; index++) expect((await client('us').increment(0, counter, 2n)).outcome).toBe('ok');
    await pause(1_500);
    const second = await euPart();
    expect(second.total, "eu's last component still kept").toBe(15n);
    expect(
      second.stalenessMs - first.stalenessMs,
      `staleness grows while eu is down (${first.stalenessMs} then ${second.stalenessMs} ms)`,
    ).toBeGreaterThanOrEqual(1_000);
    expect((await client('us').globalRead(0, counter)).total).toBe(15n + 25n);

    await regions!.startRegion('eu');
    const euOwn = await waitFor(async () => (await client('eu').read(0, counter)).total, {
      timeoutMs: 10_000,
      what: "eu's exact read after its restart",
    });
    expect(euOwn, "eu's own total is where it was").toBe(15n);
    for (let index = 0; index < 5; index++) expect((await client('eu').increment(0, counter, 4n)).outcome).toBe('ok');
    await expectConverged([counter]);
    expect((await client('us').globalRead(0, counter)).total).toBe(15n + 20n + 25n);
    const back = await euPart();
    expect(back.stalenessMs, "eu's part fresh again").toBeLessThan(second.stalenessMs);
  }, 60_000);
});
