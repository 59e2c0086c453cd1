// The primary's newest commits, kept in memory so replication ships them
// without reading the log back: each commit as the bytes its records and rows
// were stored as (the replication wire, commit-wire.ts), one run of
// consecutive lsns, bounded in entries and bytes, trimmed as the follower
// confirms. No object per entry. Only this primary's own commits enter, and
// a new session empties it (a follower's log may have been truncated or
// replaced in between).
import { pieceOffsetOf } from '../log/index.ts';

export interface RecentEntriesBounds {
  memoryEntriesMax: number;
  memoryBytesMax: number;
}

/** One commit: lsns firstLsn..lastLsn, all written under epoch, as wire bytes. */
interface Commit {
  firstLsn: bigint;
  lastLsn: bigint;
  epoch: bigint;
  bytes: Buffer;
}

/** A run of whole commits read from memory. */
export interface RecentRun {
  parts: Buffer[];
  sizeBytes: number;
  entryCount: number;
  lastLsn: bigint;
  lastEpoch: bigint;
}

export class RecentEntries {
  /** commits[head..], consecutive lsns. */
  private commits: (Commit | undefined)[] = [];
  private head = 0;
  private bytes = 0;
  private entries = 0n;

  constructor(private readonly bounds: RecentEntriesBounds) {}

  /** Keeps a just-written commit (its wire bytes, lsns firstLsn..lastLsn), dropping the oldest past the bounds or confirmed (below ackedLsn). */
  remember(bytes: Buffer, firstLsn: bigint, lastLsn: bigint, epoch: bigint, ackedLsn: bigint): void {
    const endLsn = this.endLsn();
    // One run of consecutive entries: a commit that does not continue it starts a new one.
    if (endLsn !== undefined && endLsn + 1n !== firstLsn) this.forget();
    if (bytes.length === 0 || lastLsn < firstLsn) return;
    this.commits.push({ firstLsn, lastLsn, epoch, bytes });
    this.bytes += bytes.length;
    this.entries += lastLsn - firstLsn + 1n;
    this.trim(ackedLsn);
  }

  /**
   * Drops the oldest commits past the bounds, and those the follower has
   * confirmed whole (the one holding ackedLsn stays: its epoch is the next
   * frame's prev_epoch).
   */
  trim(ackedLsn: bigint): void {
    const { memoryEntriesMax, memoryBytesMax } = this.bounds;
    while (this.head < this.commits.length) {
      const oldest = this.commits[this.head]!;
      const over = this.entries > BigInt(memoryEntriesMax) || this.bytes > memoryBytesMax;
      if (!over && oldest.lastLsn >= ackedLsn) break;
      this.bytes -= oldest.bytes.length;
      this.entries -= oldest.lastLsn - oldest.firstLsn + 1n;
      this.commits[this.head] = undefined;
      this.head++;
    }
    // Compacted now and then: amortised O(1) per commit.
    if (this.head > 1024 && 2 * this.head > this.commits.length) {
      this.commits = this.commits.slice(this.head);
      this.head = 0;
    }
  }

  forget(): void {
    this.commits = [];
    this.head = 0;
    this.bytes = 0;
    this.entries = 0n;
  }

  /** The index of the commit holding lsn, or -1. Binary search: a pipelined frame starts far from the head. */
  private indexOf(lsn: bigint): number {
    let low = this.head;
    let high = this.commits.length - 1;
    while (low <= high) {
      const middle = (low + high) >>> 1;
      const commit = this.commits[middle]!;
      if (lsn < commit.firstLsn) high = middle - 1;
      else if (lsn > commit.lastLsn) low = middle + 1;
      else return middle;
    }
    return -1;
  }

  /** The epoch of the entry at lsn when memory holds it. */
  epochAt(lsn: bigint): bigint | undefined {
    const index = this.indexOf(lsn);
    return index < 0 ? undefined : this.commits[index]!.epoch;
  }

  /**
   * Commits from fromLsn on, up to about entriesMax entries and bytesMax
   * bytes (at least one), when memory holds a piece (a record or a row)
   * that starts at fromLsn and nothing past the log's end (logLastLsn);
   * else undefined. The first may be the tail of a commit.
   */
  from(fromLsn: bigint, entriesMax: number, bytesMax: number, logLastLsn: bigint): RecentRun | undefined {
    const endLsn = this.endLsn();
    if (endLsn === undefined || endLsn > logLastLsn) return undefined;
    const start = this.indexOf(fromLsn);
    if (start < 0) return undefined;
    const first = this.commits[start]!;
    const offset = first.firstLsn === fromLsn ? 0 : pieceOffsetOf(first.bytes, fromLsn);
    if (offset < 0) return undefined;
    const run: RecentRun = { parts: [], sizeBytes: 0, entryCount: 0, lastLsn: 0n, lastEpoch: 0n };
    for (let index = start; index < this.commits.length; index++) {
      const commit = this.commits[index]!;
      const bytes = index === start && offset > 0 ? commit.bytes.subarray(offset) : commit.bytes;
      const count = Number(commit.lastLsn - (index === start ? fromLsn : commit.firstLsn) + 1n);
      if (run.parts.length > 0 && (run.entryCount + count > entriesMax || run.sizeBytes + bytes.length > bytesMax)) break;
      run.parts.push(bytes);
      run.sizeBytes += bytes.length;
      run.entryCount += count;
      run.lastLsn = commit.lastLsn;
      run.lastEpoch = commit.epoch;
    }
    return run;
  }

  private endLsn(): bigint | undefined {
    return this.head < this.commits.length ? this.commits[this.commits.length - 1]!.lastLsn : undefined;
  }
}
