// The publisher's distinct counters over fakes: a round publishes a
// distinct counter's sketch when it changed (or its clear generation did),
// never reads it as a total, and publishes nothing for a counter a clear
// overtook while it was read (the next round reads it again). A batch
// between regions stays within its byte budget once sketches ride along.
import { describe, expect, it } from 'vitest';
import { createLogger, regionBatchBytesMax, regionBatchComponentsMax } from '../../../src/common/index.ts';
import type { ComponentVersion, RegionComponent } from '../../../src/wire/internal/index.ts';
import type { CounterInfo } from '../../../src/router/directory/index.ts';
import { RegionPublisher, type PeerLink } from '../../../src/router/region/index.ts';
import { batchLength } from '../../../src/router/region/peer-link.ts';
import { HllSketch } from '../../../src/sketch/index.ts';

function counterOf(name: string, settings: Partial<CounterInfo> = {}): CounterInfo {
  return {
    name,
    kind: 'distinct',
    window: { bucketMs: 0, retentionMs: 0 },
    generation: 0,
    shards: [{ shardIndex: 0, shardId: 3, pairIndex: 0 }],
    ...settings,
  } as unknown as CounterInfo;
}

function setup() {
  const counters = new Map<string, CounterInfo>([['d', counterOf('d')]]);
  const sketch = new HllSketch();
  sketch.observe(5, 3);
  const exactReads: string[][] = [];
  const offers: { changed: string[]; version: ComponentVersion }[] = [];
  let duringRead: () => void = () => {};
  const link = {
    start() {},
    stop() {},
    offer(changed: readonly string[], version: ComponentVersion) {
      offers.push({ changed: [...changed], version });
    },
  } as unknown as PeerLink;
  const publisher = new RegionPublisher(
    'eu',
    { liveCounters: () => counters.values(), get: (name) => counters.get(name) },
    {
      readExact: async (names) => {
        exactReads.push([...names]);
        return [];
      },
    },
    [link],
    async () => 2n,
    createLogger('test', 'error'),
    3_600_000,
    undefined,
    {
      union: async () => {
        duringRead();
        return { union: HllSketch.deserialize(sketch.serialize()), shardCount: 1 };
      },
    },
  );
  return { counters, sketch, exactReads, offers, publisher, setDuringRead: (action: () => void) => (duringRead = action) };
}

describe('region publisher: distinct counters', () => {
  it('publishes the sketch when it changed or its generation did, never as an exact read', async () => {
    const { counters, sketch, exactReads, offers, publisher } = setup();
    publisher.start();
    await publisher.runRound();
    expect(exactReads).toEqual([]);
    expect(offers.at(-1)!.changed).toEqual(['d']);
    const first = publisher.get('d')!;
    expect(first).toMatchObject({ origin: 'eu', version: { term: 2n, round: 1n }, generation: 0 });
    expect(HllSketch.deserialize(first.sketch!).get(5)).toBe(3);
    // Unchanged: nothing published.
    publisher.markWritten('d');
    await publisher.runRound();
    expect(offers.at(-1)!.changed).toEqual([]);
    // A register rose: published at the round's version.
    sketch.observe(9, 2);
    publisher.markWritten('d');
    await publisher.runRound();
    expect(offers.at(-1)).toEqual({ changed: ['d'], version: { term: 2n, round: 3n } });
    // Cleared with the same registers read (none rose since): the generation alone ships.
    counters.set('d', counterOf('d', { generation: 1 }));
    publisher.markWritten('d');
    await publisher.runRound();
    expect(offers.at(-1)!.changed).toEqual(['d']);
    expect(publisher.get('d')!.generation).toBe(1);
  });

  it('a counter cleared while its sketch was read is published in a later round, not with the wrong generation', async () => {
    const { counters, offers, publisher, setDuringRead } = setup();
    publisher.start();
    setDuringRead(() => counters.set('d', counterOf('d', { generation: 1 })));
    await publisher.runRound();
    expect(offers.at(-1)!.changed).toEqual([]);
    expect(publisher.get('d')).toBeUndefined();
    setDuringRead(() => {});
    await publisher.runRound();
    expect(offers.at(-1)!.changed).toEqual(['d']);
    expect(publisher.get('d')!.generation).toBe(1);
  });

  it('a batch holds at most regionBatchComponentsMax components and about regionBatchBytesMax bytes, and never nothing', () => {
    const component = (sketchBytes: number): { counter: string; component: RegionComponent } => ({
      counter: 'c',
      component: {
        origin: 'eu',
        version: { term: 1n, round: 1n },
        total: 0n,
        asOfUnixMs: 1,
        generation: 0,
        ...(sketchBytes > 0 ? { sketch: Buffer.alloc(sketchBytes) } : {}),
      },
    });
    expect(batchLength(Array.from({ length: 2_000 }, () => component(0)))).toBe(regionBatchComponentsMax);
    const dense = Array.from({ length: 300 }, () => component(12_289));
    const length = batchLength(dense);
    expect(length).toBe(Math.floor(regionBatchBytesMax / (12_289 + 1 + 2 + 40)));
    expect(batchLength([component(2 * regionBatchBytesMax)])).toBe(1);
    expect(batchLength([])).toBe(0);
  });
});
