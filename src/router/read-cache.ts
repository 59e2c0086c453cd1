// CACHED reads: totals recomputed by a refresher for the counters read
// recently. Pure bookkeeping with an injected clock; the refresher that calls
// it lives in the router service. An entry older than maxStalenessMs is never
// served (G4): the caller falls back to an exact read.

export interface CachedTotal {
  total: bigint;
  shardCount: number;
  /** Every increment acknowledged before this instant is included. */
  asOfMs: number;
}

interface Entry extends CachedTotal {
  lastReadMs: number;
}

/**
 * The map's order is the order of last reads (a read moves its entry to the
 * end), so the least recently read entry is always first: eviction and the
 * idle sweep never scan the entries that stay (O(1) per entry evicted).
 */
export class ReadCache {
  private readonly entries = new Map<string, Entry>();

  constructor(
    /** Oldest total that may be served: refresh interval + the longest summing time. */
    readonly maxStalenessMs: number,
    /** A counter not read for this long stops being refreshed and is forgotten. */
    private readonly idleMs: number,
    private readonly entriesMax: number,
  ) {}

  /** The cached total if it is fresh enough to serve; marks the counter as read. */
  get(name: string, nowMs: number): CachedTotal | undefined {
    const entry = this.entries.get(name);
    if (entry === undefined) return undefined;
    this.markRead(name, entry, nowMs);
    if (nowMs - entry.asOfMs > this.maxStalenessMs) return undefined;
    return entry;
  }

  put(name: string, value: CachedTotal, nowMs: number): void {
    const entry = this.entries.get(name);
    if (entry !== undefined) {
      // A slower, older summing never replaces a newer one.
      if (value.asOfMs < entry.asOfMs) return;
      Object.assign(entry, value);
      return;
    }
    this.evictIdle(nowMs);
    if (this.entries.size >= this.entriesMax) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(name, { ...value, lastReadMs: nowMs });
  }

  /** Forgets one counter (deleted or cleared): its next read sums anew. */
  forget(name: string): void {
    this.entries.delete(name);
  }

  /** Names the refresher should recompute now; forgets idle ones. */
  namesToRefresh(nowMs: number): string[] {
    this.evictIdle(nowMs);
    return [...this.entries.keys()];
  }

  private markRead(name: string, entry: Entry, nowMs: number): void {
    // A clock step backwards keeps the later time, so the order stays the order of reads.
    entry.lastReadMs = Math.max(entry.lastReadMs, nowMs);
    this.entries.delete(name);
    this.entries.set(name, entry);
  }

  /** Drops entries not read for idleMs, oldest first, stopping at the first one still in use. */
  private evictIdle(nowMs: number): void {
    for (const [name, entry] of this.entries) {
      if (nowMs - entry.lastReadMs <= this.idleMs) return;
      this.entries.delete(name);
    }
  }

  get size(): number {
    return this.entries.size;
  }
}
