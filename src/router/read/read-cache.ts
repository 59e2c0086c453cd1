// CACHED reads: totals recomputed by a refresher for the counters read
// recently. Pure bookkeeping with an injected clock; the refresher that calls
// it lives in the router service. An entry older than maxStalenessMs is never
// served (G4): the caller falls back to an exact read. Bounded, and O(1) per
// read or store however full it is: only the refresher lists its entries.
// Each total names the counter and generation it was summed for; the read
// path serves it only while the directory still says the same.
import { LruMap } from '../../common/index.ts';
import type { CounterInfo } from '../directory/index.ts';

export interface CachedTotal {
  total: bigint;
  shardCount: number;
  /** Every increment acknowledged before this instant is included. */
  asOfMs: number;
  /**
   * The directory's counter the total was summed for, and its generation
   * then: a hit serves the total only while the directory still holds that
   * counter at that generation (a Clear or a Delete, through any router,
   * makes it another one).
   */
  source: CounterInfo;
  generation: number;
}

interface Entry extends CachedTotal {
  lastReadMs: number;
}

/**
 * Entries in order of last read (a read moves its entry to the newest end),
 * so the least recently read entry is always the oldest: eviction and the
 * idle sweep never look at the entries that stay (O(1) per entry evicted).
 */
export class ReadCache {
  private readonly entries: LruMap<string, Entry>;
  /** Entries dropped for idleness (the LRU map counts those evicted by the bound). */
  idleEvictedCount = 0;

  constructor(
    /** Oldest total that may be served: refresh interval + the longest summing time. */
    readonly maxStalenessMs: number,
    /** A counter not read for this long stops being refreshed and is forgotten. */
    private readonly idleMs: number,
    readonly entriesMax: number,
  ) {
    this.entries = new LruMap(entriesMax);
  }

  /** The cached total if it is fresh enough to serve; marks the counter as read. */
  get(name: string, nowMs: number): CachedTotal | undefined {
    const entry = this.entries.get(name);
    if (entry === undefined) return undefined;
    // A clock step backwards keeps the later time, so the order stays the order of reads.
    entry.lastReadMs = Math.max(entry.lastReadMs, nowMs);
    if (nowMs - entry.asOfMs > this.maxStalenessMs) return undefined;
    return entry;
  }

  /**
   * Stores a total a read has just summed: a new counter becomes the most
   * recently read entry (evicting the least recently read one when full).
   * Only for counters that exist: a name nobody wrote is never put here.
   */
  put(name: string, value: CachedTotal, nowMs: number): void {
    if (this.update(name, value)) return;
    this.evictIdle(nowMs);
    this.entries.set(name, { ...value, lastReadMs: nowMs });
  }

  /**
   * Stores a refreshed total for a counter still cached; false (nothing
   * stored) when it is not. The refresher uses this: a counter evicted while
   * its round ran must not come back, and refreshing is not reading.
   */
  update(name: string, value: CachedTotal): boolean {
    const entry = this.entries.peek(name);
    if (entry === undefined) return false;
    // A slower, older summing never replaces a newer one.
    if (value.asOfMs >= entry.asOfMs) Object.assign(entry, value);
    return true;
  }

  /** Forgets one counter (deleted or cleared): its next read sums anew. */
  forget(name: string): void {
    this.entries.delete(name);
  }

  /** Names the refresher should recompute now; forgets idle ones. */
  namesToRefresh(nowMs: number): string[] {
    this.evictIdle(nowMs);
    return this.entries.keys();
  }

  /** Drops entries not read for idleMs, least recently read first, stopping at the first one still in use. */
  private evictIdle(nowMs: number): void {
    // Bounded: each step removes an entry or stops.
    for (let oldest = this.entries.oldest(); oldest !== undefined; oldest = this.entries.oldest()) {
      if (nowMs - oldest[1].lastReadMs <= this.idleMs) return;
      this.entries.delete(oldest[0]);
      this.idleEvictedCount++;
    }
  }

  /** Entries evicted because the cache was full. */
  get fullEvictedCount(): number {
    return this.entries.evictedCount;
  }

  get size(): number {
    return this.entries.size;
  }
}
