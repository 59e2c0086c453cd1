// ShardTotals (open addressing over typed arrays) against a reference Map:
// seeded random adds, deletes and clears, through growth, tombstone reuse,
// rehash and shrink, with every read and the iteration compared.
import { describe, expect, it } from 'vitest';
import { INT64_MAX, INT64_MIN } from '../../../../src/wire/index.ts';
import { ShardTotals } from '../../../../src/node/state/shard-totals.ts';
import { seededRandom } from '../../../helpers/seeded-random.ts';

function expectSame(totals: ShardTotals, reference: Map<number, bigint>, probeIds: readonly number[]): void {
  expect(totals.shardCount).toBe(reference.size);
  expect(totals.shardIds()).toEqual([...reference.keys()].sort((a, b) => a - b));
  for (const id of probeIds) expect(totals.get(id)).toBe(reference.get(id) ?? 0n);
}

describe('ShardTotals', () => {
  for (const seed of [1, 2, 3, 4, 5, 6]) {
    it(`matches a Map through adds, deletes, growth and shrink (seed ${seed})`, () => {
      const random = seededRandom(seed);
      const totals = new ShardTotals();
      const reference = new Map<number, bigint>();
      // Ids from a few ranges: small sequential ones, ones past 2^32, and ones near the largest safe integer.
      const idRange = [50, 2_000, 20_000][seed % 3]!;
      const idOf = (): number => {
        const pick = random();
        const offset = 1 + Math.floor(random() * idRange);
        if (pick < 0.7) return offset;
        if (pick < 0.85) return 2 ** 32 + offset;
        return Number.MAX_SAFE_INTEGER - offset;
      };
      for (let step = 0; step < 30_000; step++) {
        const roll = random();
        const id = idOf();
        if (roll < 0.6) {
          const amount = BigInt(Math.floor(random() * 2_000_000) - 1_000_000);
          totals.add(id, amount);
          reference.set(id, (reference.get(id) ?? 0n) + amount);
        } else if (roll < 0.98) {
          totals.delete(id);
          reference.delete(id);
        } else if (roll < 0.982) {
          // A run of deletes: empties most of the table, so it shrinks.
          for (const held of [...reference.keys()]) {
            if (random() < 0.9) {
              totals.delete(held);
              reference.delete(held);
            }
          }
        } else {
          totals.clear();
          reference.clear();
        }
        expect(totals.get(id)).toBe(reference.get(id) ?? 0n);
        if (step % 1_000 === 0) expectSame(totals, reference, [...reference.keys(), idOf(), idOf()]);
      }
      expectSame(totals, reference, [...reference.keys()]);
    });
  }

  it('keeps a shard whose total returns to 0, as the Map did', () => {
    const totals = new ShardTotals();
    totals.add(7, 5n);
    totals.add(7, -5n);
    expect(totals.shardCount).toBe(1);
    expect(totals.shardIds()).toEqual([7]);
    expect(totals.get(7)).toBe(0n);
  });

  it('holds the ends of int64 and refuses a total beyond them, unchanged', () => {
    const totals = new ShardTotals();
    totals.add(1, INT64_MAX);
    totals.add(2, INT64_MIN);
    expect([totals.get(1), totals.get(2)]).toEqual([INT64_MAX, INT64_MIN]);
    expect(() => totals.add(1, 1n)).toThrow(/left int64/);
    expect(() => totals.add(2, -1n)).toThrow(/left int64/);
    expect([totals.get(1), totals.get(2)]).toEqual([INT64_MAX, INT64_MIN]);
  });

  it('refuses a shard id that is not a positive safe integer', () => {
    const totals = new ShardTotals();
    for (const id of [0, -1, 1.5, 2 ** 53]) expect(() => totals.add(id, 1n)).toThrow(/positive safe integer/);
    expect(totals.shardCount).toBe(0);
  });

  it('reuses tombstones: churn over few live shards keeps the table small', () => {
    const totals = new ShardTotals();
    for (let id = 1; id <= 200_000; id++) {
      totals.add(id, 1n);
      if (id > 10) totals.delete(id - 10);
    }
    expect(totals.shardCount).toBe(10);
    expect(totals.memoryBytes).toBeLessThanOrEqual(64 * 16);
    expect(totals.shardIds()).toEqual(Array.from({ length: 10 }, (_, index) => 199_991 + index));
  });

  it('costs at most 43 bytes per shard at a million shards, and frees the table when they are dropped', () => {
    const totals = new ShardTotals();
    for (let id = 1; id <= 1_000_000; id++) totals.add(id, BigInt(id));
    expect(totals.memoryBytes / totals.shardCount).toBeLessThanOrEqual(43);
    expect(totals.get(999_999)).toBe(999_999n);
    for (let id = 1; id <= 1_000_000; id++) totals.delete(id);
    expect(totals.shardCount).toBe(0);
    expect(totals.memoryBytes).toBeLessThanOrEqual(64 * 16);
  });
});
