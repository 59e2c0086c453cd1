// The scrubber's block check refuses exactly the bytes decodeBlock refuses:
// valid blocks, the same blocks cut, extended and with bytes flipped
// (seeded), and totals one past int64 either way.
import { describe, expect, it } from 'vitest';
import { checkBlock, decodeBlock, encodeBlock } from '../../../../src/node/log/checkpoint/checkpoint-blocks.ts';
import { INT64_MAX, INT64_MIN } from '../../../../src/wire/index.ts';
import { seededRandom } from '../../../helpers/seeded-random.ts';

const refuses = (check: () => unknown): boolean => {
  try {
    check();
    return false;
  } catch {
    return true;
  }
};

/** The zigzag varint of a bigint, as a block stores a total. */
function zigzagVarint(value: bigint): number[] {
  let rest = value >= 0n ? value << 1n : (-value << 1n) - 1n;
  const bytes: number[] = [];
  while (rest >= 0x80n) {
    bytes.push(Number(rest & 0x7fn) | 0x80);
    rest >>= 7n;
  }
  bytes.push(Number(rest));
  return bytes;
}

describe('checkpoint block check', () => {
  it('checkBlock accepts and refuses what decodeBlock accepts and refuses, over seeded damage', () => {
    const random = seededRandom(34);
    let refused = 0;
    for (let trial = 0; trial < 2_000; trial++) {
      const firstShard = 256 * Math.floor(random() * 1_000);
      const ids = [...new Set(Array.from({ length: 1 + Math.floor(random() * 40) }, () => firstShard + Math.floor(random() * 256)))].sort(
        (a, b) => a - b,
      );
      const extremes = [INT64_MAX, INT64_MIN, 0n, -1n, 2n ** 48n];
      const totals = ids.map(() =>
        random() < 0.2 ? extremes[Math.floor(random() * extremes.length)]! : BigInt(Math.floor(random() * 2_000) - 1_000),
      );
      const data = Buffer.from(encodeBlock(firstShard, ids, totals));
      const damaged = Buffer.from(data);
      const roll = random();
      let bytes: Buffer = damaged;
      if (roll < 0.3) {
        const at = Math.floor(random() * damaged.length);
        damaged[at] = damaged[at]! ^ (1 << Math.floor(random() * 8));
      } else if (roll < 0.5) bytes = damaged.subarray(0, Math.floor(random() * damaged.length));
      else if (roll < 0.7) bytes = Buffer.concat([damaged, Buffer.from([Math.floor(random() * 256), Math.floor(random() * 256)])]);
      const decodeRefuses = refuses(() => decodeBlock(firstShard, bytes));
      expect(refuses(() => checkBlock(firstShard, bytes))).toBe(decodeRefuses);
      if (decodeRefuses) refused++;
    }
    // The damage is not all harmless: both refuse a good share of it.
    expect(refused).toBeGreaterThan(200);
  });

  it('checkBlock refuses a total one past int64 either way, as decodeBlock does', () => {
    for (const total of [INT64_MAX + 1n, INT64_MIN - 1n]) {
      const bytes = Buffer.from([0x00, ...zigzagVarint(total)]);
      expect(() => decodeBlock(0, bytes)).toThrow(/leaves int64/);
      expect(() => checkBlock(0, bytes)).toThrow(/leaves int64/);
    }
    expect(() => checkBlock(0, Buffer.from([0x00, ...zigzagVarint(INT64_MAX)]))).not.toThrow();
  });
});
