// Idempotency keys a node has seen, per shard, within the dedup window: the
// memory side of G2. Rebuilt from the log on start; fed by local commits and
// by replicated entries alike, so a promoted follower deduplicates too.
// A Map iterates in insertion order and keys arrive in time order, so
// pruning walks only the expired front. Bounded by dedupKeysMax.
import { dedupKeysMax } from '../common/limits.ts';

export interface SeenKey {
  lsn: bigint;
  atMs: number;
  /** 0: the key's increment applied here. Otherwise a fence set at this shard count. */
  fenceShardCount: number;
}

export class DedupIndex {
  private readonly seen = new Map<string, SeenKey>();
  /** Keys dropped before their window ended because the index was full. */
  evictedEarly = 0;

  constructor(
    private readonly windowMs: number,
    /** Bound on memory: past it the oldest keys go first, shortening the window (counted, exported). */
    private readonly keysMax: number = dedupKeysMax,
  ) {}

  static keyOf(shardId: number, key: Buffer): string {
    // latin1: one byte per key byte, so V8 keeps it a compact one-byte string.
    return `${shardId}:${key.toString('latin1')}`;
  }

  get(shardId: number, key: Buffer, nowMs: number): SeenKey | undefined {
    const seen = this.seen.get(DedupIndex.keyOf(shardId, key));
    return seen !== undefined && nowMs - seen.atMs < this.windowMs ? seen : undefined;
  }

  add(shardId: number, key: Buffer, lsn: bigint, atMs: number, fenceShardCount: number): void {
    const id = DedupIndex.keyOf(shardId, key);
    // Re-inserting moves it to the back, keeping the map in time order.
    this.seen.delete(id);
    this.seen.set(id, { lsn, atMs, fenceShardCount });
    if (this.seen.size > this.keysMax) {
      const oldest = this.seen.keys().next().value as string;
      this.seen.delete(oldest);
      this.evictedEarly++;
    }
  }

  /** How far back keys are still held: the window, or less once the bound has bitten. */
  coveredMs(nowMs: number): number {
    const oldest = this.seen.values().next().value as SeenKey | undefined;
    if (this.evictedEarly === 0 || oldest === undefined) return this.windowMs;
    return Math.min(this.windowMs, nowMs - oldest.atMs);
  }

  /** Drops keys older than the window; at most `limit` per call so writes never wait long. */
  prune(nowMs: number, limit = 100_000): number {
    let pruned = 0;
    for (const [id, seen] of this.seen) {
      if (pruned >= limit || nowMs - seen.atMs < this.windowMs) break;
      this.seen.delete(id);
      pruned++;
    }
    return pruned;
  }

  clear(): void {
    this.seen.clear();
  }

  get size(): number {
    return this.seen.size;
  }
}
