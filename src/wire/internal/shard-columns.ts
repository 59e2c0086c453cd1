// The columns a ChangedShards answer carries (proto/shard.proto): shard ids
// as float64, totals as int64, generations as uint32, little-endian, one
// entry per shard. The one module that writes and reads them.
import { ErrorCode, TallyError } from '../index.ts';

export interface ShardColumns {
  shardIds: Float64Array;
  totals: BigInt64Array;
  generations: Uint32Array;
}

export function encodeShardColumns(columns: ShardColumns): { shardIds: Buffer; totals: Buffer; generations: Buffer } {
  const view = (array: Float64Array | BigInt64Array | Uint32Array): Buffer => Buffer.from(array.buffer, array.byteOffset, array.byteLength);
  // Typed arrays are platform-endian: every platform Node runs on here is little-endian, which the wire names.
  return { shardIds: view(columns.shardIds), totals: view(columns.totals), generations: view(columns.generations) };
}

/** Reads the columns; a node that sent columns of unequal length or a bad shard id is refused as a whole. */
export function decodeShardColumns(wire: { shardIds: Buffer; totals: Buffer; generations: Buffer }): ShardColumns {
  const count = wire.shardIds.length / 8;
  if (!Number.isInteger(count) || wire.totals.length !== count * 8 || wire.generations.length !== count * 4)
    throw new TallyError(ErrorCode.internal, 'a node sent shard columns of unequal lengths');
  const shardIds = new Float64Array(count);
  const totals = new BigInt64Array(count);
  const generations = new Uint32Array(count);
  for (let index = 0; index < count; index++) {
    const shardId = wire.shardIds.readDoubleLE(index * 8);
    if (!Number.isSafeInteger(shardId) || shardId < 1) throw new TallyError(ErrorCode.internal, `a node sent shard id ${shardId}`);
    shardIds[index] = shardId;
    totals[index] = wire.totals.readBigInt64LE(index * 8);
    generations[index] = wire.generations.readUInt32LE(index * 4);
  }
  return { shardIds, totals, generations };
}
