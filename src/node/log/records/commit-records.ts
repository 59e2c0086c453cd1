// Commit records (schema 8): a run of consecutive plain increments of one
// commit stored as one row of the records table, shard ids and amounts packed
// as zigzag varints, instead of a log row each. This file encodes, decodes and
// reads them merged with the log table's rows, in lsn order, as the same
// StoredEntry objects a row gives; ShardLog writes. It never reads keyed or
// other-kind entries from a record: those stay log rows.
import type Database from 'better-sqlite3';
import { INT64_MAX, INT64_MIN } from '../../../wire/index.ts';
import {
  EntryKind,
  ShardLogError,
  entryOfRow,
  entryProblem,
  rowColumns,
  type LogEntry,
  type RawRow,
  type StoredEntry,
} from './log-entry.ts';
import { rowsOf } from '../log-statements.ts';
import { writeZigzag } from './varint.ts';
import { recordChecksum, verifyChecksum } from '../checksums.ts';

/** Where wireAfter writes (a CommitWireWriter): declared here so this file does not import the wire's. */
export interface CommitWireSink {
  readonly sizeBytes: number;
  record(firstLsn: bigint, lastLsn: bigint, epoch: bigint, atMs: bigint | number, data: Uint8Array, crc: number | bigint): void;
  rawRow(row: RawRow): void;
}

function noVisit(): void {}

/** A row's bytes on the replication wire, at least (commit-wire.ts: 85 of header). */
const rowWireBytesMin = 85;
/** A record's header on the replication wire, at most (commit-wire.ts). */
const recordWireOverheadBytes = 64;

/** A records row as read with safe integers in raw mode. */
export type RawRecord = [firstLsn: bigint, lastLsn: bigint, epoch: bigint, atMs: bigint, data: Buffer, crc: bigint | null];
const recordColumns = 'first_lsn, last_lsn, epoch, at_ms, data, crc';

/**
 * An entry a record can hold: an unkeyed increment with no fence, member or
 * payload (its amount is then never 0: checkEntry refuses that). Everything
 * else is a log row, so keys, their index and dedup never look at records.
 */
export function isPlainEntry(entry: LogEntry): boolean {
  return (
    (entry.kind ?? EntryKind.increment) === EntryKind.increment &&
    entry.idempotencyKey.length === 0 &&
    entry.fenceShardCount === 0 &&
    entry.member === undefined &&
    (entry.payload?.length ?? 0) === 0
  );
}

/** A run of a commit's plain entries shorter than this stays log rows: one entry is as small as a row. */
export const recordEntriesMin = 2;

/** Bytes an entry takes at most: a shard id delta (< 2^54 zigzagged, 8 bytes) and an amount (10). */
const entryBytesMax = 18;
const recordEntryBytesMax = entryBytesMax;

/** Packs entries[from, to) (all plain, checked by the caller) as a record's data. */
export function encodeRecord(entries: readonly LogEntry[], from: number, to: number): Buffer {
  const out = Buffer.allocUnsafe((to - from) * entryBytesMax);
  let at = 0;
  let previous = 0;
  for (let index = from; index < to; index++) {
    const { shardId, amount } = entries[index]!;
    // The write side of the paired check: decodeRecord accepts what is written here.
    if (!Number.isSafeInteger(shardId) || shardId <= 0 || amount === 0n || amount > INT64_MAX || amount < INT64_MIN)
      throw new ShardLogError(`a record cannot hold shard ${shardId} amount ${amount}`);
    at = writeZigzag(out, at, shardId - previous);
    previous = shardId;
    at = writeZigzag(out, at, amount);
  }
  return Buffer.from(out.subarray(0, at));
}

function badRecord(firstLsn: bigint, why: string): ShardLogError {
  return new ShardLogError(`log record at lsn ${firstLsn} is invalid: ${why}`);
}

/**
 * The zigzagged varint at data[at]: [value, end]. A number while it fits in
 * 7 bytes (49 bits), a bigint past that; throws for one that runs off the
 * data or past 10 bytes.
 */
function readSigned(firstLsn: bigint, data: Uint8Array, at: number): [number | bigint, number] {
  let end = at;
  while (true) {
    if (end >= data.length) throw badRecord(firstLsn, 'a varint runs off its end');
    if (end - at >= 10) throw badRecord(firstLsn, 'a varint is longer than 10 bytes');
    if (data[end++]! < 0x80) break;
  }
  if (end - at <= 7) {
    let zigzag = 0;
    for (let index = end - 1; index >= at; index--) zigzag = zigzag * 0x80 + (data[index]! & 0x7f);
    return [zigzag % 2 === 0 ? zigzag / 2 : -(zigzag + 1) / 2, end];
  }
  let big = 0n;
  for (let index = end - 1; index >= at; index--) big = (big << 7n) | BigInt(data[index]! & 0x7f);
  return [(big & 1n) === 0n ? big >> 1n : -((big + 1n) >> 1n), end];
}

/** The key of every decoded entry: none. Shared: an empty buffer has no byte to change, and a fold decodes thousands of entries. */
const noKey = Buffer.alloc(0);

/**
 * A record's entries, checked: exactly lastLsn - firstLsn + 1 of them, each
 * an entry append could have written (the read side of the paired check),
 * and the record's checksum holds. Throws ShardLogError for anything else.
 */
export function decodeRecord(record: RawRecord): StoredEntry[] {
  const [firstLsn, lastLsn, epoch, atMsBig, data, crc] = record;
  const count = lastLsn - firstLsn + 1n;
  if (firstLsn <= 0n || count <= 0n) throw badRecord(firstLsn, `it ends at lsn ${lastLsn}`);
  // Two bytes an entry at least: a count the data cannot hold is damage, not an allocation.
  if (count > BigInt(data.length)) throw badRecord(firstLsn, `${count} entries in ${data.length} bytes`);
  if (epoch < 0n || atMsBig < 0n || atMsBig > BigInt(Number.MAX_SAFE_INTEGER)) throw badRecord(firstLsn, `epoch ${epoch}, at ${atMsBig}`);
  const atMs = Number(atMsBig);
  const entries: StoredEntry[] = new Array<StoredEntry>(Number(count));
  let at = 0;
  let shardId = 0;
  for (let index = 0; index < entries.length; index++) {
    const [delta, afterDelta] = readSigned(firstLsn, data, at);
    const [amount, afterAmount] = readSigned(firstLsn, data, afterDelta);
    at = afterAmount;
    const next = typeof delta === 'number' ? shardId + delta : Number(BigInt(shardId) + delta);
    shardId = Number.isSafeInteger(next) ? next : -1;
    const entry: StoredEntry = {
      lsn: firstLsn + BigInt(index),
      epoch,
      shardId,
      amount: BigInt(amount),
      idempotencyKey: noKey,
      fenceShardCount: 0,
      atMs,
    };
    const problem = entryProblem(entry);
    if (problem !== undefined) throw badRecord(firstLsn, `entry ${entry.lsn} (shard ${shardId}, amount ${amount}): ${problem}`);
    entries[index] = entry;
  }
  if (at !== data.length) throw badRecord(firstLsn, `${data.length - at} bytes after its ${count} entries`);
  verifyChecksum(`log record at lsn ${firstLsn}`, crc, recordChecksum(firstLsn, lastLsn, epoch, atMsBig, data));
  return entries;
}

/**
 * Calls visit with each of a record's entries (shard id, amount), in lsn
 * order, after checking them as decodeRecord does, without an object per
 * entry: the follower applies a replicated record this way. With checked
 * (the default) the record's checksum is verified first, so nothing is
 * visited in a record whose bytes changed. Throws ShardLogError.
 */
export function visitRecord(record: RawRecord, visit: (shardId: number, amount: bigint) => void, checked = true): void {
  const [firstLsn, lastLsn, epoch, atMsBig, data, crc] = record;
  const count = lastLsn - firstLsn + 1n;
  if (firstLsn <= 0n || count <= 0n) throw badRecord(firstLsn, `it ends at lsn ${lastLsn}`);
  if (count > BigInt(data.length)) throw badRecord(firstLsn, `${count} entries in ${data.length} bytes`);
  if (epoch < 0n || atMsBig < 0n || atMsBig > BigInt(Number.MAX_SAFE_INTEGER)) throw badRecord(firstLsn, `epoch ${epoch}, at ${atMsBig}`);
  if (checked) verifyChecksum(`log record at lsn ${firstLsn}`, crc, recordChecksum(firstLsn, lastLsn, epoch, atMsBig, data));
  const entryCount = Number(count);
  let at = 0;
  let shardId = 0;
  for (let index = 0; index < entryCount; index++) {
    const [delta, afterDelta] = readSigned(firstLsn, data, at);
    const [amount, afterAmount] = readSigned(firstLsn, data, afterDelta);
    at = afterAmount;
    const next = typeof delta === 'number' ? shardId + delta : Number(BigInt(shardId) + delta);
    shardId = Number.isSafeInteger(next) ? next : -1;
    const big = BigInt(amount);
    // What entryProblem asks of a plain increment.
    if (shardId <= 0 || big === 0n || big > INT64_MAX || big < INT64_MIN)
      throw badRecord(firstLsn, `entry ${firstLsn + BigInt(index)} (shard ${shardId}, amount ${amount}) is not a plain increment`);
    visit(shardId, big);
  }
  if (at !== data.length) throw badRecord(firstLsn, `${data.length - at} bytes after its ${count} entries`);
}

/** The record holding lsn, if one does: the last to start at or before it (rowid order, no index). */
const recordAtSql = `SELECT ${recordColumns} FROM records WHERE first_lsn <= ? ORDER BY first_lsn DESC LIMIT 1`;

/**
 * Reads the log table and the records table as one sequence of entries.
 * Prepared once per connection (the store's, or a view's).
 */
export class MergedReader {
  private readonly selectRows: Database.Statement<[afterLsn: bigint, uptoLsn: bigint, rowsMax: number], RawRow>;
  private readonly selectRecords: Database.Statement<[fromLsn: bigint, afterLsn: bigint, uptoLsn: bigint], RawRecord>;
  private readonly selectRecordAt: Database.Statement<[lsn: bigint], RawRecord>;
  private readonly selectLastRecord: Database.Statement<[], RawRecord>;
  private readonly selectLastRow: Database.Statement<[], [lsn: bigint, epoch: bigint, atMs: bigint]>;

  constructor(db: Database.Database) {
    this.selectRows = rowsOf(db, `SELECT ${rowColumns} FROM log WHERE lsn > ? AND lsn <= ? ORDER BY lsn LIMIT ?`);
    // From the record holding the first lsn wanted (if any) on: a rowid range.
    this.selectRecords = rowsOf(
      db,
      `SELECT ${recordColumns} FROM records WHERE first_lsn >= coalesce((SELECT first_lsn FROM records WHERE first_lsn <= ? ORDER BY first_lsn DESC LIMIT 1), 0) AND last_lsn > ? AND first_lsn <= ? ORDER BY first_lsn`,
    );
    this.selectRecordAt = rowsOf(db, recordAtSql);
    this.selectLastRecord = rowsOf(db, `SELECT ${recordColumns} FROM records ORDER BY first_lsn DESC LIMIT 1`);
    this.selectLastRow = rowsOf(db, 'SELECT lsn, epoch, at_ms FROM log ORDER BY lsn DESC LIMIT 1');
  }

  /**
   * Up to rowsMax entries after afterLsn up to uptoLsn, rows and records
   * merged in lsn order (a record straddling afterLsn gives only its entries
   * after it). Throws ShardLogError when two of them claim one lsn. Gaps are
   * the caller's to check.
   */
  entriesAfter(afterLsn: bigint, uptoLsn: bigint, rowsMax: number): StoredEntry[] {
    const entries: StoredEntry[] = [];
    if (rowsMax <= 0 || uptoLsn <= afterLsn) return entries;
    // Read before the records are iterated; never more than the merge can use.
    const rows = this.selectRows.all(afterLsn, uptoLsn, rowsMax);
    let rowIndex = 0;
    let lastLsn = afterLsn;
    const push = (entry: StoredEntry): void => {
      if (entry.lsn <= lastLsn) throw new ShardLogError(`log holds lsn ${entry.lsn} twice (or out of order, after ${lastLsn})`);
      lastLsn = entry.lsn;
      entries.push(entry);
    };
    for (const record of this.selectRecords.iterate(afterLsn + 1n, afterLsn, uptoLsn)) {
      while (rowIndex < rows.length && rows[rowIndex]![0] < record[0] && entries.length < rowsMax) push(entryOfRow(rows[rowIndex++]!));
      if (entries.length >= rowsMax) break;
      for (const entry of decodeRecord(record)) {
        if (entry.lsn <= afterLsn) continue;
        if (entry.lsn > uptoLsn || entries.length >= rowsMax) break;
        push(entry);
      }
      if (rowIndex < rows.length && rows[rowIndex]![0] <= record[1])
        throw new ShardLogError(`log holds lsn ${rows[rowIndex]![0]} both as a row and in the record at ${record[0]}`);
      if (entries.length >= rowsMax) break;
    }
    while (rowIndex < rows.length && entries.length < rowsMax) push(entryOfRow(rows[rowIndex++]!));
    return entries;
  }

  /**
   * Writes the pieces after afterLsn to `wire` as they are stored (each
   * checked first), a whole record or row at a time, until entriesMax
   * entries or bytesMax bytes are reached (at least one piece). A record
   * straddling afterLsn is cut: its entries after it go as a record of their
   * own with its own checksum. Throws ShardLogError on damage, on a gap, or
   * on an lsn held twice. Returns how many entries were written and the
   * last one's lsn and epoch.
   */
  wireAfter(
    afterLsn: bigint,
    entriesMax: number,
    bytesMax: number,
    wire: CommitWireSink,
  ): { entryCount: number; lastLsn: bigint; lastEpoch: bigint } {
    // No more rows than bytesMax can hold (a row takes more than rowWireBytesMin on the wire).
    const rows = this.selectRows.all(afterLsn, INT64_MAX, Math.min(entriesMax, Math.ceil(bytesMax / rowWireBytesMin) + 1));
    let rowIndex = 0;
    let nextLsn = afterLsn + 1n;
    let lastEpoch = 0n;
    let entryCount = 0;
    const full = (): boolean => entryCount >= entriesMax || wire.sizeBytes >= bytesMax;
    let stopped = false;
    const pushRow = (row: RawRow): void => {
      if (row[0] !== nextLsn) throw new ShardLogError(`log has a gap: expected lsn ${nextLsn}, found ${row[0]}`);
      // Its checksum is verified as it is written to the wire; its shape, by the follower that decodes it.
      wire.rawRow(row);
      nextLsn++;
      lastEpoch = row[1];
      entryCount++;
    };
    for (const record of this.selectRecords.iterate(afterLsn + 1n, afterLsn, INT64_MAX)) {
      while (rowIndex < rows.length && rows[rowIndex]![0] < record[0] && !full()) pushRow(rows[rowIndex++]!);
      if (full()) break;
      const [firstLsn, lastLsn, epoch, atMs, data] = record;
      if (firstLsn > afterLsn && firstLsn !== nextLsn) throw new ShardLogError(`log has a gap: expected lsn ${nextLsn}, found ${firstLsn}`);
      const roomBytes = bytesMax - wire.sizeBytes - recordWireOverheadBytes;
      if (firstLsn > afterLsn && data.length <= roomBytes) {
        visitRecord(record, noVisit);
        wire.record(firstLsn, lastLsn, epoch, atMs, data, Number(record[5]));
        entryCount += Number(lastLsn - firstLsn + 1n);
        nextLsn = lastLsn + 1n;
      } else {
        // Too big for what is left of the frame: the next frame takes it whole, or a first piece of it.
        if (entryCount > 0 && data.length > roomBytes) {
          stopped = true;
          break;
        }
        // Straddling afterLsn, or alone too big for a frame: its entries from nextLsn, as many as fit, as a record of their own.
        const rest = decodeRecord(record).filter((entry) => entry.lsn >= nextLsn);
        const fitting = Math.max(1, Math.min(rest.length, entriesMax - entryCount, Math.floor(roomBytes / recordEntryBytesMax)));
        const cutLastLsn = nextLsn + BigInt(fitting - 1);
        const cut = encodeRecord(rest, 0, fitting);
        wire.record(nextLsn, cutLastLsn, epoch, atMs, cut, recordChecksum(nextLsn, cutLastLsn, epoch, atMs, cut));
        entryCount += fitting;
        nextLsn = cutLastLsn + 1n;
      }
      lastEpoch = epoch;
      if (nextLsn <= lastLsn) {
        stopped = true;
        break;
      }
      if (rowIndex < rows.length && rows[rowIndex]![0] <= lastLsn)
        throw new ShardLogError(`log holds lsn ${rows[rowIndex]![0]} both as a row and in the record at ${firstLsn}`);
    }
    // Rows after the records, unless the frame ended before a record: they would leave a gap.
    while (!stopped && rowIndex < rows.length && !full()) pushRow(rows[rowIndex++]!);
    return { entryCount, lastLsn: nextLsn - 1n, lastEpoch };
  }

  /** The record holding lsn, or undefined. */
  recordAt(lsn: bigint): RawRecord | undefined {
    const record = this.selectRecordAt.get(lsn);
    return record !== undefined && record[1] >= lsn ? record : undefined;
  }

  /** The record with the highest lsns, checked (it is decoded), or undefined. */
  lastRecord(): RawRecord | undefined {
    const record = this.selectLastRecord.get();
    if (record !== undefined) decodeRecord(record);
    return record;
  }

  /** The newest entry's lsn, epoch and commit time, a row's or a record's (the last record is checked), or undefined. */
  tail(): { lsn: bigint; epoch: bigint; atMs: bigint } | undefined {
    const row = this.selectLastRow.get();
    const record = this.lastRecord();
    if (record !== undefined && (row === undefined || record[1] > row[0])) return { lsn: record[1], epoch: record[2], atMs: record[3] };
    return row === undefined ? undefined : { lsn: row[0], epoch: row[1], atMs: row[2] };
  }
}
