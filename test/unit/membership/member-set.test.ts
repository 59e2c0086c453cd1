// The 64-bit member set against a plain Set<bigint>, its snapshot format
// (round trips, and every damaged or truncated buffer refused), the
// member -> partition mixer, and member id parsing.
import { crc32 } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { MemberSet, parseMemberId, partitionOf } from '../../../src/membership/index.ts';
import { randomInt, seededRandom } from '../../helpers/seeded-random.ts';

const u32Max = 2 ** 32 - 1;
const memberMax = (1n << 64n) - 1n;
const edgeMembers = [0n, 1n, (1n << 32n) - 1n, 1n << 32n, 1n << 63n, memberMax];

function random64(random: () => number): bigint {
  return (BigInt(randomInt(random, 0, u32Max)) << 32n) | BigInt(randomInt(random, 0, u32Max));
}

function setOf(members: Iterable<bigint>): MemberSet {
  const set = new MemberSet();
  for (const member of members) set.add(member);
  return set;
}

function sortedOf(members: Iterable<bigint>): bigint[] {
  return [...members].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/** Swaps a snapshot's body and reseals its CRC: structure faults past the checksum. */
function resealed(body: Buffer): Buffer {
  const crc = Buffer.alloc(4);
  crc.writeUInt32LE(crc32(body));
  return Buffer.concat([body, crc]);
}

describe('member set', () => {
  it('add, add, remove, remove answer true, false, true, false at every edge of the range', () => {
    for (const member of edgeMembers) {
      const set = new MemberSet();
      expect([set.add(member), set.size]).toEqual([true, 1]);
      expect([set.add(member), set.size]).toEqual([false, 1]);
      expect(set.has(member)).toBe(true);
      expect([set.remove(member), set.size]).toEqual([true, 0]);
      expect([set.remove(member), set.size]).toEqual([false, 0]);
      expect(set.has(member)).toBe(false);
    }
  });

  it('members outside 0..2^64-1 throw RangeError on every operation', () => {
    const set = new MemberSet();
    for (const member of [-1n, 1n << 64n]) {
      expect(() => set.add(member)).toThrow(RangeError);
      expect(() => set.remove(member)).toThrow(RangeError);
      expect(() => set.has(member)).toThrow(RangeError);
      expect(() => partitionOf(member, 16)).toThrow(RangeError);
    }
    expect(() => set.add(5 as unknown as bigint)).toThrow(RangeError);
    expect(set.size).toBe(0);
  });

  it('50k random adds and removes over small and large ids agree with a Set<bigint>', () => {
    const random = seededRandom(20240611);
    const highs = [1, 2, 0x7fffffff, 0x80000000, u32Max];
    // Few highs and few lows per high, so parts are promoted and demoted often; lows on both sides of 2^31.
    const pick = (): bigint => {
      const roll = random();
      if (roll < 0.35) return BigInt(randomInt(random, 0, 3_000));
      if (roll < 0.45) return BigInt(u32Max - randomInt(random, 0, 50));
      if (roll < 0.85) {
        const high = BigInt(highs[randomInt(random, 0, highs.length - 1)]!);
        const low = random() < 0.5 ? randomInt(random, 0, 3) : u32Max - randomInt(random, 0, 3);
        return (high << 32n) | BigInt(low);
      }
      return random64(random);
    };
    const set = new MemberSet();
    const reference = new Set<bigint>();
    for (let op = 0; op < 50_000; op++) {
      const member = pick();
      if (random() < 0.55) {
        expect(set.add(member)).toBe(!reference.has(member));
        reference.add(member);
      } else {
        expect(set.remove(member)).toBe(reference.has(member));
        reference.delete(member);
      }
      expect(set.size).toBe(reference.size);
      if (op % 5_000 === 0) expect([...set.members()]).toEqual(sortedOf(reference));
    }
    expect([...set.members()]).toEqual(sortedOf(reference));
    for (const member of reference) expect(set.has(member)).toBe(true);
    for (let probe = 0; probe < 2_000; probe++) {
      const member = pick();
      expect(set.has(member)).toBe(reference.has(member));
    }
  });

  it('a high part goes from one member to a bitmap and back without losing anyone', () => {
    const high = 5n << 32n;
    const [first, second, third] = [high | 1n, high | BigInt(u32Max), high | 0x80000000n];
    const set = setOf([first]);
    const singletonBytes = set.memoryBytes();
    expect(set.add(second)).toBe(true);
    expect(set.add(second)).toBe(false);
    expect(set.memoryBytes()).toBeGreaterThan(singletonBytes);
    expect([set.has(first), set.has(second), set.has(third), set.has(high)]).toEqual([true, true, false, false]);
    expect(set.add(third)).toBe(true);
    expect(set.remove(first)).toBe(true);
    expect(set.remove(third)).toBe(true);
    expect(set.memoryBytes()).toBe(singletonBytes);
    expect([set.has(first), set.has(second), set.has(third)]).toEqual([false, true, false]);
    expect(set.remove(first)).toBe(false);
    expect([...set.members()]).toEqual([second]);
    expect(set.add(first)).toBe(true);
    expect([...set.members()]).toEqual([first, second]);
    expect(set.remove(second) && set.remove(first)).toBe(true);
    expect([set.size, [...set.members()]]).toEqual([0, []]);
    // The neighbouring high parts and the low bitmap never saw any of it.
    expect(set.has(first - (1n << 32n))).toBe(false);
    expect(set.has(1n)).toBe(false);
  });

  it('memoryBytes grows with members and stays well under a Set<bigint>', () => {
    const empty = new MemberSet().memoryBytes();
    const dense = setOf(Array.from({ length: 100_000 }, (_, index) => BigInt(index + 1)));
    expect(empty).toBeGreaterThan(0);
    expect(dense.memoryBytes()).toBeGreaterThan(empty);
    expect(dense.memoryBytes() / dense.size).toBeLessThan(1);
  });
});

describe('member set snapshot', () => {
  const random = seededRandom(7);
  const shapes: Record<string, bigint[]> = {
    empty: [],
    'dense small ids': Array.from({ length: 100_000 }, (_, index) => BigInt(index + 1)),
    'sparse high ids': Array.from({ length: 5_000 }, () => (1n << 32n) + (random64(random) % (memberMax - (1n << 32n)))),
    mixed: [
      ...edgeMembers,
      ...Array.from({ length: 3_000 }, () => BigInt(randomInt(random, 0, u32Max))),
      ...Array.from({ length: 300 }, (_, index) => (9n << 32n) | BigInt(index * 7)),
      ...Array.from({ length: 3_000 }, () => random64(random)),
    ],
  };

  for (const [shape, members] of Object.entries(shapes)) {
    it(`${shape} round-trips to the same members and the same bytes`, () => {
      const set = setOf(members);
      const bytes = set.serialize();
      const copy = MemberSet.deserialize(bytes);
      expect(copy.size).toBe(set.size);
      expect([...copy.members()]).toEqual(sortedOf(new Set(members)));
      expect(copy.serialize().equals(bytes)).toBe(true);
      // The copy is live, not a frozen view.
      expect(copy.add(123_456_789_012n)).toBe(!set.has(123_456_789_012n));
    });
  }

  it('dense ids cost well under a bit each on the wire', () => {
    expect(setOf(shapes['dense small ids']!).serialize().length).toBeLessThan(1_000);
  });

  it('every truncation and every flipped byte is refused with a member set error', () => {
    const bytes = setOf([3n, 4n, 1n << 40n, (1n << 40n) | 9n, (7n << 32n) | 1n, memberMax]).serialize();
    for (let length = 0; length < bytes.length; length++) {
      expect(() => MemberSet.deserialize(bytes.subarray(0, length)), `length ${length}`).toThrow(/^member set: /);
    }
    for (let index = 0; index < bytes.length; index++) {
      const damaged = Buffer.from(bytes);
      damaged[index]! ^= 0x10;
      expect(() => MemberSet.deserialize(damaged), `byte ${index}`).toThrow(/^member set: /);
    }
    expect(() => MemberSet.deserialize(Buffer.concat([bytes, Buffer.from([0])]))).toThrow(/checksum/);
  });

  it('an unknown version is named as such', () => {
    const bytes = new MemberSet().serialize();
    const future = Buffer.from(bytes);
    future[0] = 2;
    expect(() => MemberSet.deserialize(future)).toThrow(/unsupported format version 2/);
  });

  it('structure faults behind a valid checksum are refused too', () => {
    const bytes = setOf([1n << 40n, 2n << 40n]).serialize();
    const body = bytes.subarray(0, bytes.length - 4);
    const lowEnd = 5 + body.readUInt32LE(1);
    // Two singleton high parts: [high, count, low] at lowEnd + 4 and lowEnd + 16.
    const swapped = Buffer.from(body);
    body.copy(swapped, lowEnd + 4, lowEnd + 16, lowEnd + 28);
    body.copy(swapped, lowEnd + 16, lowEnd + 4, lowEnd + 16);
    expect(() => MemberSet.deserialize(resealed(swapped))).toThrow(/is not above/);

    const repeated = Buffer.from(body);
    body.copy(repeated, lowEnd + 16, lowEnd + 4, lowEnd + 16);
    expect(() => MemberSet.deserialize(resealed(repeated))).toThrow(/is not above/);

    const highZero = Buffer.from(body);
    highZero.writeUInt32LE(0, lowEnd + 4);
    expect(() => MemberSet.deserialize(resealed(highZero))).toThrow(/is not above/);

    const emptyPart = Buffer.from(body);
    emptyPart.writeUInt32LE(0, lowEnd + 8);
    expect(() => MemberSet.deserialize(resealed(emptyPart))).toThrow(/is empty/);

    const tooManyParts = Buffer.from(body);
    tooManyParts.writeUInt32LE(1_000_000, lowEnd);
    expect(() => MemberSet.deserialize(resealed(tooManyParts))).toThrow(/cannot fit/);

    expect(() => MemberSet.deserialize(resealed(Buffer.concat([body, Buffer.alloc(3)])))).toThrow(/unread bytes/);

    const badLowLength = Buffer.from(body);
    badLowLength.writeUInt32LE(body.readUInt32LE(1) + 4, 1);
    expect(() => MemberSet.deserialize(resealed(badLowLength))).toThrow(/^member set: /);
  });
});

describe('partitionOf', () => {
  const partitions = 16;
  const even = 100_000 / partitions;

  function counts(members: Iterable<bigint>): number[] {
    const perPartition = new Array<number>(partitions).fill(0);
    for (const member of members) perPartition[partitionOf(member, partitions)]!++;
    return perPartition;
  }

  it('dense ids 1..100000 land within 10% of even on 16 partitions', () => {
    const perPartition = counts(Array.from({ length: 100_000 }, (_, index) => BigInt(index + 1)));
    for (const count of perPartition) expect(Math.abs(count - even)).toBeLessThanOrEqual(even * 0.1);
  });

  it('random 64-bit ids land within 10% of even on 16 partitions', () => {
    const random = seededRandom(99);
    const perPartition = counts(Array.from({ length: 100_000 }, () => random64(random)));
    for (const count of perPartition) expect(Math.abs(count - even)).toBeLessThanOrEqual(even * 0.1);
  });

  it('is stable, in range, and is splitmix64 (its published first outputs from seed 0)', () => {
    const random = seededRandom(5);
    for (let probe = 0; probe < 1_000; probe++) {
      const member = random64(random);
      const partition = partitionOf(member, 7);
      expect(partitionOf(member, 7)).toBe(partition);
      expect(partition >= 0 && partition < 7).toBe(true);
    }
    // splitmix64 seeded 0 yields mix(gamma), mix(2 * gamma): 0xe220a8397b1dcdaf, 0x6e789e6aa1b965f4.
    const gamma = 0x9e3779b97f4a7c15n;
    expect(partitionOf(gamma, 2 ** 32)).toBe(0x7b1dcdaf);
    expect(partitionOf((2n * gamma) & memberMax, 2 ** 32)).toBe(0xa1b965f4);
    expect(partitionOf(gamma, 2 ** 52)).toBe(Number(0xe220a8397b1dcdafn % (1n << 52n)));
    expect(partitionOf(memberMax, 1)).toBe(0);
  });

  it('a partition count that is not a positive integer throws RangeError', () => {
    for (const bad of [0, -1, 1.5, Number.NaN, 2 ** 53]) expect(() => partitionOf(1n, bad)).toThrow(RangeError);
  });
});

describe('parseMemberId', () => {
  it('accepts canonical decimals from 0 to 2^64-1', () => {
    expect(parseMemberId('0')).toBe(0n);
    expect(parseMemberId('42')).toBe(42n);
    expect(parseMemberId('4294967296')).toBe(1n << 32n);
    expect(parseMemberId('18446744073709551615')).toBe(memberMax);
  });

  it('rejects signs, spaces, hex, exponents, leading zeros, junk and 2^64 with one-line RangeErrors', () => {
    const rejected = [
      '-1',
      '+1',
      '18446744073709551616',
      '99999999999999999999',
      '123456789012345678901',
      '1e3',
      '0x10',
      ' 5',
      '5 ',
      '5\n',
      '',
      'abc',
      '007',
      '1.0',
      '１',
    ];
    for (const text of rejected) {
      let thrown: unknown;
      try {
        parseMemberId(text);
      } catch (error) {
        thrown = error;
      }
      expect(thrown, JSON.stringify(text)).toBeInstanceOf(RangeError);
      expect((thrown as Error).message).toMatch(/^member id /);
      expect((thrown as Error).message).not.toContain('\n');
    }
  });
});
