// The checkpoint's shard totals, packed: one row of checkpoint_blocks per run
// of blockShards consecutive shard ids, its present shards as varints (the id
// gap, then the total zigzagged). A spread workload's fold touches most of the
// table every round, so its size is what a round writes (twice: WAL frame,
// then the copy into the file): ~3 B a shard here against ~12 B as a B-tree
// row per shard. This file only encodes, decodes and reads; ShardLog writes.
import type Database from 'better-sqlite3';
import { INT64_MAX, INT64_MIN } from '../../../wire/index.ts';
import { ShardLogError } from '../records/log-entry.ts';
import { blockChecksum, verifyChecksum } from '../checksums.ts';
import { rowsOf, shardIdsPerQueryMax } from '../log-statements.ts';
import { writeUnsigned, writeZigzag } from '../records/varint.ts';

/**
 * Shard ids per block: part of the file format (a block's key is its first
 * id, a multiple of this), so it is not a tunable limit. 256 shards of ~3 B
 * keep a block's row inside one 4 KiB page, and a round's rewrite of a block
 * for one changed shard small.
 */
export const blockShards = 256;

/** The block holding shardId: its first shard id. */
export function blockOf(shardId: number): number {
  return shardId - (shardId % blockShards);
}

/** A block's present shards, ascending, and their totals. */
export interface BlockTotals {
  ids: Float64Array;
  totals: BigInt64Array;
}

function writeTotal(out: Buffer, at: number, total: bigint): number {
  if (total > INT64_MAX || total < INT64_MIN) throw new ShardLogError(`checkpoint total ${total} leaves int64`);
  return writeZigzag(out, at, total);
}

/** Encodes a block's shards (ascending ids inside the block at firstShard) and their totals. */
export function encodeBlock(firstShard: number, ids: ArrayLike<number>, totals: ArrayLike<bigint>): Buffer {
  // At most 10 bytes a varint: a gap below blockShards takes 2, a total 10.
  const out = Buffer.allocUnsafe(ids.length * 12);
  let at = 0;
  let previous = firstShard - 1;
  for (let index = 0; index < ids.length; index++) {
    const shardId = ids[index]!;
    const total = totals[index]!;
    // The paired check: what is written is what decodeBlock accepts.
    if (shardId <= previous || shardId >= firstShard + blockShards || total > INT64_MAX || total < INT64_MIN)
      throw new ShardLogError(`checkpoint block ${firstShard}: shard ${shardId} (total ${total}) does not belong in it`);
    at = writeUnsigned(out, at, shardId - previous - 1);
    previous = shardId;
    at = writeTotal(out, at, total);
  }
  return Buffer.from(out.subarray(0, at));
}

function badBlock(firstShard: number, why: string): ShardLogError {
  return new ShardLogError(`checkpoint block ${firstShard} is invalid: ${why}`);
}

/** The end of the varint at `at` (after its last byte); throws for one that runs off the data or past 10 bytes. */
function varintEnd(firstShard: number, data: Uint8Array, at: number): number {
  for (let end = at; end < at + 10; end++) {
    if (end >= data.length) throw badBlock(firstShard, 'a varint runs off its end');
    if (data[end]! < 0x80) return end + 1;
  }
  throw badBlock(firstShard, 'a varint is longer than 10 bytes');
}

/** The unsigned varint in data[at, end): a number while it fits in 49 bits (7 bytes), a bigint past that. */
function readUnsigned(data: Uint8Array, at: number, end: number): number | bigint {
  if (end - at <= 7) {
    let value = 0;
    for (let index = end - 1; index >= at; index--) value = value * 0x80 + (data[index]! & 0x7f);
    return value;
  }
  let big = 0n;
  for (let index = end - 1; index >= at; index--) big = (big << 7n) | BigInt(data[index]! & 0x7f);
  return big;
}

/** The zigzagged total in data[at, end). */
function readTotal(firstShard: number, data: Uint8Array, at: number, end: number): bigint {
  const zigzag = readUnsigned(data, at, end);
  let total: bigint;
  if (typeof zigzag === 'number') total = BigInt(zigzag % 2 === 0 ? zigzag / 2 : -(zigzag + 1) / 2);
  else total = (zigzag & 1n) === 0n ? zigzag >> 1n : -((zigzag + 1n) >> 1n);
  if (total > INT64_MAX || total < INT64_MIN) throw badBlock(firstShard, 'a total leaves int64');
  return total;
}

/**
 * Walks a block's shards in order, checking its structure (ids inside the
 * block, ascending; every varint whole): onShard gets each shard id and where
 * its total's bytes lie, so a caller decodes only the totals it wants.
 */
function scanBlock(firstShard: number, data: Uint8Array, onShard: (shardId: number, totalAt: number, totalEnd: number) => void): void {
  let at = 0;
  let previous = firstShard - 1;
  // Bounded: every step consumes at least 2 bytes, and there are at most blockShards steps.
  for (let index = 0; at < data.length; index++) {
    if (index >= blockShards) throw badBlock(firstShard, `more than ${blockShards} shards`);
    const gapEnd = varintEnd(firstShard, data, at);
    const gap = gapEnd - at <= 2 ? Number(readUnsigned(data, at, gapEnd)) : blockShards;
    const shardId = previous + 1 + gap;
    if (shardId >= firstShard + blockShards) throw badBlock(firstShard, `a shard id lies past the block (gap ${gap})`);
    previous = shardId;
    const totalEnd = varintEnd(firstShard, data, gapEnd);
    onShard(shardId, gapEnd, totalEnd);
    at = totalEnd;
  }
}

/** Decodes a block; throws ShardLogError for bytes encodeBlock could not have written. */
export function decodeBlock(firstShard: number, data: Uint8Array): BlockTotals {
  const ids: number[] = [];
  const totals: bigint[] = [];
  scanBlock(firstShard, data, (shardId, totalAt, totalEnd) => {
    ids.push(shardId);
    totals.push(readTotal(firstShard, data, totalAt, totalEnd));
  });
  return { ids: Float64Array.from(ids), totals: BigInt64Array.from(totals) };
}

/**
 * Checks a block as decodeBlock would, without decoding it: a total of at
 * most 7 varint bytes (49 bits) lies inside int64 and is skipped; a longer
 * one is read and range-checked. The scrubber's check: no bigint a shard.
 */
export function checkBlock(firstShard: number, data: Uint8Array): void {
  scanBlock(firstShard, data, (_shardId, totalAt, totalEnd) => {
    if (totalEnd - totalAt > 7) readTotal(firstShard, data, totalAt, totalEnd);
  });
}

/**
 * A block's bytes with where each shard's total lies: slot i (shard
 * firstShard + i) holds 1 + its total's offset, 0 for no total. Built in one
 * scan, so a round that looks up shards of one block slice after slice scans
 * it once, not once per slice.
 */
export interface IndexedBlock {
  readonly firstShard: number;
  readonly data: Buffer;
  readonly totalAt: Uint16Array;
}

export function indexBlock(firstShard: number, data: Buffer): IndexedBlock {
  // A block is at most blockShards x 12 bytes: its offsets fit in 16 bits.
  const totalAt = new Uint16Array(blockShards);
  scanBlock(firstShard, data, (shardId, at) => {
    totalAt[shardId - firstShard] = at + 1;
  });
  return { firstShard, data, totalAt };
}

/** The total of a shard of an indexed block, or undefined when it has none. */
export function totalInBlock(block: IndexedBlock, shardId: number): bigint | undefined {
  const at = block.totalAt[shardId - block.firstShard]! - 1;
  if (at < 0) return undefined;
  return readTotal(block.firstShard, block.data, at, varintEnd(block.firstShard, block.data, at));
}

/** Visits the totals of the block's shards that `wanted` accepts; the others' totals are skipped, not decoded. */
export function visitBlockTotals(
  firstShard: number,
  data: Uint8Array,
  wanted: (shardId: number) => boolean,
  visit: (shardId: number, total: bigint) => void,
): void {
  scanBlock(firstShard, data, (shardId, totalAt, totalEnd) => {
    if (wanted(shardId)) visit(shardId, readTotal(firstShard, data, totalAt, totalEnd));
  });
}

/**
 * The block's bytes with some shards changed: changes maps shards of the
 * block, in ascending order, to a new total, or to undefined for no total (a
 * dropped shard). Unchanged totals' bytes are copied, not decoded. An empty
 * buffer when no shard is left.
 */
export function mergeBlockBytes(firstShard: number, data: Uint8Array, changes: ReadonlyMap<number, bigint | undefined>): Buffer {
  const changed = [...changes];
  for (let index = 0; index < changed.length; index++) {
    const shardId = changed[index]![0];
    if (blockOf(shardId) !== firstShard || (index > 0 && shardId <= changed[index - 1]![0]))
      throw new ShardLogError(`checkpoint block ${firstShard}: changes out of order or outside it (shard ${shardId})`);
  }
  const out = Buffer.allocUnsafe(data.length + changed.length * 12);
  let at = 0;
  let previous = firstShard - 1;
  let next = 0;
  const writeGap = (shardId: number): void => {
    at = writeUnsigned(out, at, shardId - previous - 1);
    previous = shardId;
  };
  const writeChanged = (shardId: number, total: bigint | undefined): void => {
    if (total === undefined) return;
    writeGap(shardId);
    at = writeTotal(out, at, total);
  };
  scanBlock(firstShard, data, (shardId, totalAt, totalEnd) => {
    // Changes to shards before this one go first, in order.
    while (next < changed.length && changed[next]![0] < shardId) writeChanged(...changed[next++]!);
    if (next < changed.length && changed[next]![0] === shardId) {
      writeChanged(...changed[next++]!);
      return;
    }
    writeGap(shardId);
    out.set(data.subarray(totalAt, totalEnd), at);
    at += totalEnd - totalAt;
  });
  while (next < changed.length) writeChanged(...changed[next++]!);
  return Buffer.from(out.subarray(0, at));
}

export const checkpointBlocksSql = 'SELECT first_shard, data, crc FROM checkpoint_blocks';

/** A stored block's bytes once its checksum holds (ShardLogError when they changed on the disk). */
export function checkedBlock(firstShard: number, data: Buffer, crc: bigint | null): Buffer {
  verifyChecksum(`checkpoint block at shard ${firstShard}`, crc, blockChecksum(firstShard, data));
  return data;
}

/** The file's block rows (or only those of some blocks), in shard order, checked against their checksums. */
export function* blockRowsOf(db: Database.Database, firstShards?: readonly number[]): Generator<[firstShard: number, data: Buffer]> {
  if (firstShards === undefined) {
    for (const [firstShard, data, crc] of rowsOf<[], [bigint, Buffer, bigint | null]>(
      db,
      `${checkpointBlocksSql} ORDER BY first_shard`,
    ).iterate())
      yield [Number(firstShard), checkedBlock(Number(firstShard), data, crc)];
    return;
  }
  for (let from = 0; from < firstShards.length; from += shardIdsPerQueryMax) {
    const chunk = firstShards.slice(from, from + shardIdsPerQueryMax);
    const select = rowsOf<number[], [bigint, Buffer, bigint | null]>(
      db,
      `${checkpointBlocksSql} WHERE first_shard IN (${chunk.map(() => '?').join(',')}) ORDER BY first_shard`,
    );
    for (const [firstShard, data, crc] of select.all(...chunk)) yield [Number(firstShard), checkedBlock(Number(firstShard), data, crc)];
  }
}

/**
 * Checks up to blocksMax blocks after afterFirstShard against their
 * checksums (ShardLogError at the first that fails): how many, and the last
 * one's first shard (count 0 when there were none after it). The scrubber's step.
 */
export function checkBlocksAfter(
  db: Database.Database,
  afterFirstShard: number,
  blocksMax: number,
): { count: number; lastFirstShard: number } {
  const rows = rowsOf<[afterFirstShard: number, blocksMax: number], [bigint, Buffer, bigint | null]>(
    db,
    `${checkpointBlocksSql} WHERE first_shard > ? ORDER BY first_shard LIMIT ?`,
  ).all(afterFirstShard, blocksMax);
  for (const [firstShard, data, crc] of rows) checkBlock(Number(firstShard), checkedBlock(Number(firstShard), data, crc));
  return { count: rows.length, lastFirstShard: rows.length === 0 ? afterFirstShard : Number(rows[rows.length - 1]![0]) };
}

/** The checkpoint's totals of some shards (default: all) from the file's blocks. */
export function checkpointTotalsOf(db: Database.Database, shardIds?: readonly number[]): Map<number, bigint> {
  const totals = new Map<number, bigint>();
  const visit = (shardId: number, total: bigint): void => void totals.set(shardId, total);
  if (shardIds === undefined) {
    for (const [firstShard, data] of blockRowsOf(db)) visitBlockTotals(firstShard, data, () => true, visit);
    return totals;
  }
  const wanted = new Set(shardIds);
  const has = (shardId: number): boolean => wanted.has(shardId);
  for (const [firstShard, data] of blockRowsOf(db, [...new Set(shardIds.map(blockOf))])) visitBlockTotals(firstShard, data, has, visit);
  return totals;
}
