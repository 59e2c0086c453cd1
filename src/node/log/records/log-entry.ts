// The log's entry codec: what an entry may hold (checked before a write and
// again after a read) and how it maps to and from a row of the log table.
// Pure: it opens no database and keeps no state; the store runs the SQL.
import assert from 'node:assert/strict';
import { INT64_MAX, INT64_MIN, UINT64_MAX } from '../../../wire/index.ts';
import { decodeComponent, decodePackedComponents } from '../../../wire/internal/index.ts';
import { unpackRegisterChanges } from '../../../sketch/index.ts';
import { validateWindowConfig } from '../../../window/index.ts';
import { rowChecksum, verifyChecksum } from '../checksums.ts';
import { ShardLogError } from './log-error.ts';

/** What a log row records. Every kind but regionComponents changes at most one shard (the row's). */
export const EntryKind = {
  /** amount added to the shard total (or, with amount 0, a key fence). */
  increment: 0,
  /** A membership flip: member added (amount +1) or removed (-1); the total is the member count. */
  memberFlip: 1,
  /** HyperLogLog registers raised: payload holds the packed (index, rank) changes. */
  distinct: 2,
  /** The shard's window settings from here on: payload holds bucketMs and retentionMs. */
  windowConfig: 3,
  /**
   * The shard's counter was deleted: every kind of its state is freed and a
   * tombstone (the entry's commit time) kept, so an increment routed before
   * the delete is refused rather than bringing the shard back.
   */
  drop: 4,
  /**
   * The shard's counter was cleared: every kind of its state is emptied (a
   * window keeps its setting) and the shard moves to the generation in the
   * payload (8 bytes, big-endian, at least 1).
   */
  clear: 5,
  /**
   * A keyed increment sent before a clear the shard had already seen: it is
   * cleared away (the total is unchanged) but its key is recorded as
   * applied, so a retry across the clear counts at most once.
   */
  clearedKey: 6,
  /**
   * A peer region's component of the shard's counter (payload: one
   * region-component record): a max-register per origin region, so it
   * applies only when its version is newer than the one held.
   */
  regionComponent: 7,
  /**
   * Peer regions' components of many shards' counters (payload: a packed
   * component entry, src/wire/internal/packed-components.ts), each row applied
   * as a regionComponent entry of its shard. The row's shard is the first
   * row's; entryShardIds names every shard it changes.
   */
  regionComponents: 8,
} as const;
export type EntryKind = (typeof EntryKind)[keyof typeof EntryKind];

export interface LogEntry {
  shardId: number;
  /** 0 only for a key fence: a row that records a key without changing the total. */
  amount: bigint;
  /** Empty when the increment had no idempotency key. */
  idempotencyKey: Buffer;
  /**
   * 0 for an increment. For a key fence: the counter's shard count when the
   * fence was set; attempts of the key routed with fewer shards may no longer
   * apply at this shard.
   */
  fenceShardCount: number;
  /** Default increment. */
  kind?: EntryKind;
  /** memberFlip only: the member, 0..2^64-1. */
  member?: bigint;
  /** distinct and windowConfig only. */
  payload?: Buffer;
}

/** An entry as stored: with its sequence number and the epoch that wrote it. */
export interface StoredEntry extends LogEntry {
  lsn: bigint;
  epoch: bigint;
  atMs: number;
}

export { ShardLogError };

/** Why an entry is malformed, or undefined when it is fine. Checked before a write and after a read. */
export function entryProblem(entry: LogEntry & { atMs?: number }): string | undefined {
  const kind = entry.kind ?? EntryKind.increment;
  if (!Number.isSafeInteger(entry.shardId) || entry.shardId <= 0) return 'shard id invalid';
  if (entry.atMs !== undefined && (!Number.isSafeInteger(entry.atMs) || entry.atMs < 0)) return 'commit time invalid';
  if (entry.amount > INT64_MAX || entry.amount < INT64_MIN) return 'amount out of range';
  const keyed = entry.idempotencyKey.length > 0;
  switch (kind) {
    case EntryKind.increment:
      if (entry.member !== undefined || (entry.payload?.length ?? 0) > 0) return 'an increment carries no member or payload';
      if (entry.fenceShardCount !== 0 && (entry.amount !== 0n || !keyed)) return 'a key fence carries a key and no amount';
      if (entry.amount === 0n && entry.fenceShardCount === 0) return 'a zero-amount increment must be a key fence';
      return undefined;
    case EntryKind.memberFlip:
      if (entry.amount !== 1n && entry.amount !== -1n) return 'a member flip changes the count by exactly one';
      if (entry.member === undefined || entry.member < 0n || entry.member > UINT64_MAX) return 'a member flip needs a member in 0..2^64-1';
      return keyed || entry.fenceShardCount !== 0 ? 'a member flip carries no key' : undefined;
    case EntryKind.distinct:
      if (entry.amount !== 0n || keyed || entry.fenceShardCount !== 0) return 'a distinct entry has no amount or key';
      if (entry.payload === undefined || entry.payload.length === 0) return 'a distinct entry needs packed register changes';
      try {
        // Fully decoded here, so applying it cannot fail after it is written.
        unpackRegisterChanges(entry.payload);
      } catch (error) {
        return `bad register changes: ${(error as Error).message}`;
      }
      return undefined;
    case EntryKind.drop:
      if (entry.amount !== 0n || keyed || entry.fenceShardCount !== 0 || entry.member !== undefined || (entry.payload?.length ?? 0) > 0)
        return 'a drop carries no amount, key, member or payload';
      return undefined;
    case EntryKind.clear:
      if (entry.amount !== 0n || keyed || entry.fenceShardCount !== 0 || entry.member !== undefined)
        return 'a clear carries no amount, key or member';
      if (entry.payload?.length !== 8 || decodeGeneration(entry.payload) < 1) return 'a clear needs its generation (8 bytes, at least 1)';
      return undefined;
    case EntryKind.clearedKey:
      if (entry.amount !== 0n || !keyed || entry.fenceShardCount !== 0 || entry.member !== undefined || (entry.payload?.length ?? 0) > 0)
        return 'a cleared-away key carries a key and nothing else';
      return undefined;
    case EntryKind.regionComponent:
      if (entry.amount !== 0n || keyed || entry.fenceShardCount !== 0 || entry.member !== undefined)
        return 'a region component carries no amount, key or member';
      try {
        decodeComponent(entry.payload ?? Buffer.alloc(0));
      } catch (error) {
        return `bad region component: ${(error as Error).message}`;
      }
      return undefined;
    case EntryKind.regionComponents: {
      if (entry.amount !== 0n || keyed || entry.fenceShardCount !== 0 || entry.member !== undefined)
        return 'region components carry no amount, key or member';
      try {
        const rows = decodePackedComponents(entry.payload ?? Buffer.alloc(0));
        if (rows[0]!.shardId !== entry.shardId)
          return `a packed component entry on shard ${entry.shardId} starts with shard ${rows[0]!.shardId}`;
      } catch (error) {
        return `bad region components: ${(error as Error).message}`;
      }
      return undefined;
    }
    case EntryKind.windowConfig: {
      if (entry.amount !== 0n || keyed || entry.fenceShardCount !== 0) return 'a window setting has no amount or key';
      if (entry.payload?.length !== 16) return 'a window setting needs 16 bytes';
      const problem = validateWindowConfig(Number(entry.payload.readBigUInt64BE(0)), Number(entry.payload.readBigUInt64BE(8)));
      return problem === undefined ? undefined : `bad window setting: ${problem}`;
    }
    default:
      return `unknown kind ${String(kind)}`;
  }
}

/**
 * The rows an entry carries: a packed component entry's count (checked when
 * it was written and read), 1 for every other kind. What a slice of the log
 * costs to fold grows with rows, not entries.
 */
export function entryRowCount(entry: LogEntry): number {
  return entry.kind === EntryKind.regionComponents ? entry.payload!.readUInt32BE(1) : 1;
}

/** The shards some entries change, in first-seen order: each entry's own, and every row's of a packed component entry. */
export function entryShardIds(entries: readonly LogEntry[]): number[] {
  const shardIds = new Set<number>();
  for (const entry of entries) {
    if (entry.kind !== EntryKind.regionComponents) shardIds.add(entry.shardId);
    else for (const row of decodePackedComponents(entry.payload!)) shardIds.add(row.shardId);
  }
  return [...shardIds];
}

/** The write side of the paired check: an entry that fails it is a bug in the caller, never written. */
export function checkEntry(entry: LogEntry): void {
  const problem = entryProblem(entry);
  assert.ok(problem === undefined, `log entry invalid: ${problem}`);
}

/** Row values for the kind, member and payload columns (NULL for a plain increment). */
export function extraColumns(entry: LogEntry): [number | null, bigint | null, Buffer | null] {
  const kind = entry.kind ?? EntryKind.increment;
  return [
    kind === EntryKind.increment ? null : kind,
    entry.member === undefined ? null : BigInt.asIntN(64, entry.member),
    entry.payload === undefined || entry.payload.length === 0 ? null : entry.payload,
  ];
}

/** A log row as read with safe integers in raw mode, in the order of rowColumns. */
export type RawRow = [
  lsn: bigint,
  epoch: bigint,
  shardId: bigint,
  amount: bigint,
  key: Buffer | null,
  fenceShardCount: bigint | null,
  atMs: bigint,
  kind: bigint | null,
  member: bigint | null,
  payload: Buffer | null,
  crc: bigint | null,
];
export const rowColumns = 'lsn, epoch, shard_id, amount, idem_key, fence_shard_count, at_ms, kind, member, payload, crc';

/**
 * A stored row as an entry, checked: a row whose checksum fails (its bytes
 * changed on the disk) or that could not have been written fails the read.
 */
export function entryOfRow(row: RawRow): StoredEntry {
  const entry = entryOfRowUnverified(row);
  const [lsn, epoch, shardId, amount, key, fenceShardCount, atMs, kind, member, payload, crc] = row;
  // After the shape: a row no writer could make says what is wrong with it; one that merely moved, that it moved.
  verifyChecksum(`log entry ${lsn}`, crc, rowChecksum(lsn, epoch, shardId, amount, key, fenceShardCount, atMs, kind, member, payload));
  return entry;
}

/**
 * A row as an entry, its shape checked but not its checksum: only for a row
 * whose bytes were already checked against it (a replicated row, whose
 * CRC-32 the wire runs over the very bytes it hashes).
 */
export function entryOfRowUnverified(row: RawRow): StoredEntry {
  const [lsn, epoch, shardId, amount, key, fenceShardCount, atMs, kind, member, payload] = row;
  const entry: StoredEntry = {
    lsn,
    epoch,
    shardId: shardId > BigInt(Number.MAX_SAFE_INTEGER) || shardId <= 0n ? -1 : Number(shardId),
    amount,
    idempotencyKey: key ?? Buffer.alloc(0),
    fenceShardCount: Number(fenceShardCount ?? 0n),
    atMs: Number(atMs),
  };
  // A plain increment row stays a plain object: no kind, member or payload.
  if (kind !== null) entry.kind = Number(kind) as EntryKind;
  if (member !== null) entry.member = BigInt.asUintN(64, member);
  if (payload !== null) entry.payload = payload;
  const problem = entryProblem(entry);
  if (problem !== undefined) throw new ShardLogError(`log entry ${lsn} is invalid (shard ${shardId}, amount ${amount}): ${problem}`);
  return entry;
}

/**
 * The checkpoint part holding a dropped shard's tombstone: the drop's commit
 * time, 8 bytes big-endian, so SQL compares two of them as blobs in time order.
 */
export const droppedPart = 'dropped';

export function encodeDroppedAt(atMs: number): Buffer {
  const data = Buffer.alloc(8);
  data.writeBigUInt64BE(BigInt(atMs));
  return data;
}

export function decodeDroppedAt(data: Buffer): number {
  assert.equal(data.length, 8, 'a tombstone is 8 bytes');
  return Number(data.readBigUInt64BE(0));
}

/** A clear entry's payload: the generation, 8 bytes big-endian. */
export function encodeGeneration(generation: number): Buffer {
  assert.ok(Number.isSafeInteger(generation) && generation >= 1, `generation ${generation} is not a positive integer`);
  const data = Buffer.alloc(8);
  data.writeBigUInt64BE(BigInt(generation));
  return data;
}

/** 0 for anything but 8 bytes holding a safe integer (entryProblem then refuses it). */
export function decodeGeneration(data: Buffer): number {
  if (data.length !== 8) return 0;
  const generation = data.readBigUInt64BE(0);
  return generation > BigInt(Number.MAX_SAFE_INTEGER) ? 0 : Number(generation);
}
