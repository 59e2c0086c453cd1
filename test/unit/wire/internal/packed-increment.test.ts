// The packed-increment record (shard.proto, PackedIncrements.records): what
// the router's writer puts in, the node's reader takes out, over the whole
// range of shard ids and int64 amounts, at the byte layout shard.proto gives
// (shard id then amount, both 64-bit little-endian); lengths that are not
// whole records and shard ids past 2^53 are told apart, never misread.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  packedIncrementBytes,
  packedIncrementRecordCount,
  packedIncrementsSize,
  packedShardIdText,
  readPackedAmount,
  readPackedShardId,
  writePackedIncrement,
} from '../../../../src/wire/internal/index.ts';
import { INT64_MAX, INT64_MIN } from '../../../../src/wire/index.ts';

const int64 = fc.oneof(
  fc.bigInt({ min: INT64_MIN, max: INT64_MAX }),
  fc.constantFrom(INT64_MIN, INT64_MAX, -(2n ** 53n), 2n ** 53n, -(2n ** 53n) + 1n, 2n ** 53n - 1n, 1n, -1n, 2n ** 32n, -(2n ** 32n)),
);

describe('the packed-increment record', () => {
  it('is 16 bytes: the shard id, then the amount, each 64-bit little-endian', () => {
    const records = Buffer.alloc(packedIncrementsSize(2));
    writePackedIncrement(records, 0, 7, -2);
    writePackedIncrement(records, 1, 2 ** 40 + 5, 2n ** 62n);
    expect(packedIncrementBytes).toBe(16);
    expect(records.readBigUInt64LE(0)).toBe(7n);
    expect(records.readBigInt64LE(8)).toBe(-2n);
    expect(records.readBigUInt64LE(16)).toBe(2n ** 40n + 5n);
    expect(records.readBigInt64LE(24)).toBe(2n ** 62n);
  });

  it('reads back every shard id and int64 amount written, as a number or a bigint', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }), int64, fc.boolean()), { minLength: 1, maxLength: 20 }),
        (increments) => {
          const records = Buffer.alloc(packedIncrementsSize(increments.length));
          increments.forEach(([shardId, amount, asNumber], index) => {
            const exact = amount >= -(2n ** 53n) + 1n && amount <= 2n ** 53n - 1n;
            writePackedIncrement(records, index, shardId, asNumber && exact ? Number(amount) : amount);
          });
          expect(packedIncrementRecordCount(records)).toBe(increments.length);
          increments.forEach(([shardId, amount], index) => {
            expect(readPackedShardId(records, index)).toBe(shardId);
            expect(readPackedAmount(records, index)).toBe(amount);
            expect(records.readBigInt64LE(index * 16 + 8)).toBe(amount);
          });
        },
      ),
    );
  });

  it('tells a shard id past 2^53 apart instead of reading it rounded, and names it in full', () => {
    const records = Buffer.alloc(packedIncrementBytes);
    records.writeBigUInt64LE(2n ** 53n + 1n, 0);
    expect(readPackedShardId(records, 0)).toBeUndefined();
    expect(packedShardIdText(records, 0)).toBe(String(2n ** 53n + 1n));
    records.writeBigUInt64LE(2n ** 64n - 1n, 0);
    expect(readPackedShardId(records, 0)).toBeUndefined();
    records.writeBigUInt64LE(2n ** 53n - 1n, 0);
    expect(readPackedShardId(records, 0)).toBe(Number.MAX_SAFE_INTEGER);
  });

  it('counts only whole records', () => {
    expect(packedIncrementRecordCount(Buffer.alloc(0))).toBe(0);
    expect(packedIncrementRecordCount(Buffer.alloc(32))).toBe(2);
    for (const length of [1, 15, 17, 31]) expect(packedIncrementRecordCount(Buffer.alloc(length))).toBeUndefined();
  });
});
