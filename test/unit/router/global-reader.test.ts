// SCOPE_GLOBAL reads over fakes: a peer part never goes back through one
// router when a later read meets an older copy; a part taken before the
// newest clear counts 0; region-local kinds are refused; a part's age comes
// from the newest whole round its origin confirmed.
import { describe, expect, it } from 'vitest';
import type { RegionComponent } from '../../../src/wire/internal/index.ts';
import type { CounterInfo } from '../../../src/router/directory/index.ts';
import type { TotalRead } from '../../../src/router/read/index.ts';
import { GlobalReader } from '../../../src/router/region/index.ts';

function counterOf(name: string, settings: Partial<CounterInfo> = {}): CounterInfo {
  return {
    name,
    kind: 'total',
    window: { bucketMs: 0, retentionMs: 0 },
    shards: [{ shardIndex: 0, shardId: 11, pairIndex: 0 }],
    writableShardCount: 1,
    createdMs: 1,
    growths: [],
    autoscale: true,
    generation: 0,
    ttlMs: null,
    ...settings,
  } as unknown as CounterInfo;
}

function component(origin: string, round: bigint, total: bigint, settings: Partial<RegionComponent> = {}): RegionComponent {
  return { origin, version: { term: 1n, round }, total, asOfUnixMs: 1_000, generation: 0, ...settings };
}

/** A reader whose home total and held components the test sets before each read. */
function readerWith(counter: CounterInfo) {
  const state = { home: 0n, homeGeneration: 0, homeIncarnation: 0, held: new Map<string, RegionComponent>() };
  const homeRead = (name: string): TotalRead => ({
    counter: name,
    total: state.home,
    exact: true,
    asOfMs: 2_000,
    stalenessMs: 0,
    shardCount: 1,
    source: counter,
    generation: state.homeGeneration,
  });
  const reader = new GlobalReader(
    'eu',
    {
      get: () => counter,
      readBarrier: async () => {},
      tombstone: (name: string) => (state.homeIncarnation === 0 ? undefined : { name, incarnation: state.homeIncarnation, deletedMs: 1 }),
    },
    { readExact: async (names) => names.map(homeRead), readCached: async (names) => names.map(homeRead) },
    { read: async (counters) => counters.map(() => new Map(state.held)) },
    (origin) =>
      origin === 'us'
        ? { durable: { term: 1n, round: 9n }, fresh: { version: { term: 1n, round: 5n }, asOfUnixMs: 1_900 }, lastBatchMs: 1 }
        : undefined,
    () => 2_500,
  );
  return { state, reader };
}

describe('global reader', () => {
  it('global: a peer part never goes back through one router, and the total adds the home part', async () => {
    const { state, reader } = readerWith(counterOf('likes'));
    state.home = 5n;
    state.held.set('us', component('us', 3n, 10n));
    const [first] = await reader.read(['likes'], 'EXACT');
    expect(first!.total).toBe(15n);
    expect(first!.exact).toBe(false);
    // A later read meets an older copy (a lagging node): the newer part still counts.
    state.held.set('us', component('us', 2n, 4n));
    const [second] = await reader.read(['likes'], 'EXACT');
    expect(second!.total).toBe(15n);
    expect(second!.regions.map((part) => [part.region, part.total, part.home])).toEqual([
      ['eu', 5n, true],
      ['us', 10n, false],
    ]);
  });

  it('global: a part taken before the newest clear counts 0, the home part too', async () => {
    const { state, reader } = readerWith(counterOf('likes', { generation: 1 }));
    state.home = 2n;
    state.homeGeneration = 1;
    state.held.set('us', component('us', 3n, 50n));
    state.held.set('ap', component('ap', 3n, 7n, { generation: 1 }));
    const [read] = await reader.read(['likes'], 'EXACT');
    expect(read!.total).toBe(9n);
    expect(read!.regions.find((part) => part.region === 'us')!.total).toBe(0n);
    state.held.set('ap', component('ap', 4n, 1n, { generation: 2 }));
    const [later] = await reader.read(['likes'], 'EXACT');
    expect(later!.total).toBe(1n);
  });

  it('global: a part taken before the newest delete of the name (a lower incarnation) counts 0, the home part too; within the newest incarnation clears apply', async () => {
    const { state, reader } = readerWith(counterOf('likes'));
    state.home = 4n;
    state.homeIncarnation = 1;
    // us has not applied the delete: its part, of a higher version and generation, is pre-delete.
    state.held.set('us', component('us', 9n, 50n, { generation: 3 }));
    state.held.set('ap', component('ap', 2n, 6n, { incarnation: 1 }));
    const [read] = await reader.read(['likes'], 'EXACT');
    expect(read!.total).toBe(10n);
    expect(read!.regions.map((part) => [part.region, part.total])).toEqual([
      ['eu', 4n],
      ['ap', 6n],
      ['us', 0n],
    ]);
    // ap applied a second delete this region has not: only ap's part counts, the home one is pre-delete.
    state.held.set('ap', component('ap', 3n, 2n, { incarnation: 2 }));
    const [later] = await reader.read(['likes'], 'EXACT');
    expect(later!.total).toBe(2n);
    expect(later!.regions[0]).toMatchObject({ region: 'eu', total: 0n });
  });

  it("global: a part's age is its origin's newest confirmed round when that covers it, else its own read time", async () => {
    const { state, reader } = readerWith(counterOf('likes'));
    state.held.set('us', component('us', 4n, 1n));
    const [covered] = await reader.read(['likes'], 'EXACT');
    expect(covered!.regions[1]!).toMatchObject({ asOfUnixMs: 1_900, stalenessMs: 600 });
    state.held.set('us', component('us', 6n, 2n));
    const [uncovered] = await reader.read(['likes'], 'EXACT');
    expect(uncovered!.regions[1]!).toMatchObject({ asOfUnixMs: 1_000, stalenessMs: 1_500 });
    expect(uncovered!.asOfMs).toBe(1_000);
  });

  it('global: window and membership counters are refused FAILED_PRECONDITION, saying they are region-local', async () => {
    for (const counter of [counterOf('w', { window: { bucketMs: 1_000, retentionMs: 60_000 } }), counterOf('m', { kind: 'membership' })]) {
      const { reader } = readerWith(counter);
      await expect(reader.read([counter.name], 'EXACT')).rejects.toMatchObject({
        code: 'failed_precondition',
        message: expect.stringContaining('region-local'),
      });
    }
  });
});
