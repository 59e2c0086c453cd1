// Checksums of what the log stores (G8): every log row, commit record and
// checkpoint block carries a CRC-32 of its canonical content, written with it
// and verified whenever it is read (replay, fold, snapshot, replication, the
// scrubber). CRC-32 (zlib's, IEEE) catches every burst of up to 32 flipped
// bits and all but one in 2^32 of anything else; a stored value that moved
// on the disk is found, never served. Pure: no database, no state but one
// scratch buffer (the process is single-threaded and nothing here yields).
import zlib from 'node:zlib';
import type Database from 'better-sqlite3';
import { ShardLogError } from './records/log-error.ts';

/** The SQL function the part statements compute a part's checksum with (registered on the store's connection). */
export const partChecksumFunction = 'tally_part_crc';

/** Fixed-width fields of a row, each 8 bytes little-endian, then the two variable lengths. */
const scratch = Buffer.alloc(8 * 10);
/** Stands for a NULL kind or fence: no stored value can be -1 there. */
const absent = -1n;

function int64(value: bigint | number | null): bigint {
  return value === null ? absent : typeof value === 'bigint' ? value : BigInt(value);
}

/**
 * A log row's checksum: over every column as stored (a NULL key reads as an
 * empty one, as the row does). Numbers and bigints of one value agree, so the
 * writer (numbers) and the reader (bigints, safe-integer mode) compute the same.
 */
export function rowChecksum(
  lsn: bigint,
  epoch: bigint,
  shardId: bigint | number,
  amount: bigint,
  key: Buffer | null,
  fenceShardCount: bigint | number | null,
  atMs: bigint | number,
  kind: bigint | number | null,
  member: bigint | null,
  payload: Buffer | null,
): number {
  scratch.writeBigInt64LE(lsn, 0);
  scratch.writeBigInt64LE(epoch, 8);
  scratch.writeBigInt64LE(int64(shardId), 16);
  scratch.writeBigInt64LE(amount, 24);
  scratch.writeBigInt64LE(int64(fenceShardCount), 32);
  scratch.writeBigInt64LE(int64(atMs), 40);
  scratch.writeBigInt64LE(int64(kind), 48);
  scratch.writeBigInt64LE(member ?? 0n, 56);
  // A member of 0 and no member differ: the flag rides with the lengths.
  scratch.writeUInt32LE(member === null ? 0 : 1, 64);
  scratch.writeUInt32LE(key?.length ?? 0, 68);
  scratch.writeUInt32LE(payload?.length ?? 0, 72);
  scratch.writeUInt32LE(0, 76);
  let crc = zlib.crc32(scratch);
  if (key !== null && key.length > 0) crc = zlib.crc32(key, crc);
  if (payload !== null && payload.length > 0) crc = zlib.crc32(payload, crc);
  return crc;
}

/** A commit record's checksum: its lsn range, epoch, commit time and packed entries. */
export function recordChecksum(firstLsn: bigint, lastLsn: bigint, epoch: bigint, atMs: bigint | number, data: Uint8Array): number {
  scratch.writeBigInt64LE(firstLsn, 0);
  scratch.writeBigInt64LE(lastLsn, 8);
  scratch.writeBigInt64LE(epoch, 16);
  scratch.writeBigInt64LE(int64(atMs), 24);
  scratch.writeUInt32LE(data.length, 32);
  return zlib.crc32(data, zlib.crc32(scratch.subarray(0, 36)));
}

/** A checkpoint part's checksum: its shard, its name and its bytes (window buckets, a sketch, a member set, a tombstone). */
export function partChecksum(shardId: bigint | number, part: string, data: Uint8Array): number {
  scratch.writeBigInt64LE(int64(shardId), 0);
  scratch.writeUInt32LE(data.length, 8);
  return zlib.crc32(data, zlib.crc32(part, zlib.crc32(scratch.subarray(0, 12))));
}

/** A stored part's bytes once its checksum holds (ShardLogError when they changed on the disk). */
export function checkedPart(shardId: bigint, part: string, data: Buffer, crc: bigint | null): Buffer {
  verifyChecksum(`checkpoint part ${part} of shard ${shardId}`, crc, partChecksum(shardId, part, data));
  return data;
}

/** A checkpoint block's checksum: its first shard and its packed totals. */
export function blockChecksum(firstShard: number, data: Uint8Array): number {
  scratch.writeBigInt64LE(BigInt(firstShard), 0);
  scratch.writeUInt32LE(data.length, 8);
  return zlib.crc32(data, zlib.crc32(scratch.subarray(0, 12)));
}

/**
 * A snapshot chunk's checksum: every shard's id and total, every part's
 * shard, name and bytes, every key entry's row checksum, in order. The
 * primary computes it from the chunk it read off its checked log, the
 * follower from what it decoded off the wire.
 */
export function chunkChecksum(chunk: {
  shards: readonly (readonly [shardId: number, total: bigint])[];
  parts: readonly { shardId: number; part: string; data: Uint8Array }[];
  keys: readonly StoredEntryLike[];
}): number {
  let crc = 0;
  for (const [shardId, total] of chunk.shards) {
    scratch.writeBigInt64LE(BigInt(shardId), 0);
    scratch.writeBigInt64LE(total, 8);
    crc = zlib.crc32(scratch.subarray(0, 16), crc);
  }
  for (const { shardId, part, data } of chunk.parts) {
    scratch.writeBigInt64LE(BigInt(shardId), 0);
    scratch.writeUInt32LE(data.length, 8);
    crc = zlib.crc32(data, zlib.crc32(part, zlib.crc32(scratch.subarray(0, 12), crc)));
  }
  for (const entry of chunk.keys) {
    const key = entry.idempotencyKey.length > 0 ? entry.idempotencyKey : null;
    const kind = entry.kind === undefined || entry.kind === 0 ? null : entry.kind;
    const member = entry.member === undefined ? null : BigInt.asIntN(64, entry.member);
    const payload = entry.payload === undefined || entry.payload.length === 0 ? null : entry.payload;
    scratch.writeUInt32LE(
      rowChecksum(
        entry.lsn,
        entry.epoch,
        entry.shardId,
        entry.amount,
        key,
        entry.fenceShardCount || null,
        entry.atMs,
        kind,
        member,
        payload,
      ),
      0,
    );
    crc = zlib.crc32(scratch.subarray(0, 4), crc);
  }
  return crc;
}

/** What chunkChecksum reads of a key entry (a StoredEntry). */
interface StoredEntryLike {
  lsn: bigint;
  epoch: bigint;
  shardId: number;
  amount: bigint;
  idempotencyKey: Buffer;
  fenceShardCount: number;
  atMs: number;
  kind?: number;
  member?: bigint;
  payload?: Buffer;
}

/** The checksum of bytes shipped whole (a replication block). */
export function bytesChecksum(data: Uint8Array): number {
  return zlib.crc32(data);
}

/**
 * Throws ShardLogError when a stored checksum is missing or differs from the
 * one computed: the bytes changed after they were written. `what` names
 * the row, record or block for the operator.
 */
export function verifyChecksum(what: string, stored: bigint | number | null, computed: number): void {
  if (stored === null) throw new ShardLogError(`${what} has no checksum`);
  if (Number(stored) !== computed)
    throw new ShardLogError(`${what} fails its checksum (stored ${Number(stored)}, computed ${computed}): its bytes changed on the disk`);
}

/** The SQL function appendPart computes a joined part's checksum with (deterministic: SQLite may reuse its result). */
export function registerChecksumFunctions(db: Database.Database): void {
  db.function(partChecksumFunction, { deterministic: true }, (shardId, part, data) =>
    partChecksum(shardId as bigint | number, part as string, data as Buffer),
  );
}
