// Seeded key distributions for `tally bench` and bench/compare-load.mts: a
// small seeded generator and a Zipf sampler that is O(1) per draw and O(1) in
// memory at any population size. Pure: no I/O, no clock, no Math.random.
import assert from 'node:assert';

/** A seeded source of uniform doubles in [0, 1): xoshiro128**, seeded through splitmix32. */
export class SeededRandom {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(seed: number) {
    assert(Number.isSafeInteger(seed), `seed must be a whole number, got ${seed}`);
    let state = (seed ^ Math.floor(seed / 2 ** 32)) | 0;
    const next = (): number => {
      state = (state + 0x9e3779b9) | 0;
      let z = state;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
      return (z ^ (z >>> 16)) >>> 0;
    };
    this.a = next();
    this.b = next();
    this.c = next();
    this.d = next();
  }

  private nextUint32(): number {
    const result = Math.imul(rotl(Math.imul(this.b, 5), 7), 9) >>> 0;
    const t = this.b << 9;
    this.c ^= this.a;
    this.d ^= this.b;
    this.b ^= this.c;
    this.a ^= this.d;
    this.c ^= t;
    this.d = rotl(this.d, 11);
    return result;
  }

  /** A uniform double in [0, 1) with 53 random bits. */
  nextDouble(): number {
    return ((this.nextUint32() >>> 5) * 67_108_864 + (this.nextUint32() >>> 6)) / 9_007_199_254_740_992;
  }

  /** A uniform whole number in [0, bound). */
  nextIndex(bound: number): number {
    return Math.floor(this.nextDouble() * bound);
  }
}

function rotl(x: number, bits: number): number {
  return (x << bits) | (x >>> (32 - bits));
}

/** Largest population the sampler takes: ranks stay exact doubles well below this. */
export const zipfElementsMax = 2 ** 40;

/**
 * Zipf ranks 1..n with P(k) proportional to 1 / k^s, by rejection-inversion
 * (W. Hörmann, G. Derflinger, "Rejection-inversion to generate variates from
 * monotone discrete distributions", ACM TOMACS 6(3), 1996; the same form as
 * Apache Commons' RejectionInversionZipfSampler). Each draw inverts the
 * integral of a continuous hat over the ranks and accepts with probability
 * above 0.9 for any s, so a draw costs a few logs and exps whatever n is; no
 * table: memory is constant at n = 10 million or more.
 */
export class ZipfSampler {
  private readonly hIntegralX1: number;
  private readonly hIntegralN: number;
  private readonly squeeze: number;

  constructor(
    readonly elementCount: number,
    readonly exponent: number,
    private readonly random: SeededRandom,
  ) {
    assert(Number.isSafeInteger(elementCount) && elementCount >= 1 && elementCount <= zipfElementsMax, `bad element count ${elementCount}`);
    assert(exponent > 0 && exponent <= 100, `exponent must be in (0, 100], got ${exponent}`);
    this.hIntegralX1 = this.hIntegral(1.5) - 1;
    this.hIntegralN = this.hIntegral(elementCount + 0.5);
    this.squeeze = 2 - this.hIntegralInverse(this.hIntegral(2.5) - this.h(2));
  }

  /** A rank in 1..elementCount; rank 1 is the most frequent. */
  nextRank(): number {
    for (let attempt = 0; attempt < 1_000; attempt++) {
      // u is uniform over (hIntegralX1, hIntegralN]: the hat's integral over the ranks.
      const u = this.hIntegralN + this.random.nextDouble() * (this.hIntegralX1 - this.hIntegralN);
      const x = this.hIntegralInverse(u);
      const k = Math.min(this.elementCount, Math.max(1, Math.floor(x + 0.5)));
      // Accept without the second integral when x is near k (the squeeze), else test exactly.
      if (k - x <= this.squeeze || u >= this.hIntegral(k + 0.5) - this.h(k)) return k;
    }
    // Acceptance is above 0.9 per attempt: 1,000 rejections in a row means a broken generator.
    assert.fail('zipf sampler rejected 1,000 draws in a row');
  }

  /** h(x) = 1 / x^s: the hat's density. */
  private h(x: number): number {
    return Math.exp(-this.exponent * Math.log(x));
  }

  /** H(x) = (x^(1-s) - 1) / (1 - s), written so it stays exact as s -> 1 (where it is log x). */
  private hIntegral(x: number): number {
    const logX = Math.log(x);
    return expm1OverX((1 - this.exponent) * logX) * logX;
  }

  private hIntegralInverse(x: number): number {
    let t = x * (1 - this.exponent);
    if (t < -1) t = -1; // rounding at the lower end: the limit of the domain
    return Math.exp(log1pOverX(t) * x);
  }
}

/** log(1 + x) / x, with its series near 0. */
function log1pOverX(x: number): number {
  return Math.abs(x) > 1e-8 ? Math.log1p(x) / x : 1 - x * (0.5 - x * (1 / 3 - 0.25 * x));
}

/** (e^x - 1) / x, with its series near 0. */
function expm1OverX(x: number): number {
  return Math.abs(x) > 1e-8 ? Math.expm1(x) / x : 1 + x * 0.5 * (1 + (x / 3) * (1 + 0.25 * x));
}

/** The generalized harmonic number H(n, s) = sum of 1/k^s for k in 1..n: P(rank 1) = 1 / H(n, s). O(n): tests and reports only. */
export function harmonicNumber(elementCount: number, exponent: number): number {
  let sum = 0;
  // Smallest terms first, for accuracy.
  for (let k = elementCount; k >= 1; k--) sum += Math.exp(-exponent * Math.log(k));
  return sum;
}
