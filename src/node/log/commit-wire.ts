// The replication wire of the log: a commit's records and rows exactly as
// they are stored (same values, same CRC-32), one after another, so a
// follower checks each against its own checksum and writes it verbatim
// instead of decoding and re-encoding entry by entry. The one module that
// writes and reads this layout (AppendEntriesRequest.records in
// proto/shard.proto describes it for other readers). Pieces, little-endian:
//
//   record  u8 1 | first_lsn u64 | last_lsn u64 | epoch u64 | at_ms u64 |
//           crc u32 | data_bytes u32 | data (commit-records.ts)
//   row     u8 2 | crc u32 | the 80 bytes its CRC-32 starts from
//           (checksums.ts rowChecksum: lsn, epoch, shard_id, amount, fence
//           (-1: NULL), at_ms, kind (-1: NULL), member, i64 each; u32 member
//           present, key_bytes, payload_bytes, 0) | key | payload
//
// So a row is checked by running CRC-32 once over its own bytes after the
// crc field: the same function over the same input as rowChecksum. A key or payload is NULL when empty (as
// insertRow stores them).
import zlib from 'node:zlib';
import { ErrorCode, TallyError } from '../../wire/index.ts';
import { visitRecord, type RawRecord } from './records/commit-records.ts';
import { ShardLogError, entryOfRowUnverified, type RawRow, type StoredEntry } from './records/log-entry.ts';

const recordTag = 1;
const rowTag = 2;
const recordHeaderBytes = 1 + 8 * 4 + 4 + 4;
const canonicalBytes = 80;
const rowHeaderBytes = 1 + canonicalBytes + 4;
/** Stands for a NULL fence or kind in the canonical bytes (no stored value is negative there). */
const absent = -1n;

/** A piece as read off the wire: a record or a row, with the lsns it covers. */
export type WirePiece = { record: RawRecord; row?: undefined; entry?: undefined } | { row: RawRow; entry: StoredEntry; record?: undefined };

/** A checked run of pieces: what a follower writes and applies. */
export interface CommitWire {
  pieces: WirePiece[];
  entryCount: number;
  lastLsn: bigint;
  lastEpoch: bigint;
}

/** Appends pieces to one growing buffer; finish() hands out a copy and starts over. */
export class CommitWireWriter {
  private out = Buffer.allocUnsafe(64 * 1024);
  private at = 0;

  get sizeBytes(): number {
    return this.at;
  }

  private room(sizeBytes: number): void {
    if (this.at + sizeBytes <= this.out.length) return;
    const grown = Buffer.allocUnsafe(Math.max(2 * this.out.length, this.at + sizeBytes));
    this.out.copy(grown, 0, 0, this.at);
    this.out = grown;
  }

  record(firstLsn: bigint, lastLsn: bigint, epoch: bigint, atMs: bigint | number, data: Uint8Array, crc: number | bigint): void {
    this.room(recordHeaderBytes + data.length);
    const out = this.out;
    let at = this.at;
    out[at++] = recordTag;
    at = out.writeBigUInt64LE(firstLsn, at);
    at = out.writeBigUInt64LE(lastLsn, at);
    at = out.writeBigUInt64LE(epoch, at);
    at = out.writeBigUInt64LE(BigInt(atMs), at);
    at = out.writeUInt32LE(Number(crc), at);
    at = out.writeUInt32LE(data.length, at);
    out.set(data, at);
    this.at = at + data.length;
  }

  row(
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
    crc: number | bigint,
  ): void {
    // Written as insertRow stores them: an empty key or payload is NULL.
    if (key !== null && key.length === 0) key = null;
    if (payload !== null && payload.length === 0) payload = null;
    const keyBytes = key?.length ?? 0;
    const payloadBytes = payload?.length ?? 0;
    this.room(rowHeaderBytes + keyBytes + payloadBytes);
    const out = this.out;
    let at = this.at;
    out[at++] = rowTag;
    at = out.writeUInt32LE(Number(crc), at);
    // The layout rowChecksum hashes (checksums.ts), field for field.
    at = out.writeBigInt64LE(lsn, at);
    at = out.writeBigInt64LE(epoch, at);
    at = out.writeBigInt64LE(BigInt(shardId), at);
    at = out.writeBigInt64LE(amount, at);
    at = out.writeBigInt64LE(fenceShardCount === null ? absent : BigInt(fenceShardCount), at);
    at = out.writeBigInt64LE(BigInt(atMs), at);
    at = out.writeBigInt64LE(kind === null ? absent : BigInt(kind), at);
    at = out.writeBigInt64LE(member ?? 0n, at);
    at = out.writeUInt32LE(member === null ? 0 : 1, at);
    at = out.writeUInt32LE(keyBytes, at);
    at = out.writeUInt32LE(payloadBytes, at);
    at = out.writeUInt32LE(0, at);
    if (key !== null) at += key.copy(out, at);
    if (payload !== null) at += payload.copy(out, at);
    this.at = at;
  }

  /** A row as SQLite returns it. */
  rawRow(row: RawRow): void {
    const [lsn, epoch, shardId, amount, key, fenceShardCount, atMs, kind, member, payload, crc] = row;
    const start = this.at;
    this.row(lsn, epoch, shardId, amount, key, fenceShardCount, atMs, kind, member, payload, crc ?? 0);
    // Checked as it was read (the same CRC-32 rowChecksum computes, over the bytes just laid out): a row that changed on the disk is never shipped.
    const computed = zlib.crc32(this.out.subarray(start + 5, this.at));
    if (crc === null || Number(crc) !== computed) {
      this.at = start;
      throw new ShardLogError(
        `log entry ${lsn} fails its checksum (stored ${crc === null ? 'none' : Number(crc)}, computed ${computed}): its bytes changed on the disk`,
      );
    }
  }

  /** A copy of what was written since the last finish(). */
  finish(): Buffer {
    const bytes = Buffer.from(this.out.subarray(0, this.at));
    this.at = 0;
    // A buffer grown for one big catch-up read is not kept for ever.
    if (this.out.length > 4 * 1024 * 1024) this.out = Buffer.allocUnsafe(64 * 1024);
    return bytes;
  }
}

function malformed(why: string): TallyError {
  return new TallyError(ErrorCode.invalidArgument, `replicated records are malformed: ${why}`);
}

function damaged(error: unknown): TallyError {
  return new TallyError(ErrorCode.invalidArgument, `replicated records refused: ${(error as Error).message}`);
}

/**
 * The pieces of `data`, which must hold exactly entryCount entries with
 * consecutive lsns from firstLsn, each piece checked as a stored one is (its
 * shape, then its CRC-32). INVALID_ARGUMENT, and nothing returned, for
 * anything else: a truncated or damaged run is refused whole.
 */
export function decodeCommitWire(data: Buffer, firstLsn: bigint, entryCount: number): CommitWire {
  if (!Number.isSafeInteger(entryCount) || entryCount < 0) throw malformed(`entry count ${entryCount}`);
  const pieces: WirePiece[] = [];
  let at = 0;
  let nextLsn = firstLsn;
  let lastEpoch = 0n;
  const need = (sizeBytes: number, what: string): void => {
    if (at + sizeBytes > data.length) throw malformed(`${what} at byte ${at} runs past the ${data.length} bytes`);
  };
  // Bounded: each piece takes at least a header's bytes.
  while (at < data.length) {
    const tag = data[at]!;
    if (tag === recordTag) {
      need(recordHeaderBytes, 'a record header');
      const first = data.readBigUInt64LE(at + 1);
      const last = data.readBigUInt64LE(at + 9);
      const epoch = data.readBigUInt64LE(at + 17);
      const atMs = data.readBigUInt64LE(at + 25);
      const crc = data.readUInt32LE(at + 33);
      const dataBytes = data.readUInt32LE(at + 37);
      at += recordHeaderBytes;
      need(dataBytes, 'a record');
      if (first !== nextLsn) throw malformed(`a record starts at lsn ${first}, expected ${nextLsn}`);
      if (last < first) throw malformed(`a record at lsn ${first} ends at ${last}`);
      const record: RawRecord = [first, last, epoch, atMs, Buffer.from(data.subarray(at, at + dataBytes)), BigInt(crc)];
      at += dataBytes;
      try {
        visitRecord(record, noVisit);
      } catch (error) {
        throw damaged(error);
      }
      pieces.push({ record });
      nextLsn = last + 1n;
      lastEpoch = epoch;
    } else if (tag === rowTag) {
      need(rowHeaderBytes, 'a row header');
      const crc = data.readUInt32LE(at + 1);
      const canonicalAt = at + 5;
      const lsn = data.readBigInt64LE(canonicalAt);
      const keyBytes = data.readUInt32LE(canonicalAt + 68);
      const payloadBytes = data.readUInt32LE(canonicalAt + 72);
      at += rowHeaderBytes;
      need(keyBytes + payloadBytes, 'a row');
      if (lsn !== nextLsn) throw malformed(`a row at lsn ${lsn}, expected ${nextLsn}`);
      // Checked over the bytes themselves (one run: canonical fields, key, payload), before anything is read out of them.
      const computed = zlib.crc32(data.subarray(canonicalAt, at + keyBytes + payloadBytes));
      if (computed !== crc) throw damaged(new ShardLogError(`log entry ${lsn} fails its checksum (sent ${crc}, computed ${computed})`));
      const memberPresent = data.readUInt32LE(canonicalAt + 64);
      if (memberPresent > 1 || data.readUInt32LE(canonicalAt + 76) !== 0) throw malformed(`a row at lsn ${lsn} has a bad header`);
      const fence = data.readBigInt64LE(canonicalAt + 32);
      const kind = data.readBigInt64LE(canonicalAt + 48);
      const member = data.readBigInt64LE(canonicalAt + 56);
      const key = keyBytes > 0 ? copyOf(data, at, keyBytes) : null;
      at += keyBytes;
      const payload = payloadBytes > 0 ? copyOf(data, at, payloadBytes) : null;
      at += payloadBytes;
      const row: RawRow = [
        lsn,
        data.readBigInt64LE(canonicalAt + 8),
        data.readBigInt64LE(canonicalAt + 16),
        data.readBigInt64LE(canonicalAt + 24),
        key,
        fence === absent ? null : fence,
        data.readBigInt64LE(canonicalAt + 40),
        kind === absent ? null : kind,
        memberPresent === 1 ? member : null,
        payload,
        BigInt(crc),
      ];
      let entry: StoredEntry;
      try {
        // The shape (the checksum held above).
        entry = entryOfRowUnverified(row);
      } catch (error) {
        throw damaged(error);
      }
      pieces.push({ row, entry });
      nextLsn = lsn + 1n;
      lastEpoch = row[1];
    } else {
      throw malformed(`unknown piece tag ${tag} at byte ${at}`);
    }
  }
  const decodedCount = nextLsn - firstLsn;
  if (decodedCount !== BigInt(entryCount)) throw malformed(`${decodedCount} entries where the frame says ${entryCount}`);
  return { pieces, entryCount, lastLsn: nextLsn - 1n, lastEpoch };
}

function noVisit(): void {}

/** A copy of data[at, at + sizeBytes): the entry outlives the frame's buffer (the dedup index keeps keys). */
function copyOf(data: Buffer, at: number, sizeBytes: number): Buffer {
  const copy = Buffer.allocUnsafe(sizeBytes);
  data.copy(copy, 0, at, at + sizeBytes);
  return copy;
}

/**
 * Where in `data` (well formed: written by CommitWireWriter) the piece that
 * starts at lsn begins, or -1 when no piece starts there (lsn inside a
 * record, or past the end). Reads only the pieces' headers.
 */
export function pieceOffsetOf(data: Buffer, lsn: bigint): number {
  let at = 0;
  // Bounded: each step moves past one piece.
  while (at + 1 + 8 <= data.length) {
    const tag = data[at]!;
    if (tag === recordTag) {
      if (data.readBigUInt64LE(at + 1) === lsn) return at;
      at += recordHeaderBytes + data.readUInt32LE(at + 37);
    } else if (tag === rowTag) {
      if (data.readBigInt64LE(at + 5) === lsn) return at;
      at += rowHeaderBytes + data.readUInt32LE(at + 5 + 68) + data.readUInt32LE(at + 5 + 72);
    } else {
      return -1;
    }
  }
  return -1;
}

/** The entries of checked pieces, in lsn order (for a peer that takes entry columns, and for tests). */
export function entriesOfWire(wire: CommitWire): StoredEntry[] {
  const entries: StoredEntry[] = [];
  for (const piece of wire.pieces) {
    if (piece.entry !== undefined) {
      entries.push(piece.entry);
      continue;
    }
    const [firstLsn, , epoch, atMs] = piece.record;
    let lsn = firstLsn;
    visitRecord(
      piece.record,
      (shardId, amount) => {
        entries.push({ lsn: lsn++, epoch, shardId, amount, idempotencyKey: emptyKey, fenceShardCount: 0, atMs: Number(atMs) });
      },
      false,
    );
  }
  return entries;
}

const emptyKey = Buffer.alloc(0);
