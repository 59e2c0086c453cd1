// Unit tests for ReadCache (G4): staleness bound, newest-wins, idle eviction
// and the entry bound. Every call takes an explicit nowMs; nothing sleeps.
import { describe, expect, it, vi } from 'vitest';
import type { CounterInfo } from '../../../../src/router/directory/index.ts';
import { ReadCache, type CachedTotal } from '../../../../src/router/read/read-cache.ts';
import { randomInt, seededRandom } from '../../../helpers/seeded-random.ts';

const maxStalenessMs = 2_000;
const idleMs = 60_000;

/** The counter a total was summed for: the cache stores it and never looks inside. */
const source = {} as CounterInfo;

function total(value: bigint, asOfMs: number, shardCount = 1): CachedTotal {
  return { total: value, shardCount, asOfMs, source, generation: 0 };
}

describe('read cache', () => {
  it('serves a total up to exactly maxStalenessMs old', () => {
    const cache = new ReadCache(maxStalenessMs, idleMs, 10);
    cache.put('c', total(42n, 10_000), 10_000);
    expect(cache.get('c', 10_000)?.total).toBe(42n);
    expect(cache.get('c', 10_000 + maxStalenessMs)).toMatchObject({ total: 42n, asOfMs: 10_000, shardCount: 1 });
  });

  it('never serves a total older than maxStalenessMs', () => {
    const cache = new ReadCache(maxStalenessMs, idleMs, 10);
    cache.put('c', total(42n, 10_000), 10_000);
    expect(cache.get('c', 10_000 + maxStalenessMs + 1)).toBeUndefined();
    expect(cache.get('c', 10_000 + 10 * maxStalenessMs)).toBeUndefined();
  });

  it('a total stored late (after a slow summing) is judged by its asOf, not by when it was stored', () => {
    const cache = new ReadCache(maxStalenessMs, idleMs, 10);
    // The summing began at 10 000 but finished long after: already too old to serve.
    cache.put('c', total(7n, 10_000), 10_000 + maxStalenessMs + 500);
    expect(cache.get('c', 10_000 + maxStalenessMs + 500)).toBeUndefined();
  });

  it('an unknown counter is a miss', () => {
    const cache = new ReadCache(maxStalenessMs, idleMs, 10);
    expect(cache.get('never-put', 0)).toBeUndefined();
  });

  it('a newer asOf replaces the cached total', () => {
    const cache = new ReadCache(maxStalenessMs, idleMs, 10);
    cache.put('c', total(1n, 1_000), 1_000);
    cache.put('c', total(5n, 1_500, 3), 1_600);
    expect(cache.get('c', 1_700)).toMatchObject({ total: 5n, asOfMs: 1_500, shardCount: 3 });
  });

  it('an older asOf never replaces a newer one', () => {
    const cache = new ReadCache(maxStalenessMs, idleMs, 10);
    cache.put('c', total(5n, 2_000), 2_000);
    // A slower refresh that started earlier finishes after the newer one.
    cache.put('c', total(3n, 1_500), 2_100);
    expect(cache.get('c', 2_200)).toMatchObject({ total: 5n, asOfMs: 2_000 });
  });

  it('namesToRefresh lists counters read within idleMs', () => {
    const cache = new ReadCache(maxStalenessMs, idleMs, 10);
    cache.put('a', total(1n, 0), 0);
    cache.put('b', total(2n, 0), 0);
    expect(cache.namesToRefresh(idleMs).sort()).toEqual(['a', 'b']);
    expect(cache.size).toBe(2);
  });

  it('namesToRefresh drops a counter not read for more than idleMs', () => {
    const cache = new ReadCache(maxStalenessMs, idleMs, 10);
    cache.put('idle', total(1n, 0), 0);
    cache.put('busy', total(2n, 0), 0);
    cache.get('busy', 30_000);
    expect(cache.namesToRefresh(idleMs + 1)).toEqual(['busy']);
    expect(cache.size).toBe(1);
    // Forgotten: a later read misses even though a fresh-looking asOf could be served.
    expect(cache.get('idle', idleMs + 1)).toBeUndefined();
  });

  it('refreshing a counter does not keep it alive; only reads do', () => {
    const cache = new ReadCache(maxStalenessMs, idleMs, 10);
    cache.put('c', total(1n, 0), 0);
    // The refresher stores newer totals, but nobody reads the counter.
    for (let nowMs = 1_000; nowMs <= idleMs; nowMs += 1_000) cache.put('c', total(1n, nowMs), nowMs);
    expect(cache.namesToRefresh(idleMs + 1)).toEqual([]);
  });

  it('a read that finds the total too old still keeps the counter refreshing', () => {
    const cache = new ReadCache(maxStalenessMs, idleMs, 10);
    cache.put('c', total(1n, 0), 0);
    expect(cache.get('c', idleMs)).toBeUndefined();
    expect(cache.namesToRefresh(idleMs + 1)).toEqual(['c']);
  });

  it('when full, storing a new counter first drops idle counters', () => {
    const cache = new ReadCache(maxStalenessMs, idleMs, 3);
    cache.put('old', total(1n, 0), 0);
    cache.put('b', total(1n, 50_000), 50_000);
    cache.put('c', total(1n, 50_000), 50_000);
    cache.put('d', total(1n, 70_000), 70_000);
    expect(cache.size).toBe(3);
    expect(cache.namesToRefresh(70_000).sort()).toEqual(['b', 'c', 'd']);
  });

  it('when full and nothing is idle, storing a new counter drops the least recently read one', () => {
    const cache = new ReadCache(maxStalenessMs, idleMs, 3);
    cache.put('a', total(1n, 0), 0);
    cache.put('b', total(1n, 1), 1);
    cache.put('c', total(1n, 2), 2);
    cache.get('a', 3);
    cache.put('d', total(1n, 4), 4);
    expect(cache.size).toBe(3);
    expect(cache.namesToRefresh(5).sort()).toEqual(['a', 'c', 'd']);
  });

  it('updating a counter already cached never evicts another one', () => {
    const cache = new ReadCache(maxStalenessMs, idleMs, 2);
    cache.put('a', total(1n, 0), 0);
    cache.put('b', total(1n, 0), 0);
    cache.put('a', total(2n, 10), 10);
    expect(cache.namesToRefresh(10).sort()).toEqual(['a', 'b']);
  });

  it('size never exceeds entriesMax and nothing served is too old or made up (random operations)', () => {
    const random = seededRandom(0xcace_0001);
    const violations: string[] = [];
    let servedCount = 0;
    for (let trial = 0; trial < 50; trial++) {
      const entriesMax = randomInt(random, 1, 8);
      const cache = new ReadCache(maxStalenessMs, 5_000, entriesMax);
      const putAsOfs = new Map<string, Set<number>>();
      let nowMs = 0;
      for (let step = 0; step < 2_000; step++) {
        const at = `trial ${trial} step ${step} (${nowMs} ms)`;
        nowMs += randomInt(random, 0, 300);
        const name = `c${randomInt(random, 0, 15)}`;
        const operation = random();
        if (operation < 0.45) {
          const asOfMs = nowMs - randomInt(random, 0, 3_000);
          cache.put(name, total(BigInt(asOfMs), asOfMs), nowMs);
          if (!putAsOfs.has(name)) putAsOfs.set(name, new Set());
          putAsOfs.get(name)!.add(asOfMs);
        } else if (operation < 0.9) {
          const served = cache.get(name, nowMs);
          if (served !== undefined) {
            servedCount++;
            if (nowMs - served.asOfMs > maxStalenessMs) violations.push(`${at}: served ${name} as of ${served.asOfMs}`);
            if (putAsOfs.get(name)?.has(served.asOfMs) !== true || served.total !== BigInt(served.asOfMs)) {
              violations.push(`${at}: served ${name} = ${served.total} as of ${served.asOfMs}, never put`);
            }
          }
        } else if (cache.namesToRefresh(nowMs).length !== cache.size) {
          violations.push(`${at}: namesToRefresh disagrees with size`);
        }
        if (cache.size > entriesMax) violations.push(`${at}: size ${cache.size} > ${entriesMax}`);
      }
    }
    expect(violations).toEqual([]);
    // Enough hits that the staleness check was really exercised.
    expect(servedCount).toBeGreaterThan(1_000);
  });

  it('while a counter stays cached, successive reads never go back in time (random operations)', () => {
    const random = seededRandom(0xcace_0002);
    // Large bounds: nothing is evicted, so the newest-wins rule is all that is exercised.
    const cache = new ReadCache(1_000_000_000, 1_000_000_000, 1_000);
    const lastServedAsOf = new Map<string, number>();
    let nowMs = 0;
    for (let step = 0; step < 5_000; step++) {
      nowMs += randomInt(random, 0, 50);
      const name = `c${randomInt(random, 0, 5)}`;
      if (random() < 0.5) {
        const asOfMs = Math.max(0, nowMs - randomInt(random, 0, 2_000));
        cache.put(name, total(0n, asOfMs), nowMs);
      } else {
        const served = cache.get(name, nowMs);
        if (served === undefined) continue;
        expect(served.asOfMs).toBeGreaterThanOrEqual(lastServedAsOf.get(name) ?? -Infinity);
        lastServedAsOf.set(name, served.asOfMs);
      }
    }
    expect(lastServedAsOf.size).toBe(6);
  });

  it('a flood of new counters into a full cache evicts in order of last read, and a counter read meanwhile stays', () => {
    const entriesMax = 1_000;
    const cache = new ReadCache(maxStalenessMs, idleMs, entriesMax);
    for (let index = 0; index < entriesMax; index++) cache.put(`old:${index}`, total(1n, 0), 0);
    // Read late, so it is the most recently read of the old ones.
    expect(cache.get('old:0', 1)).toBeDefined();
    for (let index = 0; index < entriesMax - 1; index++) cache.put(`flood:${index}`, total(1n, 2), 2);
    expect(cache.size).toBe(entriesMax);
    const names = new Set(cache.namesToRefresh(2));
    expect(names.has('old:0')).toBe(true);
    expect([...names].filter((name) => name.startsWith('old:'))).toEqual(['old:0']);
    // One more: now old:0 is the least recently read and goes first.
    cache.put('flood:last', total(1n, 3), 3);
    expect(cache.get('old:0', 3)).toBeUndefined();
    expect(cache.size).toBe(entriesMax);
  });

  it('a refresh that finishes after its counter was evicted does not bring it back', () => {
    const cache = new ReadCache(maxStalenessMs, idleMs, 2);
    cache.put('a', total(1n, 0), 0);
    cache.put('b', total(1n, 0), 0);
    const round = cache.namesToRefresh(1);
    // While the round sums, a read of a new counter evicts the least recently read one.
    cache.put('c', total(1n, 2), 2);
    expect(round.map((name) => cache.update(name, total(9n, 1)))).toEqual([false, true]);
    expect(cache.namesToRefresh(3).sort()).toEqual(['b', 'c']);
    expect(cache.get('b', 3)?.total).toBe(9n);
    expect(cache.fullEvictedCount).toBe(1);
  });

  it('a flood of 100,000 new counters into a full cache of 10,000 stays at its bound and never walks the entries on a read or store', () => {
    const entriesMax = 10_000;
    const cache = new ReadCache(maxStalenessMs, idleMs, entriesMax);
    for (let index = 0; index < entriesMax; index++) cache.put(`old:${index}`, total(1n, 0), 0);
    cache.put('honest', total(7n, 0), 0);
    // Every Map walk: the old cache took the least recently read entry from a fresh
    // iterator, which walks every slot deleted since V8 last rehashed the table.
    const spies = [Symbol.iterator, 'keys', 'values', 'entries', 'forEach'].map((method) => vi.spyOn(Map.prototype, method as 'keys'));
    let sizeMax = 0;
    let honestHits = 0;
    for (let index = 0; index < 100_000; index++) {
      const nowMs = 1 + Math.floor(index / 100);
      if (cache.get(`flood:${index}`, nowMs) === undefined) cache.put(`flood:${index}`, total(1n, nowMs), nowMs);
      if (index % 10 === 0 && cache.get('honest', nowMs)?.total === 7n) honestHits++;
      sizeMax = Math.max(sizeMax, cache.size);
    }
    const walkCount = spies.reduce((sum, spy) => sum + spy.mock.calls.length, 0);
    vi.restoreAllMocks();
    expect(walkCount).toBe(0);
    expect(sizeMax).toBe(entriesMax);
    // The honest counter, read throughout, was never the least recently read: always served.
    expect(honestHits).toBe(10_000);
    // One old counter made room for the honest one, then one per flooding name.
    expect(cache.fullEvictedCount).toBe(1 + 100_000);
  });
});
