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
    entry.lastReadMs = nowMs;
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
    if (this.entries.size >= this.entriesMax) this.evictIdle(nowMs, true);
    this.entries.set(name, { ...value, lastReadMs: nowMs });
  }

  /** Names the refresher should recompute now; forgets idle ones. */
  namesToRefresh(nowMs: number): string[] {
    this.evictIdle(nowMs, false);
    return [...this.entries.keys()];
  }

  private evictIdle(nowMs: number, evictOldestIfNone: boolean): void {
    let oldestName: string | undefined;
    let oldestReadMs = Infinity;
    for (const [name, entry] of this.entries) {
      if (nowMs - entry.lastReadMs > this.idleMs) this.entries.delete(name);
      else if (entry.lastReadMs < oldestReadMs) {
        oldestReadMs = entry.lastReadMs;
        oldestName = name;
      }
    }
    if (evictOldestIfNone && this.entries.size >= this.entriesMax && oldestName !== undefined) this.entries.delete(oldestName);
  }

  get size(): number {
    return this.entries.size;
  }
}
