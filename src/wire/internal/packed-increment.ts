// shard.proto's PackedIncrements.records: one 16-byte record per increment,
// the shard id (uint64) then the amount (int64), both little-endian. The
// router writes them (a group's summed increments) and a node reads them; this
// module is the record's one definition. Numbers are written and read by
// 32-bit halves so a safe integer never goes through BigInt.

/** Bytes of one record. */
export const packedIncrementBytes = 16;

const shardIdOffset = 0;
const amountOffset = 8;
const twoTo32 = 2 ** 32;
/** |high word| below this: the 64-bit value is a safe integer, read without BigInt arithmetic. */
const safeHighWordBound = 2 ** 21;

/** Bytes of `recordCount` records. */
export function packedIncrementsSize(recordCount: number): number {
  return recordCount * packedIncrementBytes;
}

/**
 * Writes record `recordIndex` of `records`: a shard id (a safe integer) and a
 * nonzero int64 amount (a number when exact as one, else a bigint).
 */
export function writePackedIncrement(records: Buffer, recordIndex: number, shardId: number, amount: number | bigint): void {
  const offset = recordIndex * packedIncrementBytes;
  records.writeUInt32LE(shardId % twoTo32, offset + shardIdOffset);
  records.writeUInt32LE(Math.floor(shardId / twoTo32), offset + shardIdOffset + 4);
  if (typeof amount === 'number') {
    const high = Math.floor(amount / twoTo32);
    records.writeUInt32LE(amount - high * twoTo32, offset + amountOffset);
    records.writeInt32LE(high, offset + amountOffset + 4);
  } else {
    records.writeBigInt64LE(amount, offset + amountOffset);
  }
}

/** Records in `records`, or undefined when its length is not a whole number of records. */
export function packedIncrementRecordCount(records: Uint8Array): number | undefined {
  return records.length % packedIncrementBytes === 0 ? records.length / packedIncrementBytes : undefined;
}

/** The shard id of record `recordIndex`, or undefined when it is past 2^53 (no shard id is). */
export function readPackedShardId(records: Buffer, recordIndex: number): number | undefined {
  const offset = recordIndex * packedIncrementBytes + shardIdOffset;
  const high = records.readUInt32LE(offset + 4);
  return high >= safeHighWordBound ? undefined : high * twoTo32 + records.readUInt32LE(offset);
}

/** The shard id of record `recordIndex` in full, as a decimal string: for a refusal's message. */
export function packedShardIdText(records: Buffer, recordIndex: number): string {
  return String(records.readBigUInt64LE(recordIndex * packedIncrementBytes + shardIdOffset));
}

/** The amount of record `recordIndex`: every int64 fits a record. */
export function readPackedAmount(records: Buffer, recordIndex: number): bigint {
  const offset = recordIndex * packedIncrementBytes + amountOffset;
  const high = records.readInt32LE(offset + 4);
  return high < safeHighWordBound && high >= -safeHighWordBound
    ? BigInt(high * twoTo32 + records.readUInt32LE(offset))
    : records.readBigInt64LE(offset);
}
