// The columnar form of replicated log entries: AppendEntriesRequest.columns,
// laid out as proto/shard.proto describes (the one place the format is
// defined). Pure: encodes and decodes, allocates one buffer per call and no
// message object per entry. A malformed block is refused whole.
import assert from 'node:assert/strict';
import { ErrorCode, TallyError } from '../../../wire/index.ts';
import { EntryKind, entryProblem, type StoredEntry } from './log-entry.ts';

/** Fixed bytes per entry: shard id (f64), amount (i64), epoch (u64), commit time (f64), flags (u8). */
const fixedBytesPerEntry = 8 + 8 + 8 + 8 + 1;
const kindMask = 0x0f;
const hasKey = 0x10;
const hasFence = 0x20;
const hasMember = 0x40;
const hasPayload = 0x80;

/** Bytes the columns of these entries take. */
export function columnsBytes(entries: readonly StoredEntry[]): number {
  let sizeBytes = fixedBytesPerEntry * entries.length;
  for (const entry of entries) sizeBytes += extraBytes(entry);
  return sizeBytes;
}

function extraBytes(entry: StoredEntry): number {
  let sizeBytes = 0;
  if (entry.idempotencyKey.length > 0) sizeBytes += 2 + entry.idempotencyKey.length;
  if (entry.fenceShardCount !== 0) sizeBytes += 4;
  if (entry.member !== undefined) sizeBytes += 8;
  if (entry.payload !== undefined && entry.payload.length > 0) sizeBytes += 4 + entry.payload.length;
  return sizeBytes;
}

/** Entries with consecutive lsns, as columns. */
export function encodeEntryColumns(entries: readonly StoredEntry[]): Buffer {
  const count = entries.length;
  const data = Buffer.allocUnsafe(columnsBytes(entries));
  const amountsAt = 8 * count;
  const epochsAt = 16 * count;
  const atMsAt = 24 * count;
  const flagsAt = 32 * count;
  let extraAt = 33 * count;
  for (let index = 0; index < count; index++) {
    const entry = entries[index]!;
    assert.ok(index === 0 || entry.lsn === entries[index - 1]!.lsn + 1n, 'replicated entries have consecutive lsns');
    data.writeDoubleLE(entry.shardId, 8 * index);
    data.writeBigInt64LE(entry.amount, amountsAt + 8 * index);
    data.writeBigUInt64LE(entry.epoch, epochsAt + 8 * index);
    data.writeDoubleLE(entry.atMs, atMsAt + 8 * index);
    let flags: number = entry.kind ?? EntryKind.increment;
    if (entry.idempotencyKey.length > 0) {
      flags |= hasKey;
      extraAt = data.writeUInt16LE(entry.idempotencyKey.length, extraAt);
      extraAt += entry.idempotencyKey.copy(data, extraAt);
    }
    if (entry.fenceShardCount !== 0) {
      flags |= hasFence;
      extraAt = data.writeUInt32LE(entry.fenceShardCount, extraAt);
    }
    if (entry.member !== undefined) {
      flags |= hasMember;
      extraAt = data.writeBigUInt64LE(entry.member, extraAt);
    }
    if (entry.payload !== undefined && entry.payload.length > 0) {
      flags |= hasPayload;
      extraAt = data.writeUInt32LE(entry.payload.length, extraAt);
      extraAt += entry.payload.copy(data, extraAt);
    }
    data.writeUInt8(flags, flagsAt + index);
  }
  assert.equal(extraAt, data.length, 'entry columns fill their buffer exactly');
  return data;
}

function malformed(why: string): TallyError {
  return new TallyError(ErrorCode.invalidArgument, `replicated entry columns are malformed: ${why}`);
}

/** The entries of a block, firstLsn on, each checked like a stored row; INVALID_ARGUMENT when any is not. */
export function decodeEntryColumns(firstLsn: bigint, count: number, data: Buffer): StoredEntry[] {
  if (!Number.isSafeInteger(count) || count < 0 || fixedBytesPerEntry * count > data.length)
    throw malformed(`${count} entries in ${data.length} bytes`);
  const entries: StoredEntry[] = new Array<StoredEntry>(count);
  const amountsAt = 8 * count;
  const epochsAt = 16 * count;
  const atMsAt = 24 * count;
  const flagsAt = 32 * count;
  let extraAt = 33 * count;
  const need = (sizeBytes: number): void => {
    if (extraAt + sizeBytes > data.length) throw malformed(`entry data runs past the block's ${data.length} bytes`);
  };
  let epoch = 0n;
  let epochLow = -1;
  let epochHigh = -1;
  let lsn = firstLsn;
  for (let index = 0; index < count; index++, lsn++) {
    // Runs of one epoch share one bigint.
    const low = data.readUInt32LE(epochsAt + 8 * index);
    const high = data.readUInt32LE(epochsAt + 8 * index + 4);
    if (low !== epochLow || high !== epochHigh) {
      epoch = data.readBigUInt64LE(epochsAt + 8 * index);
      epochLow = low;
      epochHigh = high;
    }
    const flags = data.readUInt8(flagsAt + index);
    const entry: StoredEntry = {
      lsn,
      epoch,
      shardId: data.readDoubleLE(8 * index),
      amount: data.readBigInt64LE(amountsAt + 8 * index),
      idempotencyKey: emptyKey,
      fenceShardCount: 0,
      atMs: data.readDoubleLE(atMsAt + 8 * index),
    };
    const kind = (flags & kindMask) as EntryKind;
    if (kind !== EntryKind.increment) entry.kind = kind;
    if ((flags & hasKey) !== 0) {
      need(2);
      const keyBytes = data.readUInt16LE(extraAt);
      extraAt += 2;
      need(keyBytes);
      // A copy: the entry outlives the request's buffer (the dedup index keeps keys).
      entry.idempotencyKey = Buffer.from(data.subarray(extraAt, extraAt + keyBytes));
      extraAt += keyBytes;
    }
    if ((flags & hasFence) !== 0) {
      need(4);
      entry.fenceShardCount = data.readUInt32LE(extraAt);
      extraAt += 4;
    }
    if ((flags & hasMember) !== 0) {
      need(8);
      entry.member = data.readBigUInt64LE(extraAt);
      extraAt += 8;
    }
    if ((flags & hasPayload) !== 0) {
      need(4);
      const payloadBytes = data.readUInt32LE(extraAt);
      extraAt += 4;
      need(payloadBytes);
      entry.payload = Buffer.from(data.subarray(extraAt, extraAt + payloadBytes));
      extraAt += payloadBytes;
    }
    const problem = entryProblem(entry);
    if (problem !== undefined) throw new TallyError(ErrorCode.invalidArgument, `replicated entry ${lsn} is invalid: ${problem}`);
    entries[index] = entry;
  }
  if (extraAt !== data.length) throw malformed(`${data.length - extraAt} bytes left after ${count} entries`);
  return entries;
}

const emptyKey = Buffer.alloc(0);
