// The region publisher over fakes: a round publishes what changed at the
// round's version; between full sweeps it reads only the counters written
// through its router; a sweep catches writes made elsewhere; a clear with
// no increment since still publishes (its generation); window and
// membership counters never do.
import { describe, expect, it } from 'vitest';
import { regionFullSweepRounds, createLogger } from '../../../src/common/index.ts';
import { type ComponentVersion } from '../../../src/wire/internal/index.ts';
import type { CounterInfo } from '../../../src/router/directory/index.ts';
import type { TotalRead } from '../../../src/router/read/index.ts';
import { RegionPublisher, type PeerLink } from '../../../src/router/region/index.ts';

function counterOf(name: string, settings: Partial<CounterInfo> = {}): CounterInfo {
  return { name, kind: 'total', window: { bucketMs: 0, retentionMs: 0 }, generation: 0, ...settings } as unknown as CounterInfo;
}

function setup() {
  const counters = new Map<string, CounterInfo>([
    ['a', counterOf('a')],
    ['b', counterOf('b')],
    ['w', counterOf('w', { window: { bucketMs: 1_000, retentionMs: 60_000 } })],
    ['m', counterOf('m', { kind: 'membership' })],
  ]);
  const totals = new Map<string, bigint>([
    ['a', 1n],
    ['b', 2n],
    ['w', 3n],
    ['m', 4n],
  ]);
  const readNames: string[][] = [];
  const offers: { changed: string[]; version: ComponentVersion }[] = [];
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
      readExact: async (names): Promise<TotalRead[]> => {
        readNames.push([...names]);
        return names.map((name) => ({
          counter: name,
          total: totals.get(name)!,
          exact: true,
          asOfMs: 5,
          stalenessMs: 0,
          shardCount: 1,
          source: counters.get(name),
          generation: counters.get(name)!.generation,
        }));
      },
    },
    [link],
    async () => 7n,
    createLogger('test', 'error'),
    // No timer run during a test: the test runs the rounds.
    3_600_000,
  );
  return { counters, totals, readNames, offers, publisher };
}

describe('region publisher', () => {
  it('publisher: the first round sweeps and publishes every total counter; later rounds read only what was written here', async () => {
    const { totals, readNames, offers, publisher } = setup();
    publisher.start();
    await publisher.runRound();
    expect(readNames).toEqual([['a', 'b']]);
    expect(offers.at(-1)).toEqual({ changed: ['a', 'b'], version: { term: 7n, round: 1n } });
    expect(publisher.get('a')).toMatchObject({ origin: 'eu', total: 1n, generation: 0, version: { term: 7n, round: 1n } });
    totals.set('a', 10n);
    totals.set('b', 20n);
    publisher.markWritten('a');
    await publisher.runRound();
    expect(readNames.at(-1)).toEqual(['a']);
    expect(offers.at(-1)).toEqual({ changed: ['a'], version: { term: 7n, round: 2n } });
    // Nothing written: nothing read, the round still offered whole.
    await publisher.runRound();
    expect(offers.at(-1)).toEqual({ changed: [], version: { term: 7n, round: 3n } });
    // b changed through another router: the next sweep finds it.
    for (let round = 4; round <= regionFullSweepRounds; round++) await publisher.runRound();
    expect(publisher.get('b')!.total).toBe(2n);
    await publisher.runRound();
    expect(offers.at(-1)).toEqual({ changed: ['b'], version: { term: 7n, round: BigInt(regionFullSweepRounds + 1) } });
    expect(publisher.get('b')!.total).toBe(20n);
    publisher.stop();
  });

  it('publisher: a clear with no increment since publishes its generation; the same total again publishes nothing', async () => {
    const { counters, totals, offers, publisher } = setup();
    publisher.start();
    await publisher.runRound();
    totals.set('a', 0n);
    await publisher.runRound();
    counters.set('a', counterOf('a', { generation: 1 }));
    publisher.markWritten('a');
    publisher.markWritten('b');
    await publisher.runRound();
    expect(offers.at(-1)!.changed).toEqual(['a']);
    expect(publisher.get('a')).toMatchObject({ total: 0n, generation: 1 });
    publisher.stop();
  });
});
