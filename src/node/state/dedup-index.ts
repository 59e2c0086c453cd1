// Idempotency keys a node has seen, per shard, within the dedup window (G2):
// recent keys in bounded memory, in front of the log on disk, which keeps
// every keyed row for the whole window. Fed by local commits and replicated
// entries alike, so a promoted follower deduplicates too. It never answers
// "unseen" for a key the window still holds, and never grows without bound.
import { dedupKeysInMemoryMax } from '../../common/index.ts';
import type { KeyRecord } from '../log/index.ts';

/** A key's state at a shard: its newest log row. */
export type SeenKey = KeyRecord;

/** Where keys no longer in memory are found: the log (ShardLog.findKey). */
export interface KeyStore {
  findKey(shardId: number, key: Buffer, sinceMs: number): KeyRecord | undefined;
}

export class DedupIndex {
  /**
   * The newest state of each key held in memory. A Map iterates in insertion
   * order and keys arrive in time order, so pruning and eviction both take
   * the oldest from the front: O(1) per key.
   */
  private readonly seen = new Map<string, SeenKey>();
  /**
   * Commit time of the newest key that is on disk but not in memory (evicted
   * by the bound, or left out at startup); -Infinity when there is none.
   * Until it falls out of the window, a memory miss must ask the disk.
   */
  private diskOnlyNewestAtMs = Number.NEGATIVE_INFINITY;
  /**
   * One iterator walks the map from its oldest entry, kept between calls:
   * a fresh keys().next() after many deletes from the front re-walks every
   * deleted slot V8 has not compacted yet (quadratic past the bound).
   */
  private cursor: IterableIterator<[string, SeenKey]> | undefined;
  /** The entry the cursor stands on: the oldest, if it is still in the map as it was. */
  private head: [string, SeenKey] | undefined;
  /** Keys dropped from memory before their window ended because memory was full (the disk still has them). */
  evictedFromMemory = 0;
  /** Memory misses answered from the disk. */
  diskLookups = 0;

  constructor(
    private readonly windowMs: number,
    /** Bound on memory: past it the oldest keys leave memory (counted, exported) and are looked up on disk. */
    readonly keysInMemoryMax: number = dedupKeysInMemoryMax,
    /** Without a store (benches, tests of memory alone) an evicted key is forgotten: the window shrinks. */
    private readonly disk?: KeyStore,
  ) {}

  static keyOf(shardId: number, key: Buffer): string {
    // latin1: one byte per key byte, so V8 keeps it a compact one-byte string.
    return `${shardId}:${key.toString('latin1')}`;
  }

  get(shardId: number, key: Buffer, nowMs: number): SeenKey | undefined {
    const seen = this.seen.get(DedupIndex.keyOf(shardId, key));
    // In memory: that is the key's newest row, so there is nothing newer on disk.
    if (seen !== undefined) return nowMs - seen.atMs < this.windowMs ? seen : undefined;
    if (this.disk === undefined || !this.diskHoldsMore(nowMs)) return undefined;
    this.diskLookups++;
    return this.disk.findKey(shardId, key, nowMs - this.windowMs + 1);
  }

  add(shardId: number, key: Buffer, lsn: bigint, atMs: number, fenceShardCount: number): void {
    const id = DedupIndex.keyOf(shardId, key);
    // Re-inserting moves it to the back, keeping the map in time order.
    this.seen.delete(id);
    this.seen.set(id, { lsn, atMs, fenceShardCount });
    if (this.seen.size > this.keysInMemoryMax) {
      const [oldestId, oldest] = this.oldest()!;
      this.seen.delete(oldestId);
      this.evictedFromMemory++;
      this.leftOnDisk(oldest.atMs);
    }
  }

  /** The oldest key in memory. O(1) amortized: the cursor passes each entry once. */
  private oldest(): [string, SeenKey] | undefined {
    // Bounded: each step either returns or moves the cursor past an entry that is gone.
    for (;;) {
      if (this.head !== undefined) {
        const [id, seen] = this.head;
        // A key re-added since moved to the back (a new object): the cursor meets it there.
        if (this.seen.get(id) === seen) return this.head;
        this.head = undefined;
      }
      this.cursor ??= this.seen.entries();
      const next = this.cursor.next();
      if (next.done === true) {
        // Walked past the newest entry: the map is empty. A later call starts afresh.
        this.cursor = undefined;
        return undefined;
      }
      this.head = next.value;
    }
  }

  /** Keys committed up to atMs may be on disk only (rebuild left them out of memory). */
  leftOnDisk(atMs: number): void {
    if (atMs > this.diskOnlyNewestAtMs) this.diskOnlyNewestAtMs = atMs;
  }

  /** True while some key on disk but not in memory is still within the window. */
  diskHoldsMore(nowMs: number): boolean {
    return nowMs - this.diskOnlyNewestAtMs < this.windowMs;
  }

  /** How far back keys are found: the whole window with the disk behind memory; without it, less once the bound has bitten. */
  coveredMs(nowMs: number): number {
    return this.disk === undefined ? this.memoryCoveredMs(nowMs) : this.windowMs;
  }

  /** How far back memory alone holds every key: the window until the bound bites. */
  memoryCoveredMs(nowMs: number): number {
    if (!this.diskHoldsMore(nowMs)) return this.windowMs;
    return Math.max(0, Math.min(this.windowMs, nowMs - this.diskOnlyNewestAtMs));
  }

  /** Drops keys older than the window from memory; at most `limit` per call so writes never wait long. */
  prune(nowMs: number, limit = 100_000): number {
    let pruned = 0;
    for (
      let oldest = this.oldest();
      oldest !== undefined && pruned < limit && nowMs - oldest[1].atMs >= this.windowMs;
      oldest = this.oldest()
    ) {
      this.seen.delete(oldest[0]);
      pruned++;
    }
    return pruned;
  }

  /** Empties memory (before a rebuild); the counters keep counting. */
  clear(): void {
    this.seen.clear();
    this.cursor = undefined;
    this.head = undefined;
    this.diskOnlyNewestAtMs = Number.NEGATIVE_INFINITY;
  }

  /** Keys held in memory. */
  get size(): number {
    return this.seen.size;
  }
}
