// Unit tests for windowed shard totals: every time is a plain number chosen by
// the test (the module never reads a clock), so bucket edges are exact.
import { describe, expect, it } from 'vitest';
import {
  WindowBuckets,
  validateWindowConfig,
  windowBucketMsMin,
  windowBucketsMax,
  windowRange,
  windowRetentionMsMax,
} from '../../../src/window/index.ts';
import { randomInt, seededRandom } from '../../helpers/seeded-random.ts';

const secondMs = 1_000;
const minuteMs = 60 * secondMs;
const hourMs = 60 * minuteMs;
const dayMs = 24 * hourMs;
/** 2025-01-15 12:00:00.000 UTC. */
const noonMs = Date.UTC(2025, 0, 15, 12, 0, 0);

/** ms since epoch of hh:mm:ss.mmm on the test day. */
function at(hours: number, minutes: number, seconds = 0, ms = 0): number {
  return Date.UTC(2025, 0, 15, hours, minutes, seconds, ms);
}

function readLast(window: WindowBuckets, shardId: number, nowMs: number, lastMs: number): bigint {
  const config = window.configOf(shardId);
  if (config === undefined) return 0n;
  const range = windowRange(nowMs, lastMs, config.bucketMs);
  return window.sum(shardId, range.fromMs, range.toMs);
}

/** Every shard's buckets, to check bucketCount against. */
function heldBucketCount(window: WindowBuckets): number {
  return window.shardIds().reduce((count, shardId) => count + window.buckets(shardId).length, 0);
}

describe('validateWindowConfig', () => {
  it('window config: 0/0 means no window and is valid', () => {
    expect(validateWindowConfig(0, 0)).toBeUndefined();
  });

  it('window config: common windows are valid, up to the bounds', () => {
    expect(validateWindowConfig(minuteMs, dayMs)).toBeUndefined();
    expect(validateWindowConfig(windowBucketMsMin, windowBucketMsMin)).toBeUndefined();
    expect(validateWindowConfig(secondMs, windowBucketsMax * secondMs)).toBeUndefined();
    expect(validateWindowConfig(dayMs, windowRetentionMsMax)).toBeUndefined();
  });

  it('window config: a bucket under a second is invalid', () => {
    expect(validateWindowConfig(500, 60_000)).toMatch(/bucket is 500 ms; the minimum is 1000 ms/);
  });

  it('window config: a bucket that is not whole seconds is invalid', () => {
    expect(validateWindowConfig(1_500, 15_000)).toMatch(/whole number of seconds/);
  });

  it('window config: a bucket of 0 with a retention is invalid', () => {
    expect(validateWindowConfig(0, hourMs)).toMatch(/0 for both/);
  });

  it('window config: a retention that is not a multiple of the bucket is invalid', () => {
    expect(validateWindowConfig(minuteMs, minuteMs * 10 + secondMs)).toMatch(/not a multiple/);
  });

  it('window config: a retention shorter than one bucket is invalid', () => {
    expect(validateWindowConfig(minuteMs, 0)).toMatch(/at least one bucket/);
    expect(validateWindowConfig(minuteMs, -minuteMs)).toMatch(/at least one bucket/);
  });

  it('window config: a retention over 400 days is invalid', () => {
    expect(windowRetentionMsMax).toBe(400 * dayMs);
    expect(validateWindowConfig(dayMs, 401 * dayMs)).toMatch(/400 days/);
  });

  it('window config: more than windowBucketsMax buckets is invalid', () => {
    expect(validateWindowConfig(minuteMs, 7 * dayMs)).toMatch(/10080 buckets; the limit is 10000/);
    expect(validateWindowConfig(secondMs, (windowBucketsMax + 1) * secondMs)).toMatch(/the limit is 10000/);
  });

  it('window config: NaN, fractions and infinities are invalid', () => {
    expect(validateWindowConfig(Number.NaN, dayMs)).toMatch(/not an integer/);
    expect(validateWindowConfig(minuteMs, Number.NaN)).toMatch(/not an integer/);
    expect(validateWindowConfig(1_000.5, dayMs)).toMatch(/not an integer/);
    expect(validateWindowConfig(minuteMs, Number.POSITIVE_INFINITY)).toMatch(/not an integer/);
  });
});

describe('windowRange', () => {
  it('window range: the last hour with 1-minute buckets is 60 buckets ending with the current one', () => {
    expect(windowRange(at(12, 0, 30), hourMs, minuteMs)).toEqual({
      fromMs: at(11, 1),
      toMs: at(12, 1),
      buckets: 60,
    });
  });

  it('window range: now exactly on a bucket start still counts that bucket', () => {
    expect(windowRange(at(12, 0), minuteMs, minuteMs)).toEqual({ fromMs: at(12, 0), toMs: at(12, 1), buckets: 1 });
    expect(windowRange(at(12, 0, 59, 999), minuteMs, minuteMs)).toEqual({
      fromMs: at(12, 0),
      toMs: at(12, 1),
      buckets: 1,
    });
  });

  it('window range: a lastMs that is not a multiple of the bucket rounds up to whole buckets', () => {
    expect(windowRange(at(12, 0, 30), 90 * secondMs, minuteMs)).toEqual({
      fromMs: at(11, 59),
      toMs: at(12, 1),
      buckets: 2,
    });
    expect(windowRange(at(12, 0, 30), 1, minuteMs).buckets).toBe(1);
    expect(windowRange(at(12, 0, 30), minuteMs + 1, minuteMs).buckets).toBe(2);
  });

  it('window range: lastMs must be positive', () => {
    expect(() => windowRange(noonMs, 0, minuteMs)).toThrow(/last 0 ms/);
    expect(() => windowRange(noonMs, -1, minuteMs)).toThrow(/last -1 ms/);
  });
});

describe('WindowBuckets', () => {
  it('increments in the last minute and the last hour with 1-minute buckets', () => {
    const window = new WindowBuckets();
    window.configure(1, minuteMs, dayMs);
    window.add(1, at(10, 59, 59), 1n);
    window.add(1, at(11, 0, 59, 999), 2n);
    window.add(1, at(11, 1), 4n);
    window.add(1, at(11, 30), 8n);
    window.add(1, at(11, 59, 59, 999), 16n);
    window.add(1, at(12, 0), 32n);
    window.add(1, at(12, 0, 29), 64n);

    const nowMs = at(12, 0, 30);
    expect(readLast(window, 1, nowMs, minuteMs)).toBe(32n + 64n);
    expect(readLast(window, 1, nowMs, hourMs)).toBe(4n + 8n + 16n + 32n + 64n);
    expect(readLast(window, 1, nowMs, 2 * hourMs)).toBe(127n);
    // A minute later the 12:00 bucket is no longer the current one.
    expect(readLast(window, 1, at(12, 1, 30), minuteMs)).toBe(0n);
    expect(readLast(window, 1, at(12, 1, 30), 2 * minuteMs)).toBe(96n);
  });

  it('12:00:59.999 and 12:01:00.000 land in different buckets', () => {
    const window = new WindowBuckets();
    window.configure(1, minuteMs, hourMs);
    window.add(1, at(12, 0, 59, 999), 5n);
    window.add(1, at(12, 1, 0, 0), 7n);
    expect(window.buckets(1)).toEqual([
      [at(12, 0), 5n],
      [at(12, 1), 7n],
    ]);
    expect(readLast(window, 1, at(12, 1, 30), minuteMs)).toBe(7n);
    expect(readLast(window, 1, at(12, 0, 59, 999), minuteMs)).toBe(5n);
  });

  it('a shard without a window ignores increments and reads 0', () => {
    const window = new WindowBuckets();
    window.add(9, noonMs, 5n);
    expect(window.sum(9, noonMs - hourMs, noonMs + hourMs)).toBe(0n);
    expect(window.shardCount).toBe(0);
    expect(window.bucketCount).toBe(0);
    expect(window.buckets(9)).toEqual([]);
  });

  it('negative amounts subtract within and across buckets', () => {
    const window = new WindowBuckets();
    window.configure(1, minuteMs, hourMs);
    window.add(1, at(12, 0, 1), 10n);
    window.add(1, at(12, 0, 2), -3n);
    window.add(1, at(12, 0, 3), -20n);
    window.add(1, at(12, 1, 0), -5n);
    expect(window.buckets(1)).toEqual([
      [at(12, 0), -13n],
      [at(12, 1), -5n],
    ]);
    expect(readLast(window, 1, at(12, 1, 10), 2 * minuteMs)).toBe(-18n);
  });

  it('a bucket may pass int64 while the shard total does not; the sum is exact', () => {
    const window = new WindowBuckets();
    window.configure(1, minuteMs, hourMs);
    const int64Max = 2n ** 63n - 1n;
    window.add(1, at(12, 0), int64Max);
    window.add(1, at(12, 1), -int64Max);
    window.add(1, at(12, 0, 30), int64Max);
    expect(readLast(window, 1, at(12, 1), minuteMs)).toBe(-int64Max);
    expect(readLast(window, 1, at(12, 1), 2 * minuteMs)).toBe(int64Max);
    expect(readLast(window, 1, at(12, 0, 59), minuteMs)).toBe(2n * int64Max);
  });

  it('a read never counts an expired bucket, before or after the sweep drops it', () => {
    const window = new WindowBuckets();
    window.configure(1, minuteMs, hourMs);
    window.add(1, at(12, 0, 10), 5n);
    window.add(1, at(12, 30), 7n);

    // Until 13:00 the 12:00 bucket is within the last 60 buckets.
    expect(readLast(window, 1, at(12, 59, 59, 999), hourMs)).toBe(12n);
    // From 13:00 the last 60 buckets are 12:01..13:00: the 12:00 bucket is
    // expired for reads, even asked for explicitly, though still held.
    expect(readLast(window, 1, at(13, 0), hourMs)).toBe(7n);
    expect(readLast(window, 1, at(13, 0, 30), 2 * hourMs)).toBe(7n);
    expect(window.sum(1, at(11, 0), at(13, 1))).toBe(7n);
    expect(window.bucketCount).toBe(2);

    // The sweep at now uses the same rule with t = now: [12:00, 12:01) is
    // wholly older than the hour only from 13:01.
    expect(window.expire(at(13, 0, 59, 999), 10)).toBe(0);
    expect(window.expire(at(13, 1), 10)).toBe(1);
    expect(window.buckets(1)).toEqual([[at(12, 30), 7n]]);
    expect(window.bucketCount).toBe(1);
    expect(readLast(window, 1, at(13, 1), hourMs)).toBe(7n);

    // Everything goes eventually.
    expect(window.expire(at(13, 30, 59, 999), 10)).toBe(0);
    expect(window.expire(at(13, 31), 10)).toBe(1);
    expect(readLast(window, 1, at(13, 31), hourMs)).toBe(0n);
    expect(window.bucketCount).toBe(0);
    expect(window.shardCount).toBe(1);
  });

  it('a read of exactly the retention sees retention / bucket buckets, no more', () => {
    const window = new WindowBuckets();
    window.configure(1, minuteMs, hourMs);
    for (let minute = 0; minute < 120; minute++) window.add(1, noonMs + minute * minuteMs, 1n);
    const nowMs = noonMs + 119 * minuteMs + 30 * secondMs;
    expect(readLast(window, 1, nowMs, hourMs)).toBe(60n);
    // Asking for more than the retention cannot reach expired buckets.
    expect(readLast(window, 1, nowMs, 2 * hourMs)).toBe(60n);
    // The sweep keeps at most one more bucket than reads see.
    window.expire(nowMs, 1);
    expect(window.bucketCount).toBe(61);
  });

  it('staggered sweep with shardsMax=2 over 5 shards visits each shard within 3 calls', () => {
    const window = new WindowBuckets();
    const shardIds = [1, 2, 3, 4, 5];
    const oldMs = noonMs - 2 * hourMs;
    for (const shardId of shardIds) window.configure(shardId, minuteMs, hourMs);
    const heldShards = (): number[] => shardIds.filter((shardId) => window.buckets(shardId).length > 0);

    for (let pass = 0; pass < 4; pass++) {
      // An expired bucket in every shard: a shard the sweep visits loses it.
      for (const shardId of shardIds) window.add(shardId, oldMs, 1n);
      expect(heldShards()).toEqual(shardIds);
      const dropped: number[] = [];
      for (let call = 0; call < 3; call++) dropped.push(window.expire(noonMs, 2));
      expect(heldShards()).toEqual([]);
      // Each call does its full share of work, wrapping around: 2 + 2 + 1 new.
      expect(dropped).toEqual([2, 2, 1]);
    }
  });

  it('the staggered sweep goes on correctly when shards are added and removed between calls', () => {
    const window = new WindowBuckets();
    const oldMs = noonMs - 2 * hourMs;
    for (const shardId of [1, 2, 3, 4, 5]) {
      window.configure(shardId, minuteMs, hourMs);
      window.add(shardId, oldMs, 1n);
    }
    expect(window.expire(noonMs, 2)).toBe(2); // 1, 2
    window.configure(3, 0, 0); // removed before the sweep reached it
    window.configure(6, minuteMs, hourMs);
    window.add(6, oldMs, 1n);
    expect(window.expire(noonMs, 2)).toBe(2); // 4, 5
    expect(window.buckets(6)).toHaveLength(1);
    expect(window.expire(noonMs, 2)).toBe(1); // 6, then 1 again
    expect(window.buckets(6)).toEqual([]);
    expect(window.bucketCount).toBe(0);
    expect(window.shardCount).toBe(5);

    // Emptied, refilled, cleared: the sweep starts over without complaint.
    for (const shardId of window.shardIds()) window.configure(shardId, 0, 0);
    expect(window.expire(noonMs, 2)).toBe(0);
    window.configure(7, minuteMs, hourMs);
    window.add(7, oldMs, 1n);
    expect(window.expire(noonMs, 2)).toBe(1);
    window.clear();
    expect(window.expire(noonMs, 2)).toBe(0);
  });

  it('a sweep of 0 shards visits nothing; a negative or fractional bound is a programmer error', () => {
    const window = new WindowBuckets();
    expect(window.expire(noonMs, 0)).toBe(0);
    window.configure(1, minuteMs, hourMs);
    window.add(1, noonMs - 2 * hourMs, 1n);
    expect(window.expire(noonMs, 0)).toBe(0);
    expect(window.bucketCount).toBe(1);
    expect(() => window.expire(noonMs, -1)).toThrow(/shardsMax -1/);
    expect(() => window.expire(noonMs, 1.5)).toThrow(/shardsMax 1.5/);
    expect(window.expire(noonMs, 1)).toBe(1);
  });

  it('under random churn every shard present throughout is swept within a bounded number of calls', () => {
    const random = seededRandom(0x3b0c);
    const window = new WindowBuckets();
    const shardsMax = 2;
    const oldMs = noonMs - 2 * hourMs;
    // Calls since each present shard was last visited (a visit empties it).
    const waitingCalls = new Map<number, number>();
    for (let call = 0; call < 2_000; call++) {
      const shardId = randomInt(random, 1, 8);
      if (random() < 0.3) {
        if (waitingCalls.has(shardId)) {
          window.configure(shardId, 0, 0);
          waitingCalls.delete(shardId);
        } else {
          window.configure(shardId, minuteMs, hourMs);
          waitingCalls.set(shardId, 0);
        }
      }
      for (const present of waitingCalls.keys()) window.add(present, oldMs, 1n);
      window.expire(noonMs, shardsMax);
      for (const [present, waited] of waitingCalls) {
        if (window.buckets(present).length === 0) {
          waitingCalls.set(present, 0);
        } else {
          // At most 8 shards and one added per call: 7 others plus the ones
          // added meanwhile, two per call, come round within 9 calls.
          expect(waited + 1, `shard ${present} at call ${call}`).toBeLessThan(9);
          waitingCalls.set(present, waited + 1);
        }
      }
      expect(window.bucketCount).toBe(heldBucketCount(window));
    }
  });

  it('changing bucketMs drops the history; changing only the retention keeps it', () => {
    const window = new WindowBuckets();
    window.configure(1, minuteMs, 2 * hourMs);
    window.add(1, at(11, 0), 1n);
    window.add(1, at(11, 59), 2n);
    window.add(1, at(12, 0), 4n);

    window.configure(1, minuteMs, hourMs);
    expect(window.configOf(1)).toEqual({ bucketMs: minuteMs, retentionMs: hourMs });
    expect(window.bucketCount).toBe(3);
    // A shorter retention hides the 11:00 bucket at once, before any sweep.
    expect(readLast(window, 1, at(12, 0, 30), 2 * hourMs)).toBe(6n);
    window.configure(1, minuteMs, 2 * hourMs);
    expect(readLast(window, 1, at(12, 0, 30), 2 * hourMs)).toBe(7n);

    window.configure(1, 5 * minuteMs, 2 * hourMs);
    expect(window.configOf(1)).toEqual({ bucketMs: 5 * minuteMs, retentionMs: 2 * hourMs });
    expect(window.buckets(1)).toEqual([]);
    expect(window.bucketCount).toBe(0);
    expect(readLast(window, 1, at(12, 0, 30), 2 * hourMs)).toBe(0n);
    window.add(1, at(12, 3), 8n);
    expect(window.buckets(1)).toEqual([[at(12, 0), 8n]]);
  });

  it('configure(0, 0) removes the shard window and its buckets', () => {
    const window = new WindowBuckets();
    window.configure(1, minuteMs, hourMs);
    window.configure(2, minuteMs, hourMs);
    window.add(1, noonMs, 3n);
    window.add(2, noonMs, 4n);
    window.configure(1, 0, 0);
    expect(window.configOf(1)).toBeUndefined();
    expect(window.shardCount).toBe(1);
    expect(window.bucketCount).toBe(1);
    expect(window.sum(1, noonMs - hourMs, noonMs + minuteMs)).toBe(0n);
    window.add(1, noonMs, 3n);
    expect(window.bucketCount).toBe(1);
    // Removing a shard that has no window is a no-op.
    window.configure(1, 0, 0);
    expect(window.shardIds()).toEqual([2]);
  });

  it('configure rejects an invalid window as a programmer error', () => {
    const window = new WindowBuckets();
    expect(() => window.configure(1, 500, hourMs)).toThrow(/shard 1: window bucket is 500 ms/);
    expect(() => window.configure(1, minuteMs, Number.NaN)).toThrow(/not an integer/);
    expect(window.shardCount).toBe(0);
  });

  it('buckets() and load() round-trip a checkpoint, replacing what the shard held', () => {
    const source = new WindowBuckets();
    source.configure(1, minuteMs, hourMs);
    source.configure(2, secondMs, minuteMs);
    source.add(1, at(12, 5), 1n);
    source.add(1, at(11, 50), -2n);
    source.add(1, at(12, 0, 30), 3n);
    source.add(2, at(12, 0, 1, 500), 9n);
    expect(source.buckets(1).map(([startMs]) => startMs)).toEqual([at(11, 50), at(12, 0), at(12, 5)]);

    const target = new WindowBuckets();
    target.configure(1, 5 * minuteMs, dayMs);
    target.add(1, at(12, 0), 100n);
    for (const shardId of source.shardIds()) {
      const config = source.configOf(shardId);
      if (config === undefined) throw new Error('shard without config');
      target.load(shardId, config, source.buckets(shardId));
    }
    expect(target.configOf(1)).toEqual({ bucketMs: minuteMs, retentionMs: hourMs });
    expect(target.buckets(1)).toEqual(source.buckets(1));
    expect(target.buckets(2)).toEqual(source.buckets(2));
    expect(target.bucketCount).toBe(4);
    expect(readLast(target, 1, at(12, 5), hourMs)).toBe(2n);
    expect(readLast(target, 2, at(12, 0, 1), minuteMs)).toBe(9n);

    expect(() => target.load(3, { bucketMs: minuteMs, retentionMs: hourMs }, [[noonMs + 1, 1n]])).toThrow(/multiple/);
    expect(() =>
      target.load(3, { bucketMs: minuteMs, retentionMs: hourMs }, [
        [noonMs, 1n],
        [noonMs, 1n],
      ]),
    ).toThrow(/out of order/);
    expect(() => target.load(3, { bucketMs: 0, retentionMs: 0 }, [[noonMs, 1n]])).toThrow(/without a window/);

    target.load(1, { bucketMs: 0, retentionMs: 0 }, []);
    expect(target.configOf(1)).toBeUndefined();

    target.clear();
    expect(target.shardCount).toBe(0);
    expect(target.bucketCount).toBe(0);
  });

  it('sum matches the definition on random data, sparse and dense shards alike', () => {
    const random = seededRandom(0x51de);
    for (let round = 0; round < 200; round++) {
      const bucketMs = randomInt(random, 1, 5) * 10 * secondMs;
      const retentionMs = randomInt(random, 1, 30) * bucketMs;
      const window = new WindowBuckets();
      window.configure(1, bucketMs, retentionMs);
      // Sparse shards hold a few buckets, dense ones many: the two read paths.
      const addCount = random() < 0.5 ? randomInt(random, 0, 3) : randomInt(random, 20, 200);
      const spanMs = 40 * bucketMs;
      const added: [atMs: number, amount: bigint][] = [];
      for (let index = 0; index < addCount; index++) {
        const atMs = noonMs + randomInt(random, -spanMs, spanMs);
        const amount = BigInt(randomInt(random, -1_000, 1_000));
        window.add(1, atMs, amount);
        added.push([atMs, amount]);
      }
      if (random() < 0.5) window.expire(noonMs + randomInt(random, -spanMs, 0), 1);
      for (let read = 0; read < 20; read++) {
        const toMs = noonMs + randomInt(random, 0, spanMs);
        const fromMs = toMs - randomInt(random, 0, 2 * spanMs);
        // The definition: buckets starting in [fromMs, toMs), not expired at toMs.
        let expected = 0n;
        for (const [atMs, amount] of added) {
          const startMs = Math.floor(atMs / bucketMs) * bucketMs;
          const expired = startMs + bucketMs <= toMs - retentionMs;
          if (startMs >= fromMs && startMs < toMs && !expired) expected += amount;
        }
        expect(window.sum(1, fromMs, toMs), `round ${round} read ${read}`).toBe(expected);
      }
      expect(window.bucketCount).toBe(heldBucketCount(window));
    }
  });

  it('bucket starts are exact before the epoch too', () => {
    const window = new WindowBuckets();
    window.configure(1, minuteMs, hourMs);
    window.add(1, -1, 1n);
    window.add(1, -minuteMs, 2n);
    window.add(1, 0, 4n);
    expect(window.buckets(1)).toEqual([
      [-minuteMs, 3n],
      [0, 4n],
    ]);
  });
});
