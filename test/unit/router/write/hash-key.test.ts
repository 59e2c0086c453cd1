// Unit tests for hashKey, which sends a keyed increment (and its retries) to
// one shard: its values must never change, and must spread keys evenly.
import { describe, expect, it } from 'vitest';
import { hashKey } from '../../../../src/router/write/node-group.ts';
import { randomInt, seededRandom } from '../../../helpers/seeded-random.ts';

/** Pearson's chi-square statistic of bucket counts against a uniform spread. */
function chiSquare(counts: readonly number[]): number {
  const expected = counts.reduce((sum, count) => sum + count, 0) / counts.length;
  return counts.reduce((sum, count) => sum + (count - expected) ** 2 / expected, 0);
}

// Chi-square with 7 degrees of freedom exceeds 24.32 with probability 0.001.
const chiSquare7DfP001 = 24.32;

describe('hashKey', () => {
  it('pins the published FNV-1a 32-bit values, so key-to-shard mapping never changes', () => {
    expect(hashKey(Buffer.alloc(0))).toBe(0x811c9dc5);
    expect(hashKey(Buffer.from('a'))).toBe(0xe40c292c);
    expect(hashKey(Buffer.from('foobar'))).toBe(0xbf9cf968);
  });

  it('is an unsigned 32-bit integer and the same for equal bytes', () => {
    const random = seededRandom(0x4a54_0001);
    const violations: string[] = [];
    for (let trial = 0; trial < 1_000; trial++) {
      const key = Buffer.from(Array.from({ length: randomInt(random, 0, 128) }, () => randomInt(random, 0, 255)));
      const hash = hashKey(key);
      const valid = Number.isInteger(hash) && hash >= 0 && hash <= 0xffffffff;
      if (!valid || hashKey(Buffer.from(key)) !== hash) violations.push(`${key.toString('hex')} -> ${hash}`);
    }
    expect(violations).toEqual([]);
  });

  it('10 000 random keys spread roughly uniformly over 8 shards', () => {
    const random = seededRandom(0x4a54_0002);
    const counts = new Array<number>(8).fill(0);
    for (let index = 0; index < 10_000; index++) {
      const key = Buffer.from(Array.from({ length: randomInt(random, 1, 32) }, () => randomInt(random, 0, 255)));
      counts[hashKey(key) % 8]!++;
    }
    expect(chiSquare(counts)).toBeLessThan(chiSquare7DfP001);
    for (const count of counts) expect(Math.abs(count - 1_250)).toBeLessThan(1_250 * 0.1);
  });

  it('10 000 sequential text keys spread roughly uniformly over 8 shards', () => {
    const counts = new Array<number>(8).fill(0);
    for (let index = 0; index < 10_000; index++) counts[hashKey(Buffer.from(`order-${index}`)) % 8]!++;
    expect(chiSquare(counts)).toBeLessThan(chiSquare7DfP001);
  });
});
