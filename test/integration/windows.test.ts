// Time-windowed counters through a real cluster, with short buckets so
// expiry happens within the test: window sums over every shard, duplicates
// land in no bucket, expiry leaves the lifetime total alone, bad input
// changes nothing. (Bucket arithmetic with an injected clock is in
// test/unit/window/window-buckets.test.ts.)
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { status } from '@grpc/grpc-js';
import { rejection } from '../helpers/rejection.ts';
import { startCluster, waitFor, type TestCluster } from '../helpers/cluster.ts';

const bucketMs = 1_000;
const retentionMs = 4_000;

describe('windowed counters', () => {
  let tc: TestCluster;
  beforeAll(async () => {
    tc = await startCluster({ pairs: 2, routerArgs: ['--refresh-interval-ms', '300'] });
  });
  afterAll(async () => {
    await tc?.stop();
  });

  it('increments on 4 shards over 2 pairs are summed over the last buckets; duplicates land in no bucket; expiry leaves the lifetime total', async () => {
    const { client } = tc;
    const configured = await client.configure('hits', { window: { bucketMs, retentionMs } });
    expect([configured.kind, configured.windowBucketMs, configured.windowRetentionMs]).toEqual(['total', bucketMs, retentionMs]);
    await client.setShards('hits', 4);
    let acknowledged = 0n;
    await Promise.all(
      Array.from({ length: 8 }, async (_, caller) => {
        for (let step = 0; step < 10; step++) {
          await client.increment('hits', caller + 1);
          acknowledged += BigInt(caller + 1);
        }
      }),
    );
    expect((await client.increment('hits', 1000, { idempotencyKey: 'once' })).applied).toBe(true);
    expect((await client.increment('hits', 1000, { idempotencyKey: 'once' })).applied).toBe(false);
    acknowledged += 1000n;
    const window = await client.readWindow('hits', retentionMs);
    expect(window.total).toBe(acknowledged);
    expect(window.exact).toBe(true);
    expect(window.bucketMs).toBe(bucketMs);
    expect(window.buckets).toBe(retentionMs / bucketMs);
    expect(window.toUnixMs - window.fromUnixMs).toBe(retentionMs);
    expect(window.asOfUnixMs).toBeGreaterThanOrEqual(window.toUnixMs - bucketMs);
    expect(window.asOfUnixMs).toBeLessThan(window.toUnixMs);
    expect((await client.read('hits')).total).toBe(acknowledged);

    // Once every bucket is past retention the window is empty; the total is not.
    await waitFor(async () => (await client.readWindow('hits', retentionMs)).total === 0n, {
      timeoutMs: retentionMs + 5_000,
      what: 'the buckets to expire',
    });
    expect((await client.read('hits')).total).toBe(acknowledged);
    await client.increment('hits', 3);
    expect((await client.readWindow('hits', 2 * bucketMs)).total).toBe(3n);
  });

  it('a short window holds only the recent buckets', async () => {
    const { client } = tc;
    await client.configure('recent', { window: { bucketMs, retentionMs: 10 * bucketMs } });
    await client.increment('recent', 10);
    // Wait until that increment's bucket is three buckets back: a read of the
    // last two buckets then misses it, even if the read lands a bucket late.
    const firstBucketEnd = (await client.readWindow('recent', bucketMs)).toUnixMs;
    await waitFor(() => Date.now() >= firstBucketEnd + 2 * bucketMs + 50, { timeoutMs: 6_000 });
    await client.increment('recent', 1);
    expect((await client.readWindow('recent', 2 * bucketMs)).total).toBe(1n);
    expect((await client.readWindow('recent', 10 * bucketMs)).total).toBe(11n);
  });

  it('CACHED window reads are served from a sum no older than the refresh interval', async () => {
    const { client } = tc;
    await client.configure('cached-hits', { window: { bucketMs, retentionMs } });
    await client.increment('cached-hits', 2);
    const first = await client.readWindow('cached-hits', retentionMs, { consistency: 'cached' });
    expect([first.exact, first.total]).toEqual([false, 2n]);
    await client.increment('cached-hits', 2);
    const second = await client.readWindow('cached-hits', retentionMs, { consistency: 'cached' });
    expect(second.stalenessMs).toBeLessThanOrEqual(300);
    await waitFor(async () => (await client.readWindow('cached-hits', retentionMs, { consistency: 'cached' })).total === 4n, {
      timeoutMs: 3_000,
    });
  });

  it('a new bucket width restarts the window on every shard at once, even shards that have not heard of it', async () => {
    const { client } = tc;
    await client.configure('rewidth', { window: { bucketMs: 60_000, retentionMs: 600_000 } });
    await client.setShards('rewidth', 4);
    for (let step = 0; step < 20; step++) await client.increment('rewidth', 1);
    expect((await client.readWindow('rewidth', 600_000)).total).toBe(20n);
    await client.configure('rewidth', { window: { bucketMs, retentionMs } });
    // No shard has had an increment since: none may sum its old, wider buckets.
    expect((await client.readWindow('rewidth', retentionMs)).total).toBe(0n);
    await client.increment('rewidth', 5);
    expect((await client.readWindow('rewidth', retentionMs)).total).toBe(5n);
    expect((await client.read('rewidth')).total).toBe(25n);
  });

  it('bad input gets a clear status and changes nothing', async () => {
    const { client } = tc;
    await client.configure('strict-window', { window: { bucketMs, retentionMs } });
    await client.increment('strict-window', 1);
    expect((await rejection(client.readWindow('strict-window', retentionMs + 1))).grpcCode).toBe(status.OUT_OF_RANGE);
    expect((await rejection(client.readWindow('strict-window', 0))).grpcCode).toBe(status.INVALID_ARGUMENT);
    expect((await rejection(client.readWindow('strict-window', -5))).grpcCode).toBe(status.INVALID_ARGUMENT);
    expect((await rejection(client.readWindow('no-such-counter', 1_000))).grpcCode).toBe(status.NOT_FOUND);
    await client.increment('unwindowed', 1);
    expect((await rejection(client.readWindow('unwindowed', 1_000))).grpcCode).toBe(status.FAILED_PRECONDITION);
    for (const window of [
      { bucketMs: 500, retentionMs: 5_000 },
      { bucketMs: 1_500, retentionMs: 15_000 },
      { bucketMs: 1_000, retentionMs: 1_500 },
      { bucketMs: 60_000, retentionMs: 401 * 86_400_000 },
      { bucketMs: 1_000, retentionMs: 10_001_000 },
      { bucketMs: 1_000, retentionMs: 0 },
    ]) {
      expect((await rejection(client.configure('strict-window', { window }))).grpcCode, JSON.stringify(window)).toBe(
        status.INVALID_ARGUMENT,
      );
    }
    const description = await client.describe('strict-window');
    expect([description.windowBucketMs, description.windowRetentionMs]).toEqual([bucketMs, retentionMs]);
    expect((await client.readWindow('strict-window', retentionMs)).total).toBe(1n);
    // Windows belong to totals only.
    await client.addDistinct('a-sketch', ['x']);
    expect((await rejection(client.configure('a-sketch', { window: { bucketMs, retentionMs } }))).grpcCode).toBe(
      status.FAILED_PRECONDITION,
    );
    // Turning the window off keeps the total and refuses window reads.
    await client.configure('strict-window', { window: { bucketMs: 0, retentionMs: 0 } });
    expect((await rejection(client.readWindow('strict-window', 1_000))).grpcCode).toBe(status.FAILED_PRECONDITION);
    expect((await client.read('strict-window')).total).toBe(1n);
  });
});
