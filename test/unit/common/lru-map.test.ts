// Unit tests for LruMap: the same answers as a plain model of an LRU under
// random operations, the bound under a flood, and O(1) shown structurally —
// no call ever walks the entries (the slow path a plain Map's front takes).
import { afterEach, describe, expect, it, vi } from 'vitest';
import { LruMap } from '../../../src/common/index.ts';
import { randomInt, seededRandom } from '../../helpers/seeded-random.ts';

/** Counts every way a Map can be walked, while the test runs. */
function countMapWalks(): () => number {
  const spies = [
    vi.spyOn(Map.prototype, 'keys'),
    vi.spyOn(Map.prototype, 'values'),
    vi.spyOn(Map.prototype, 'entries'),
    vi.spyOn(Map.prototype, 'forEach'),
    vi.spyOn(Map.prototype, Symbol.iterator),
  ];
  return () => spies.reduce((sum, spy) => sum + spy.mock.calls.length, 0);
}

describe('lru map', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('a full map evicts the least recently used key; get marks use, peek does not', () => {
    const lru = new LruMap<string, number>(3);
    lru.set('a', 1);
    lru.set('b', 2);
    lru.set('c', 3);
    expect(lru.get('a')).toBe(1);
    expect(lru.peek('b')).toBe(2);
    expect(lru.set('d', 4)).toEqual(['b', 2]);
    expect(lru.keys()).toEqual(['c', 'a', 'd']);
    // Replacing a value is a use, and never evicts.
    expect(lru.set('c', 30)).toBeUndefined();
    expect(lru.keys()).toEqual(['a', 'd', 'c']);
    expect(lru.oldest()).toEqual(['a', 1]);
    expect(lru.evictedCount).toBe(1);
    expect(lru.delete('d')).toBe(true);
    expect(lru.delete('d')).toBe(false);
    expect([...lru.entries()]).toEqual([
      ['a', 1],
      ['c', 30],
    ]);
  });

  it('answers as a model LRU does through random sets, gets, peeks and deletes (seeded)', () => {
    const random = seededRandom(0x1e0_0001);
    for (let trial = 0; trial < 40; trial++) {
      const entriesMax = randomInt(random, 1, 12);
      const lru = new LruMap<number, number>(entriesMax);
      // The model: keys from least to most recently used.
      const model: { key: number; value: number }[] = [];
      for (let step = 0; step < 1_500; step++) {
        const key = randomInt(random, 0, 20);
        const at = model.findIndex((entry) => entry.key === key);
        const operation = random();
        if (operation < 0.4) {
          const value = randomInt(random, 0, 1_000_000);
          let expectedEvicted: [number, number] | undefined;
          if (at >= 0) model.splice(at, 1);
          else if (model.length === entriesMax) {
            const oldest = model.shift()!;
            expectedEvicted = [oldest.key, oldest.value];
          }
          model.push({ key, value });
          expect(lru.set(key, value)).toEqual(expectedEvicted);
        } else if (operation < 0.7) {
          expect(lru.get(key)).toBe(at >= 0 ? model[at]!.value : undefined);
          if (at >= 0) model.push(...model.splice(at, 1));
        } else if (operation < 0.85) {
          expect(lru.peek(key)).toBe(at >= 0 ? model[at]!.value : undefined);
        } else {
          expect(lru.delete(key)).toBe(at >= 0);
          if (at >= 0) model.splice(at, 1);
        }
        expect(lru.size).toBe(model.length);
      }
      expect(lru.keys()).toEqual(model.map((entry) => entry.key));
      expect([...lru.entries()].map(([key]) => key)).toEqual(model.map((entry) => entry.key));
    }
  });

  it('a flood of 200,000 new keys into 1,000 entries keeps the newest and a key used throughout, and never walks its entries', () => {
    const entriesMax = 1_000;
    const lru = new LruMap<string, number>(entriesMax);
    for (let index = 0; index < entriesMax; index++) lru.set(`old:${index}`, index);
    // Used last, so it outlives every other old key, and used again throughout the flood.
    lru.get('old:0');
    let sizeMax = 0;
    let keptReads = 0;
    const walks = countMapWalks();
    for (let index = 0; index < 200_000; index++) {
      lru.set(`flood:${index}`, index);
      if (index % 100 === 0 && lru.get('old:0') === 0) keptReads++;
      sizeMax = Math.max(sizeMax, lru.size);
    }
    // O(1) per call: set, get and eviction looked keys up and never iterated a Map.
    const walkCount = walks();
    vi.restoreAllMocks();
    expect(walkCount).toBe(0);
    expect(sizeMax).toBe(entriesMax);
    expect(keptReads).toBe(2_000);
    expect(lru.size).toBe(entriesMax);
    expect(lru.evictedCount).toBe(200_000);
    expect(lru.has('old:0')).toBe(true);
    expect(lru.has('old:1')).toBe(false);
    expect(lru.has('flood:199999')).toBe(true);
    expect(lru.has(`flood:${200_000 - entriesMax}`)).toBe(false);
  });

  it('deleting the entry just yielded while walking visits every other entry once', () => {
    const lru = new LruMap<number, number>(100);
    for (let key = 0; key < 100; key++) lru.set(key, key);
    const visited: number[] = [];
    for (const [key] of lru.entries()) {
      visited.push(key);
      if (key % 2 === 0) lru.delete(key);
    }
    expect(visited).toEqual(Array.from({ length: 100 }, (_, key) => key));
    expect(lru.keys()).toEqual(Array.from({ length: 50 }, (_, index) => 2 * index + 1));
  });

  it('refuses a bound that is not a positive count', () => {
    expect(() => new LruMap(0)).toThrow(/entriesMax/);
    expect(() => new LruMap(1.5)).toThrow(/entriesMax/);
  });
});
