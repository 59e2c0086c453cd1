// Windowed shard totals: per shard, the sum of the increments accepted in each
// fixed time bucket, so a read can ask for "the last hour". Memory only: it
// never reads a clock (every time is an argument) and never touches the log.
import assert from 'node:assert/strict';
import type { WindowSetting } from '../wire/index.ts';

// The bounds live here, not in src/common/limits.ts, only because this module
// was added without touching existing files; they belong there.
/** Smallest window bucket. Buckets are whole seconds. */
export const windowBucketMsMin = 1_000;
/** Buckets one shard's window may hold (retentionMs / bucketMs): bounds its memory and every read. */
export const windowBucketsMax = 10_000;
/** Longest window retention: 400 days. */
export const windowRetentionMsMax = 400 * 24 * 60 * 60 * 1_000;

const msPerSecond = 1_000;

/** The buckets one read sums: starts in [fromMs, toMs), `buckets` of them. */
export interface WindowRange {
  fromMs: number;
  toMs: number;
  buckets: number;
}

/**
 * Why (bucketMs, retentionMs) is not a valid window, in one line; undefined
 * when it is. (0, 0) is valid and means "no window".
 */
export function validateWindowConfig(bucketMs: number, retentionMs: number): string | undefined {
  if (!Number.isSafeInteger(bucketMs)) return `window bucket ${bucketMs} ms is not an integer`;
  if (!Number.isSafeInteger(retentionMs)) return `window retention ${retentionMs} ms is not an integer`;
  if (bucketMs === 0 && retentionMs === 0) return undefined;
  if (bucketMs === 0) return `window bucket is 0 ms with retention ${retentionMs} ms; use 0 for both to mean no window`;
  if (bucketMs < windowBucketMsMin) return `window bucket is ${bucketMs} ms; the minimum is ${windowBucketMsMin} ms`;
  if (bucketMs % msPerSecond !== 0) return `window bucket is ${bucketMs} ms; it must be a whole number of seconds`;
  if (retentionMs < bucketMs) {
    return `window retention is ${retentionMs} ms; it must be at least one bucket (${bucketMs} ms)`;
  }
  if (retentionMs % bucketMs !== 0) {
    return `window retention ${retentionMs} ms is not a multiple of the bucket (${bucketMs} ms)`;
  }
  if (retentionMs > windowRetentionMsMax) {
    return `window retention is ${retentionMs} ms; the limit is ${windowRetentionMsMax} ms (400 days)`;
  }
  const bucketCount = retentionMs / bucketMs;
  if (bucketCount > windowBucketsMax) {
    return `window retention / bucket is ${bucketCount} buckets; the limit is ${windowBucketsMax}`;
  }
  return undefined;
}

/**
 * The buckets a read of "the last lastMs" sums at nowMs: the bucket holding
 * nowMs plus the n - 1 whole buckets before it, n = ceil(lastMs / bucketMs).
 *
 * The current bucket is partial: it holds what was accepted from its start up
 * to now, and nothing later can be in it yet. So the sum covers between
 * (n - 1) * bucketMs of time (now just at the bucket's start) and n * bucketMs
 * (now at its end): "the last hour" at 12:00:30 with 1-minute buckets is
 * 11:01:00..12:00:30. It never reaches further back than lastMs rounded up to
 * a whole bucket.
 *
 * The caller validates lastMs from a request (positive, at most the shard's
 * retention); here a bad value is a programmer error.
 */
export function windowRange(nowMs: number, lastMs: number, bucketMs: number): WindowRange {
  assert.ok(Number.isSafeInteger(nowMs), `now ${nowMs} ms is not an integer`);
  assert.ok(Number.isSafeInteger(lastMs) && lastMs > 0, `last ${lastMs} ms is not a positive integer`);
  assert.ok(Number.isSafeInteger(bucketMs) && bucketMs > 0, `bucket ${bucketMs} ms is not a positive integer`);
  const buckets = Math.ceil(lastMs / bucketMs);
  const toMs = bucketStartMs(nowMs, bucketMs) + bucketMs;
  const fromMs = toMs - buckets * bucketMs;
  assert.ok(Number.isSafeInteger(fromMs), `window of ${lastMs} ms before ${nowMs} ms leaves the safe integers`);
  return { fromMs, toMs, buckets };
}

/** Start of the bucket holding atMs. Exact for every safe integer, negative ones too. */
function bucketStartMs(atMs: number, bucketMs: number): number {
  return Math.floor(atMs / bucketMs) * bucketMs;
}

/**
 * The one expiry rule, shared by reads and the sweep: at time t a bucket is
 * expired once all of it is older than the retention. A read uses t = toMs
 * (the end of the current bucket), so it sees exactly retentionMs / bucketMs
 * buckets, the current one included; the sweep uses t = now <= toMs, so it
 * never drops a bucket a read at now could count.
 */
function isExpired(startMs: number, window: ShardWindow, atMs: number): boolean {
  return startMs + window.bucketMs <= atMs - window.retentionMs;
}

interface ShardWindow {
  bucketMs: number;
  retentionMs: number;
  /** Bucket start (ms since epoch, a multiple of bucketMs) to the total accepted in it. */
  readonly buckets: Map<number, bigint>;
}

export class WindowBuckets {
  // Only shards with a window have an entry: a windowless shard costs nothing here.
  private readonly windows = new Map<number, ShardWindow>();
  private heldBucketCount = 0;
  // Where the staggered sweep resumes. A Map iterator stays valid while the
  // Map changes (ECMAScript guarantees it): an entry deleted before being
  // reached is skipped, an entry added is reached, in insertion order. So
  // shards configured or removed between calls need no bookkeeping here.
  private sweepCursor: Iterator<ShardWindow> | undefined;

  /**
   * Sets or replaces a shard's window; validate first with validateWindowConfig.
   * A new bucketMs drops the shard's buckets (history restarts): buckets of one
   * width cannot be split into another. A new retentionMs alone keeps them.
   * (0, 0) removes the shard's window and its buckets.
   */
  configure(shardId: number, bucketMs: number, retentionMs: number): void {
    assert.ok(Number.isSafeInteger(shardId), `shard id ${shardId} is not an integer`);
    const reason = validateWindowConfig(bucketMs, retentionMs);
    assert.ok(reason === undefined, `shard ${shardId}: ${reason}`);
    const window = this.windows.get(shardId);
    if (bucketMs === 0) {
      if (window === undefined) return;
      this.heldBucketCount -= window.buckets.size;
      this.windows.delete(shardId);
      return;
    }
    if (window === undefined) {
      this.windows.set(shardId, { bucketMs, retentionMs, buckets: new Map() });
      return;
    }
    if (window.bucketMs !== bucketMs) {
      this.heldBucketCount -= window.buckets.size;
      window.buckets.clear();
      window.bucketMs = bucketMs;
    }
    window.retentionMs = retentionMs;
  }

  configOf(shardId: number): WindowSetting | undefined {
    const window = this.windows.get(shardId);
    return window === undefined ? undefined : { bucketMs: window.bucketMs, retentionMs: window.retentionMs };
  }

  /** Counts an accepted increment in the bucket of atMs; nothing when the shard has no window. */
  add(shardId: number, atMs: number, amount: bigint): void {
    const window = this.windows.get(shardId);
    if (window === undefined) return;
    // The message is built only on failure: this is the increment path.
    if (!Number.isSafeInteger(atMs)) assert.fail(`shard ${shardId}: increment time ${atMs} ms is not an integer`);
    const startMs = bucketStartMs(atMs, window.bucketMs);
    const total = window.buckets.get(startMs);
    if (total === undefined) this.heldBucketCount++;
    // Unbounded bigint on purpose: one bucket may pass int64 while the shard
    // total does not (+max, -max, +max in alternate buckets). Readers check.
    window.buckets.set(startMs, (total ?? 0n) + amount);
  }

  /**
   * Sum of the shard's buckets starting in [fromMs, toMs) that are not
   * expired at toMs, whether or not the sweep has dropped them yet. Meant for
   * toMs at or after the latest sweep time (windowRange(now) gives that);
   * for an older toMs, buckets the sweep already dropped are missing.
   * The sum may pass int64; the caller maps that to OUT_OF_RANGE.
   */
  sum(shardId: number, fromMs: number, toMs: number): bigint {
    // Messages built only on failure: a read sums every shard of a counter.
    if (!Number.isSafeInteger(fromMs) || !Number.isSafeInteger(toMs) || fromMs > toMs) {
      assert.fail(`window range [${fromMs}, ${toMs}) ms is not an integer range`);
    }
    const window = this.windows.get(shardId);
    if (window === undefined) return 0n;
    const { bucketMs, retentionMs, buckets } = window;
    // The first start not expired at toMs and not before fromMs.
    const liveFromMs = toMs - retentionMs - bucketMs + 1;
    const firstStartMs = bucketStartMs(Math.max(fromMs, liveFromMs) - 1, bucketMs) + bucketMs;
    if (firstStartMs >= toMs) return 0n;
    // At most retentionMs / bucketMs + 1 <= windowBucketsMax + 1 starts.
    const startCount = Math.ceil((toMs - firstStartMs) / bucketMs);
    let total = 0n;
    // Walk whichever is shorter: the starts in range, or the buckets held
    // (a sparse shard holds few).
    if (startCount <= buckets.size) {
      for (let startMs = firstStartMs; startMs < toMs; startMs += bucketMs) {
        total += buckets.get(startMs) ?? 0n;
      }
    } else {
      for (const [startMs, bucketTotal] of buckets) {
        if (startMs >= fromMs && startMs < toMs && !isExpired(startMs, window, toMs)) total += bucketTotal;
      }
    }
    return total;
  }

  /**
   * One step of the background sweep: visits at most shardsMax shards, going
   * on round-robin from where the last call stopped, and drops their buckets
   * expired at nowMs. Returns how many it dropped. Reads already ignore
   * expired buckets; this only returns their memory. While the shard set does
   * not grow, every shard is visited at least once per
   * ceil(shardCount / shardsMax) calls.
   */
  expire(nowMs: number, shardsMax: number): number {
    assert.ok(Number.isSafeInteger(nowMs), `now ${nowMs} ms is not an integer`);
    // 0 is allowed (visits nothing) so a caller may pass a count that can be empty.
    assert.ok(Number.isSafeInteger(shardsMax) && shardsMax >= 0, `shardsMax ${shardsMax} is not a count`);
    // Never more than one pass per call, so no shard is visited twice in a call.
    const visitCount = Math.min(shardsMax, this.windows.size);
    let droppedCount = 0;
    for (let visitIndex = 0; visitIndex < visitCount; visitIndex++) {
      let next = this.sweepCursor?.next();
      if (next === undefined || next.done === true) {
        this.sweepCursor = this.windows.values();
        next = this.sweepCursor.next();
      }
      assert.ok(next.done !== true, 'sweep found no shard in a non-empty window map');
      droppedCount += this.dropExpired(next.value, nowMs);
    }
    return droppedCount;
  }

  /** The shard's buckets in start order, for a checkpoint. */
  buckets(shardId: number): [startMs: number, total: bigint][] {
    const window = this.windows.get(shardId);
    if (window === undefined) return [];
    return [...window.buckets].sort((left, right) => left[0] - right[0]);
  }

  /**
   * Replaces a shard's window and buckets, from a checkpoint. Buckets must be
   * in strictly increasing start order, each start a multiple of bucketMs.
   * Expired buckets are taken as given; the sweep drops them.
   */
  load(shardId: number, config: WindowSetting, buckets: readonly (readonly [startMs: number, total: bigint])[]): void {
    this.configure(shardId, 0, 0);
    this.configure(shardId, config.bucketMs, config.retentionMs);
    const window = this.windows.get(shardId);
    if (window === undefined) {
      assert.equal(buckets.length, 0, `shard ${shardId}: buckets loaded without a window`);
      return;
    }
    let previousStartMs = -Infinity;
    for (const [startMs, total] of buckets) {
      assert.ok(
        Number.isSafeInteger(startMs) && startMs % window.bucketMs === 0,
        `shard ${shardId}: bucket start ${startMs} ms is not a multiple of ${window.bucketMs} ms`,
      );
      assert.ok(startMs > previousStartMs, `shard ${shardId}: bucket ${startMs} ms out of order`);
      previousStartMs = startMs;
      window.buckets.set(startMs, total);
    }
    this.heldBucketCount += buckets.length;
  }

  /** Forgets everything: before a replay that rebuilds memory from the log. */
  clear(): void {
    this.windows.clear();
    this.heldBucketCount = 0;
    this.sweepCursor = undefined;
  }

  /** Every shard id with a window, for checkpoints. */
  shardIds(): number[] {
    return [...this.windows.keys()];
  }

  /** Shards with a window. */
  get shardCount(): number {
    return this.windows.size;
  }

  /** Buckets held over all shards, expired ones the sweep has not reached included. */
  get bucketCount(): number {
    return this.heldBucketCount;
  }

  private dropExpired(window: ShardWindow, nowMs: number): number {
    let droppedCount = 0;
    for (const startMs of window.buckets.keys()) {
      if (!isExpired(startMs, window, nowMs)) continue;
      window.buckets.delete(startMs);
      droppedCount++;
    }
    this.heldBucketCount -= droppedCount;
    return droppedCount;
  }
}
