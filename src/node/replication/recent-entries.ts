// The primary's newest committed entries, kept in memory so replication ships
// them without reading the log back: one run of consecutive lsns, bounded in
// entries and bytes, trimmed as the follower confirms. Only this primary's
// own commits enter, and a new session empties it (a follower's log may have
// been truncated or replaced in between).
import type { LogEntry, StoredEntry } from '../log/index.ts';
import { entryWireBytes } from './entry-wire.ts';

export interface RecentEntriesBounds {
  memoryEntriesMax: number;
  memoryBytesMax: number;
}

export class RecentEntries {
  /** recent[head..], consecutive lsns, as the log holds them. */
  private recent: (StoredEntry | undefined)[] = [];
  private head = 0;
  private bytes = 0;

  constructor(private readonly bounds: RecentEntriesBounds) {}

  /** Keeps just-committed rows (ending at lastLsn), dropping the oldest past the bounds or confirmed (below ackedLsn). */
  remember(rows: readonly LogEntry[], lastLsn: bigint, epoch: bigint, atMs: number, ackedLsn: bigint): void {
    const firstLsn = lastLsn - BigInt(rows.length) + 1n;
    const endLsn = this.endLsn();
    // One run of consecutive entries: a commit that does not continue it starts a new one.
    if (endLsn !== undefined && endLsn + 1n !== firstLsn) this.forget();
    let lsn = firstLsn;
    for (const row of rows) {
      const entry: StoredEntry = { ...row, lsn, epoch, atMs };
      lsn++;
      this.recent.push(entry);
      this.bytes += entryWireBytes(entry);
    }
    this.trim(ackedLsn);
  }

  /**
   * Drops the oldest entries past the bounds, and those the follower has
   * confirmed (all but the last: its epoch is the next call's prev_epoch).
   */
  trim(ackedLsn: bigint): void {
    const { memoryEntriesMax, memoryBytesMax } = this.bounds;
    while (this.head < this.recent.length) {
      const oldest = this.recent[this.head]!;
      const over = this.recent.length - this.head > memoryEntriesMax || this.bytes > memoryBytesMax;
      if (!over && oldest.lsn >= ackedLsn) break;
      this.bytes -= entryWireBytes(oldest);
      this.recent[this.head] = undefined;
      this.head++;
    }
    // Compacted now and then: amortised O(1) per entry.
    if (this.head > 1024 && 2 * this.head > this.recent.length) {
      this.recent = this.recent.slice(this.head);
      this.head = 0;
    }
  }

  forget(): void {
    this.recent = [];
    this.head = 0;
    this.bytes = 0;
  }

  /** The entry at lsn when memory holds it. */
  at(lsn: bigint): StoredEntry | undefined {
    const first = this.recent[this.head];
    if (first === undefined || lsn < first.lsn) return undefined;
    const index = this.head + Number(lsn - first.lsn);
    return index < this.recent.length ? this.recent[index] : undefined;
  }

  /** Up to countMax entries from fromLsn on, when memory holds fromLsn and nothing past the log's end (logLastLsn); else none. */
  from(fromLsn: bigint, countMax: number, logLastLsn: bigint): StoredEntry[] {
    const first = this.recent[this.head];
    const endLsn = this.endLsn();
    if (first === undefined || endLsn === undefined || fromLsn < first.lsn || endLsn > logLastLsn) return [];
    const start = this.head + Number(fromLsn - first.lsn);
    return this.recent.slice(start, start + countMax) as StoredEntry[];
  }

  private endLsn(): bigint | undefined {
    return this.head < this.recent.length ? this.recent[this.recent.length - 1]!.lsn : undefined;
  }
}
