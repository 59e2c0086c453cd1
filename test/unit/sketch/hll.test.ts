// Unit tests for the HyperLogLog sketch: accuracy against known cardinalities,
// idempotence, unions across shards, sparse/dense equivalence against a plain
// model, and the byte formats (round trips and rejection of corrupt input).
import { beforeAll, describe, expect, it } from 'vitest';
import xxhash from 'xxhash-wasm';
import { ErrorCode, TallyError } from '../../../src/wire/index.ts';
import {
  HllSketch,
  hllRankMax,
  hllRegisterCount,
  hllStandardError,
  loadMemberHasher,
  packRegisterChanges,
  unpackRegisterChanges,
  type MemberHasher,
  type RegisterChange,
} from '../../../src/sketch/index.ts';
import { randomInt, seededRandom } from '../../helpers/seeded-random.ts';

let hasher: MemberHasher;
beforeAll(async () => {
  hasher = await loadMemberHasher();
});

/** Member `ordinal` of a set named by `salt`: 8 bytes, distinct for distinct (salt, ordinal). */
function memberOf(salt: number, ordinal: number, out = new Uint8Array(8)): Uint8Array {
  const view = new DataView(out.buffer, out.byteOffset, out.byteLength);
  view.setUint32(0, salt);
  view.setUint32(4, ordinal);
  return out;
}

/** Observes members [from, to) of set `salt`; returns how many observations changed a register. */
function observeRange(sketch: HllSketch, salt: number, from: number, to: number): number {
  const member = new Uint8Array(8);
  let changedCount = 0;
  for (let ordinal = from; ordinal < to; ordinal++) {
    const { index, rank } = hasher.registerOf(memberOf(salt, ordinal, member));
    if (sketch.observe(index, rank)) changedCount++;
  }
  return changedCount;
}

function registersOf(sketch: HllSketch): [number, number][] {
  return Array.from(sketch.nonZeroRegisters());
}

function expectCorrupt(action: () => unknown, message: RegExp): void {
  let thrown: unknown;
  try {
    action();
  } catch (error) {
    thrown = error;
  }
  expect(thrown).toBeInstanceOf(TallyError);
  expect((thrown as TallyError).code).toBe(ErrorCode.internal);
  expect((thrown as TallyError).message).toMatch(message);
}

describe('loadMemberHasher', () => {
  it('hll: registerOf pins XXH64 (seed 0) values, so stored sketches stay valid', () => {
    // XXH64("") = 0xef46db3751d8e999 and XXH64("a") = 0xd24ec4f1a98c6e5b: index is the
    // low 14 bits; both have bit 14 set, so rank 1.
    expect(hasher.registerOf(new Uint8Array(0))).toEqual({ index: 0xe999 & 0x3fff, rank: 1 });
    expect(hasher.registerOf(new TextEncoder().encode('a'))).toEqual({ index: 0x6e5b & 0x3fff, rank: 1 });
  });

  it('hll: registerOf agrees with the Redis bit loop on the full 64-bit hash, high word included', async () => {
    const { h64Raw } = await xxhash();
    /** Redis hllPatLen: index = low p bits; rank = 1 + trailing zeros of the rest, a sentinel bit capping it at 51. */
    const reference = (hash: bigint): { index: number; rank: number } => {
      let rest = (hash >> 14n) | (1n << 50n);
      let rank = 1;
      while ((rest & 1n) === 0n) {
        rank++;
        rest >>= 1n;
      }
      return { index: Number(hash & 0x3fffn), rank };
    };
    const member = new Uint8Array(8);
    const mismatches: string[] = [];
    let highWordRanks = 0;
    // Ranks above 18 need the high word: about 1 member in 2^18, so go on until a few were seen.
    for (let ordinal = 0; ordinal < 5_000_000 && (ordinal < 100_000 || highWordRanks < 3); ordinal++) {
      memberOf(0x5eed_0002, ordinal, member);
      const want = reference(h64Raw(member, 0n));
      const got = hasher.registerOf(member);
      if (want.rank > 18) highWordRanks++;
      if (got.index !== want.index || got.rank !== want.rank)
        mismatches.push(`${ordinal}: ${JSON.stringify(got)} != ${JSON.stringify(want)}`);
      if (mismatches.length > 5) break;
    }
    expect(mismatches).toEqual([]);
    expect(highWordRanks).toBeGreaterThanOrEqual(3);
  });

  it('hll: registerOf ranks follow a geometric spread within 1..51', () => {
    const counts = new Array<number>(hllRankMax + 1).fill(0);
    const member = new Uint8Array(8);
    const samples = 200_000;
    let outOfRange = 0;
    for (let ordinal = 0; ordinal < samples; ordinal++) {
      const { index, rank } = hasher.registerOf(memberOf(0x5eed_0001, ordinal, member));
      if (!(index >= 0 && index < hllRegisterCount && rank >= 1 && rank <= hllRankMax)) outOfRange++;
      else counts[rank]!++;
    }
    expect(outOfRange).toBe(0);
    // P(rank = r) = 2^-r; the first few ranks hold enough samples to check within 5 %.
    for (let rank = 1; rank <= 4; rank++) {
      expect(Math.abs(counts[rank]! / (samples * 2 ** -rank) - 1)).toBeLessThan(0.05);
    }
  });
});

describe('HllSketch estimate', () => {
  it('hll: an empty sketch estimates 0', () => {
    expect(new HllSketch().estimate()).toBe(0);
  });

  it('hll: 10 distinct members estimate exactly 10', () => {
    const sketch = new HllSketch();
    observeRange(sketch, 0x5eed_0010, 0, 10);
    expect(sketch.estimate()).toBe(10);
  });

  for (const cardinality of [1_000, 100_000, 1_000_000]) {
    it(`hll: ${cardinality} distinct members estimate within 3 standard errors`, () => {
      const salt = Math.floor(seededRandom(cardinality)() * 2 ** 32);
      const sketch = new HllSketch();
      observeRange(sketch, salt, 0, cardinality);
      const relativeError = sketch.estimate() / cardinality - 1;
      expect(Math.abs(relativeError)).toBeLessThan(3 * hllStandardError);
    });
  }

  it('hll: observing the same members again changes no register and not the estimate', () => {
    for (const cardinality of [500, 50_000]) {
      const sketch = new HllSketch();
      observeRange(sketch, 0x5eed_0020, 0, cardinality);
      const before = registersOf(sketch);
      const estimate = sketch.estimate();
      expect(observeRange(sketch, 0x5eed_0020, 0, cardinality)).toBe(0);
      expect(registersOf(sketch)).toEqual(before);
      expect(sketch.estimate()).toBe(estimate);
    }
  });
});

describe('HllSketch registers', () => {
  it('hll: random observes match a plain max-per-register model through sparse growth and the dense switch', () => {
    const random = seededRandom(0x5eed_0030);
    for (let trial = 0; trial < 20; trial++) {
      const sketch = new HllSketch();
      const model = new Uint8Array(hllRegisterCount);
      // Few distinct indexes in some trials (stays sparse), many in others (goes dense).
      const indexesMax = randomInt(random, 1, hllRegisterCount - 1);
      const steps = randomInt(random, 0, 6_000);
      const mismatches: string[] = [];
      for (let step = 0; step < steps; step++) {
        const index = randomInt(random, 0, indexesMax);
        const rank = randomInt(random, 0, hllRankMax);
        const expected = rank > model[index]!;
        if (expected) model[index] = rank;
        if (sketch.observe(index, rank) !== expected) mismatches.push(`trial ${trial} step ${step}: observe(${index}, ${rank})`);
      }
      for (let index = 0; index < hllRegisterCount; index++) {
        if (sketch.get(index) !== model[index])
          mismatches.push(`trial ${trial}: get(${index}) = ${sketch.get(index)}, want ${model[index]}`);
      }
      const nonZero = Array.from(model.entries()).filter(([, rank]) => rank !== 0);
      expect(mismatches).toEqual([]);
      expect(registersOf(sketch)).toEqual(nonZero);
      expect(sketch.nonZeroRegisterCount()).toBe(nonZero.length);
    }
  });

  it('hll: the switch from sparse to dense keeps every register', () => {
    const sketch = new HllSketch();
    // Even indexes only, so the 2049th entry is also the first to force the switch.
    for (let index = 0; index < 2 * 2_048; index += 2) sketch.observe(index, (index % hllRankMax) + 1);
    expect(sketch.isDense).toBe(false);
    const before = registersOf(sketch);
    expect(before).toHaveLength(2_048);
    expect(sketch.observe(1, 7)).toBe(true);
    expect(sketch.isDense).toBe(true);
    expect(registersOf(sketch)).toEqual([...before, [1, 7]].sort(([indexA], [indexB]) => indexA! - indexB!));
  });

  it('hll: memoryBytes grows geometrically while sparse, stays within 8 KiB, then is 16 KiB dense', () => {
    const sketch = new HllSketch();
    expect(sketch.memoryBytes()).toBe(16 * 4);
    for (let index = 0; index < 100; index++) sketch.observe(index, 1);
    expect(sketch.memoryBytes()).toBe(128 * 4);
    for (let index = 100; index < 2_048; index++) sketch.observe(index, 1);
    expect(sketch.memoryBytes()).toBe(8 * 1024);
    sketch.observe(2_048, 1);
    expect(sketch.memoryBytes()).toBe(16 * 1024);
  });

  it('hll: a rank above 51 or an index outside the registers is a programmer error', () => {
    const sketch = new HllSketch();
    expect(() => sketch.observe(0, hllRankMax + 1)).toThrow(/rank 52/);
    expect(() => sketch.observe(hllRegisterCount, 1)).toThrow(/index 16384/);
    expect(() => sketch.observe(-1, 1)).toThrow(/index -1/);
    expect(() => sketch.observe(1.5, 1)).toThrow(/index 1.5/);
  });
});

describe('HllSketch union', () => {
  // Overlapping sets: each case has its sketches sparse or dense in a different mix.
  const cases: { name: string; a: [number, number]; b: [number, number] }[] = [
    { name: 'sparse + sparse', a: [0, 600], b: [400, 1_000] },
    { name: 'sparse + dense', a: [0, 600], b: [300, 40_000] },
    { name: 'dense + sparse', a: [0, 40_000], b: [39_500, 40_500] },
    { name: 'dense + dense', a: [0, 60_000], b: [40_000, 100_000] },
  ];
  for (const { name, a, b } of cases) {
    it(`hll: merging sketch(A) with sketch(B) gives the registers of sketch(A ∪ B), ${name}`, () => {
      const salt = 0x5eed_0040;
      const sketchA = new HllSketch();
      const sketchB = new HllSketch();
      const sketchUnion = new HllSketch();
      observeRange(sketchA, salt, a[0], a[1]);
      observeRange(sketchB, salt, b[0], b[1]);
      observeRange(sketchUnion, salt, Math.min(a[0], b[0]), Math.max(a[1], b[1]));
      const registersB = registersOf(sketchB);
      sketchA.mergeFrom(sketchB);
      expect(registersOf(sketchA)).toEqual(registersOf(sketchUnion));
      expect(sketchA.estimate()).toBe(sketchUnion.estimate());
      expect(registersOf(sketchB)).toEqual(registersB);
    });
  }

  for (const cardinality of [5_000, 200_000]) {
    it(`hll: ${cardinality} members routed to 8 random shards, then merged, equal one sketch of them all`, () => {
      const random = seededRandom(0x5eed_0050 + cardinality);
      const shards = Array.from({ length: 8 }, () => new HllSketch());
      const whole = new HllSketch();
      const member = new Uint8Array(8);
      // Every member once, and a fifth of them again, possibly on another shard (a retry).
      for (let step = 0; step < cardinality * 1.2; step++) {
        const ordinal = step < cardinality ? step : randomInt(random, 0, cardinality - 1);
        const { index, rank } = hasher.registerOf(memberOf(0x5eed_0051, ordinal, member));
        shards[randomInt(random, 0, 7)]!.observe(index, rank);
        whole.observe(index, rank);
      }
      const merged = new HllSketch();
      for (const shard of shards) merged.mergeFrom(shard);
      expect(registersOf(merged)).toEqual(registersOf(whole));
      expect(merged.estimate()).toBe(whole.estimate());
    });
  }

  it('hll: mergeRegisters applies logged changes as maxima and counts the rises', () => {
    const sketch = new HllSketch();
    sketch.observe(5, 3);
    expect(
      sketch.mergeRegisters([
        [5, 2],
        [5, 4],
        [9, 1],
        [9, 1],
      ]),
    ).toBe(2);
    expect(registersOf(sketch)).toEqual([
      [5, 4],
      [9, 1],
    ]);
  });
});

describe('HllSketch serialize', () => {
  it('hll: sparse and dense sketches round-trip register for register, in the same representation', () => {
    for (const cardinality of [0, 1, 1_000, 2_000, 100_000]) {
      const sketch = new HllSketch();
      observeRange(sketch, 0x5eed_0060, 0, cardinality);
      const bytes = sketch.serialize();
      const copy = HllSketch.deserialize(bytes);
      expect(copy.isDense).toBe(sketch.isDense);
      expect(registersOf(copy)).toEqual(registersOf(sketch));
      expect(copy.estimate()).toBe(sketch.estimate());
      expect(copy.serialize().equals(bytes)).toBe(true);
      expect(bytes.length).toBe(sketch.isDense ? 1 + 12_288 : 1 + 3 * sketch.nonZeroRegisterCount());
    }
  });

  it('hll: a dense sketch with every register at 51 round-trips (the widest 6-bit value)', () => {
    const sketch = new HllSketch();
    for (let index = 0; index < hllRegisterCount; index++) sketch.observe(index, hllRankMax);
    const copy = HllSketch.deserialize(sketch.serialize());
    expect(copy.nonZeroRegisterCount()).toBe(hllRegisterCount);
    expect(registersOf(copy).every(([, rank]) => rank === hllRankMax)).toBe(true);
  });

  it('hll: deserialize rejects corrupt buffers with a TallyError naming the fault', () => {
    const sparse = (entries: [number, number][]): Buffer =>
      Buffer.concat([Buffer.from([0x01]), ...entries.map(([index, rank]) => Buffer.from([index & 0xff, index >>> 8, rank]))]);
    const dense = new HllSketch();
    observeRange(dense, 0x5eed_0070, 0, 50_000);
    const denseBytes = dense.serialize();

    expectCorrupt(() => HllSketch.deserialize(Buffer.alloc(0)), /empty/);
    expectCorrupt(() => HllSketch.deserialize(Buffer.from([0x07])), /unknown format tag 0x07/);
    expectCorrupt(() => HllSketch.deserialize(Buffer.from([0x01, 0x00, 0x00])), /not a multiple of 3/);
    expectCorrupt(() => HllSketch.deserialize(sparse([[hllRegisterCount, 1]])), /index 16384/);
    expectCorrupt(() => HllSketch.deserialize(sparse([[3, 0]])), /rank 0/);
    expectCorrupt(() => HllSketch.deserialize(sparse([[3, hllRankMax + 1]])), /rank 52/);
    expectCorrupt(
      () =>
        HllSketch.deserialize(
          sparse([
            [4, 1],
            [3, 1],
          ]),
        ),
      /not strictly increasing/,
    );
    expectCorrupt(
      () =>
        HllSketch.deserialize(
          sparse([
            [4, 1],
            [4, 2],
          ]),
        ),
      /not strictly increasing/,
    );
    expectCorrupt(() => HllSketch.deserialize(denseBytes.subarray(0, denseBytes.length - 1)), /12288 bytes, expected 12289/);
    const highRank = Buffer.from(denseBytes);
    highRank[1] = (highRank[1]! & 0xc0) | 52; // register 0 := 52
    expectCorrupt(() => HllSketch.deserialize(highRank), /register 0 holds 52/);
    const maxLane = Buffer.from(denseBytes);
    maxLane[3] = maxLane[3]! | 0xfc; // register 3 := 63
    expectCorrupt(() => HllSketch.deserialize(maxLane), /register 3 holds 63/);
  });

  it('hll: a sparse buffer with more entries than sparse holds loads dense', () => {
    const entries = Array.from({ length: 3_000 }, (_, index) => [index * 5, 1 + (index % hllRankMax)] as [number, number]);
    const bytes = Buffer.concat([Buffer.from([0x01]), packRegisterChanges(entries)]);
    const sketch = HllSketch.deserialize(bytes);
    expect(sketch.isDense).toBe(true);
    expect(registersOf(sketch)).toEqual(entries);
  });
});

describe('packRegisterChanges', () => {
  it('hll: register changes round-trip through 3 bytes each', () => {
    const random = seededRandom(0x5eed_0080);
    const changes: RegisterChange[] = Array.from({ length: 1_000 }, () => [
      randomInt(random, 0, hllRegisterCount - 1),
      randomInt(random, 1, hllRankMax),
    ]);
    const bytes = packRegisterChanges(changes);
    expect(bytes.length).toBe(3_000);
    expect(unpackRegisterChanges(bytes)).toEqual(changes);
    expect(unpackRegisterChanges(packRegisterChanges([]))).toEqual([]);
    expect(unpackRegisterChanges(packRegisterChanges([[hllRegisterCount - 1, hllRankMax]]))).toEqual([[16_383, 51]]);
  });

  it('hll: unpack rejects a bad length, index or rank; pack refuses bad changes', () => {
    expectCorrupt(() => unpackRegisterChanges(Buffer.from([0x01, 0x00])), /2 bytes is not a multiple of 3/);
    expectCorrupt(() => unpackRegisterChanges(Buffer.from([0x00, 0x40, 0x01])), /index 16384/);
    expectCorrupt(() => unpackRegisterChanges(Buffer.from([0x05, 0x00, 0x00])), /rank 0/);
    expectCorrupt(() => unpackRegisterChanges(Buffer.from([0x05, 0x00, 0x01, 0x05, 0x00, 0x34])), /rank 52/);
    expect(() => packRegisterChanges([[0, 0]])).toThrow(/rank 1 or more/);
    expect(() => packRegisterChanges([[0, 52]])).toThrow(/rank 52/);
    expect(() => packRegisterChanges([[70_000, 1]])).toThrow(/index 70000/);
  });
});
