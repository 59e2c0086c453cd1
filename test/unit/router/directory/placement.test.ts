// Unit tests for choosePairs: one counter's shards spread over pairs first,
// total load second. Property checks run over seeded random inputs.
import { describe, expect, it } from 'vitest';
import { choosePairs } from '../../../../src/router/directory/placement.ts';
import { randomInt, seededRandom } from '../../../helpers/seeded-random.ts';

const spread = (counts: readonly number[]): number => Math.max(...counts) - Math.min(...counts);

describe('placement (choosePairs)', () => {
  it('a counter with as many shards as pairs gets one shard on every pair', () => {
    const chosen = choosePairs([0, 0, 0, 0], [7, 3, 9, 1], 4);
    expect([...chosen].sort()).toEqual([0, 1, 2, 3]);
  });

  it('a new shard goes to a pair without this counter even if that pair is the busiest', () => {
    // Pair 1 carries far more shards overall, but it is the only pair without this counter.
    expect(choosePairs([1, 0, 1], [2, 50, 2], 1)).toEqual([1]);
  });

  it('among pairs with equally few of the counter, the least loaded pair wins', () => {
    expect(choosePairs([0, 0, 0], [5, 2, 4], 1)).toEqual([1]);
    expect(choosePairs([0, 0, 0], [5, 2, 4], 3)).toEqual([1, 2, 0]);
  });

  it('a draining pair takes no new shard, even when it is the emptiest; all draining is an error', () => {
    const draining = (pair: number): boolean => pair === 0;
    expect(choosePairs([0, 0, 0], [0, 9, 9], 4, draining).every((pair) => pair !== 0)).toBe(true);
    expect(choosePairs([0, 1], [0, 1], 1, draining)).toEqual([1]);
    expect(() => choosePairs([0, 0], [0, 0], 1, () => true)).toThrow(/no node pairs/);
  });

  it('returns one pair per requested shard and none for addCount 0', () => {
    expect(choosePairs([0, 0], [0, 0], 0)).toEqual([]);
    expect(choosePairs([0, 0], [0, 0], 5)).toHaveLength(5);
  });

  it('does not modify the counts it is given', () => {
    const mine = [1, 0, 2];
    const total = [4, 4, 4];
    choosePairs(mine, total, 6);
    expect(mine).toEqual([1, 0, 2]);
    expect(total).toEqual([4, 4, 4]);
  });

  it('refuses to place shards when there are no pairs', () => {
    expect(() => choosePairs([], [], 1)).toThrow(/no node pairs/);
  });

  it('every choice takes a pair with the fewest of this counter, then the fewest overall (random inputs)', () => {
    const random = seededRandom(0x5eed_0001);
    const violations: string[] = [];
    for (let trial = 0; trial < 2_000; trial++) {
      const pairCount = randomInt(random, 1, 12);
      const mine = Array.from({ length: pairCount }, () => randomInt(random, 0, 5));
      const total = mine.map((count) => count + randomInt(random, 0, 40));
      const addCount = randomInt(random, 0, 30);
      const input = JSON.stringify({ mine, total, addCount });
      const chosen = choosePairs(mine, total, addCount);
      if (chosen.length !== addCount) violations.push(`${input}: chose ${chosen.length} pairs`);
      // Replay the choices against running counts and check each was a best pair.
      for (const pair of chosen) {
        const fewestMine = Math.min(...mine);
        const fewestTotal = Math.min(...total.filter((_, index) => mine[index] === fewestMine));
        if (!(pair >= 0 && pair < pairCount) || mine[pair] !== fewestMine || total[pair] !== fewestTotal) {
          violations.push(`${input}: chose pair ${pair} of ${JSON.stringify({ mine, total })}`);
          break;
        }
        mine[pair]!++;
        total[pair]!++;
      }
    }
    expect(violations).toEqual([]);
  });

  it('a counter whose shards were spread stays spread, within one shard per pair, after growth (random inputs)', () => {
    const random = seededRandom(0x5eed_0002);
    const violations: string[] = [];
    for (let trial = 0; trial < 2_000; trial++) {
      const pairCount = randomInt(random, 1, 16);
      // Start from a spread placement: every pair holds base or base + 1 of the counter's shards.
      const base = randomInt(random, 0, 3);
      const mine = Array.from({ length: pairCount }, () => base + randomInt(random, 0, 1));
      const total = mine.map((count) => count + randomInt(random, 0, 100));
      const chosen = choosePairs(mine, total, randomInt(random, 1, 50));
      const after = [...mine];
      for (const pair of chosen) after[pair]!++;
      if (spread(after) > 1) violations.push(`${JSON.stringify(mine)} + ${chosen.length} -> ${JSON.stringify(after)}`);
    }
    expect(violations).toEqual([]);
  });

  it('counters placed one after another keep total shards per pair within one of each other (random inputs)', () => {
    const random = seededRandom(0x5eed_0003);
    const violations: string[] = [];
    for (let trial = 0; trial < 200; trial++) {
      const pairCount = randomInt(random, 1, 10);
      const total = new Array<number>(pairCount).fill(0);
      for (let counter = 0; counter < 60; counter++) {
        const shardCount = randomInt(random, 1, 2 * pairCount + 3);
        for (const pair of choosePairs(new Array<number>(pairCount).fill(0), total, shardCount)) total[pair]!++;
        if (spread(total) > 1) violations.push(`trial ${trial}, counter ${counter}: ${JSON.stringify(total)}`);
      }
    }
    expect(violations).toEqual([]);
  });
});
