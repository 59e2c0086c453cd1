// The bench's Zipf sampler against theory, seeded: rank frequencies match
// 1/(k^s H(n, s)) within a few standard errors, draws stay in 1..n, and a seed
// reproduces its sequence (bench/compare-load.mts relies on that).
import { describe, expect, it } from 'vitest';
import { SeededRandom, ZipfSampler, harmonicNumber } from '../../../src/cli/bench/bench-zipf.ts';

/** Draws `draws` ranks and counts ranks 1..shown, with everything above in one tail bucket. */
function histogram(sampler: ZipfSampler, draws: number, shown: number): number[] {
  const counts = new Array<number>(shown + 1).fill(0);
  let outOfRange = 0;
  for (let i = 0; i < draws; i++) {
    const rank = sampler.nextRank();
    if (!(rank >= 1 && rank <= sampler.elementCount && Number.isInteger(rank))) outOfRange++;
    counts[Math.min(rank, shown + 1) - 1]!++;
  }
  expect(outOfRange).toBe(0);
  return counts;
}

describe('bench zipf sampler', () => {
  for (const [elementCount, exponent] of [
    [1_000, 0.99],
    [1_000_000, 0.99],
    [10_000_000, 0.99],
    [50_000, 0.5],
    [50_000, 1.5],
  ] as const) {
    it(`rank frequencies over ${elementCount.toLocaleString('en-US')} ranks at s = ${exponent} match theory (chi-square, seeded)`, () => {
      const draws = 200_000;
      const shown = 20;
      const harmonic = harmonicNumber(elementCount, exponent);
      const counts = histogram(new ZipfSampler(elementCount, exponent, new SeededRandom(42)), draws, shown);
      const expected = counts.map((_, index) => (index < shown ? draws / ((index + 1) ** exponent * harmonic) : 0));
      expected[shown] = draws - expected.reduce((sum, value) => sum + value, 0);
      // Rank 1 on its own: within 5 standard errors of 1/H(n, s).
      const p1 = 1 / harmonic;
      expect(Math.abs(counts[0]! / draws - p1)).toBeLessThan(5 * Math.sqrt((p1 * (1 - p1)) / draws));
      // Ranks 1..20 and the tail: chi-square with 20 degrees of freedom; 50 is far past its 0.9999 quantile (~45).
      const chiSquare = counts.reduce((sum, count, index) => sum + (count - expected[index]!) ** 2 / expected[index]!, 0);
      expect(chiSquare).toBeLessThan(50);
    });
  }

  it('one rank is the whole distribution, and the smallest populations stay in range', () => {
    const one = new ZipfSampler(1, 0.99, new SeededRandom(1));
    expect(new Set(Array.from({ length: 1_000 }, () => one.nextRank()))).toEqual(new Set([1]));
    const two = histogram(new ZipfSampler(2, 1, new SeededRandom(2)), 30_000, 1);
    // P(1) = 1 / (1 + 1/2) = 2/3.
    expect(Math.abs(two[0]! / 30_000 - 2 / 3)).toBeLessThan(0.02);
  });

  it('a seed reproduces its ranks and another seed does not', () => {
    const draw = (seed: number): number[] => {
      const sampler = new ZipfSampler(1_000_000, 0.99, new SeededRandom(seed));
      return Array.from({ length: 1_000 }, () => sampler.nextRank());
    };
    expect(draw(7)).toEqual(draw(7));
    expect(draw(7)).not.toEqual(draw(8));
  });

  it('seeded random: doubles are uniform in [0, 1) (mean and decile counts)', () => {
    const random = new SeededRandom(3);
    const deciles = new Array<number>(10).fill(0);
    let sum = 0;
    let outOfRange = 0;
    for (let i = 0; i < 100_000; i++) {
      const value = random.nextDouble();
      if (!(value >= 0 && value < 1)) outOfRange++;
      sum += value;
      deciles[Math.floor(value * 10)]!++;
    }
    expect(outOfRange).toBe(0);
    expect(Math.abs(sum / 100_000 - 0.5)).toBeLessThan(0.005);
    for (const count of deciles) expect(Math.abs(count - 10_000)).toBeLessThan(500);
  });
});
