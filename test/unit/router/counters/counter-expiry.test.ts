// Unit tests for TTL expiry: which TTL is in force, and the sweeper against
// an in-memory directory and a fake deleter (the real delete path has its
// own tests) with an injected clock: idle counters go, written ones stay,
// the pace per slice holds, a write racing the batch keeps its counter.
import { describe, expect, it } from 'vitest';
import { CounterExpiry, ttlInForce, type CounterDeleter, type ExpirySettings } from '../../../../src/router/counters/expiry.ts';
import type { ExpiryDirectory } from '../../../../src/router/directory/index.ts';
import type { CounterInfo } from '../../../../src/router/directory/contract.ts';
import { createLogger } from '../../../../src/common/index.ts';

/** A counter as a plain object whose idle clock a test moves (the directory's handles are read-only). */
type HeldCounter = { -readonly [Field in keyof CounterInfo]: CounterInfo[Field] };

function counterOf(name: string, lastWriteMonotonicMs: number, ttlMs: number | null = null): HeldCounter {
  return {
    name,
    kind: 'total',
    window: { bucketMs: 0, retentionMs: 0 },
    shards: [{ shardIndex: 0, shardId: 1, pairIndex: 0 }],
    writableShardCount: 1,
    createdMs: 0,
    growths: [],
    autoscale: true,
    generation: 0,
    ttlMs,
    lastWriteMonotonicMs,
  };
}

/** A directory of counters in a Map (its iterator is live, as the real one's) and a deleter that removes what is still expired. */
function harness(settings: Partial<ExpirySettings> = {}) {
  const counters = new Map<string, HeldCounter>();
  const directory: ExpiryDirectory = { get: (name) => counters.get(name), liveCounters: () => counters.values() };
  const batches: string[][] = [];
  let expiredCount = 0;
  let clockMs = 1_000_000;
  const hooks = { beforeCut: (_names: readonly string[]): void => {}, fail: false };
  const deleter: CounterDeleter = {
    async deleteCounters(names, cause, stillExpired) {
      expect(cause).toBe('ttl');
      batches.push([...names]);
      hooks.beforeCut(names);
      if (hooks.fail) throw new Error('nodes unavailable');
      const deleted = names.filter((name) => stillExpired(name));
      for (const name of deleted) counters.delete(name);
      return deleted;
    },
  };
  const expiry = new CounterExpiry(
    directory,
    deleter,
    { defaultTtlMs: 0, sweepIntervalMs: 100, checksPerSweep: 10_000, deletesPerSweep: 50, ...settings },
    { onExpired: (count) => (expiredCount += count) },
    createLogger('test', 'error'),
    () => clockMs,
  );
  return {
    counters,
    expiry,
    batches,
    hooks,
    add: (counter: HeldCounter) => counters.set(counter.name, counter),
    advance: (ms: number) => (clockMs += ms),
    now: () => clockMs,
    expiredCount: () => expiredCount,
  };
}

describe('counter expiry', () => {
  it('the TTL in force is the counter’s own, else the router default; 0 of its own exempts it', () => {
    expect(ttlInForce(null, 0)).toEqual({ ttlMs: 0, from: 'none' });
    expect(ttlInForce(null, 60_000)).toEqual({ ttlMs: 60_000, from: 'default' });
    expect(ttlInForce(5_000, 60_000)).toEqual({ ttlMs: 5_000, from: 'counter' });
    expect(ttlInForce(5_000, 0)).toEqual({ ttlMs: 5_000, from: 'counter' });
    expect(ttlInForce(0, 60_000)).toEqual({ ttlMs: 0, from: 'never' });
  });

  it('only counters idle for their whole TTL are handed to the deleter; never early', async () => {
    const h = harness({ defaultTtlMs: 10_000 });
    const startMs = h.now();
    h.add(counterOf('default-ttl', startMs));
    h.add(counterOf('own-short', startMs, 2_000));
    h.add(counterOf('own-long', startMs, 60_000));
    h.add(counterOf('never', startMs, 0));
    h.advance(1_999);
    await h.expiry.sweep();
    expect(h.batches).toEqual([]);
    h.advance(1);
    await h.expiry.sweep();
    expect(h.batches).toEqual([['own-short']]);
    h.advance(7_999);
    await h.expiry.sweep();
    await h.expiry.sweep();
    expect(h.counters.has('default-ttl')).toBe(true);
    h.advance(1);
    await h.expiry.sweep();
    await h.expiry.sweep();
    expect(h.batches.flat()).toEqual(['own-short', 'default-ttl']);
    h.advance(10 * 365 * 86_400_000);
    await h.expiry.sweep();
    await h.expiry.sweep();
    expect([...h.counters.keys()]).toEqual(['never']);
    expect(h.expiredCount()).toBe(3);
  });

  it('no router default and no TTL of its own: nothing ever expires', async () => {
    const h = harness();
    for (let index = 0; index < 100; index++) h.add(counterOf(`c${index}`, 0));
    h.advance(1e12);
    for (let sweep = 0; sweep < 5; sweep++) await h.expiry.sweep();
    expect(h.batches).toEqual([]);
    expect(h.counters.size).toBe(100);
  });

  it('10,000 idle counters go at most deletesPerSweep a slice; a counter written all along stays', async () => {
    const h = harness({ defaultTtlMs: 5_000, deletesPerSweep: 50 });
    for (let index = 0; index < 10_000; index++) h.add(counterOf(`idle:${index}`, h.now()));
    const hot = counterOf('hot', h.now());
    h.add(hot);
    h.advance(5_000);
    let sweepCount = 0;
    while (h.counters.size > 1) {
      hot.lastWriteMonotonicMs = h.now();
      await h.expiry.sweep();
      h.advance(100);
      sweepCount++;
      expect(sweepCount).toBeLessThan(1_000);
    }
    expect([...h.counters.keys()]).toEqual(['hot']);
    expect(Math.max(...h.batches.map((batch) => batch.length))).toBe(50);
    // 200 slices of 50, plus the slice that ends the pass: no name handed over twice.
    expect(h.batches.flat()).toHaveLength(10_000);
    expect(new Set(h.batches.flat()).size).toBe(10_000);
    expect(sweepCount).toBeLessThanOrEqual(201);
    expect(h.expiredCount()).toBe(10_000);
  });

  it('a write between the slice and the deleter’s cut keeps its counter', async () => {
    const h = harness({ defaultTtlMs: 1_000 });
    h.add(counterOf('a', h.now()));
    h.add(counterOf('b', h.now()));
    h.advance(1_000);
    h.hooks.beforeCut = () => {
      // An increment resolves "b" while the batch is on its way.
      h.counters.get('b')!.lastWriteMonotonicMs = h.now();
    };
    await h.expiry.sweep();
    expect(h.batches).toEqual([['a', 'b']]);
    expect([...h.counters.keys()]).toEqual(['b']);
    expect(h.expiredCount()).toBe(1);
  });

  it('a slice checks at most checksPerSweep counters; a pass is timed, and the next starts over', async () => {
    const h = harness({ defaultTtlMs: 60_000, checksPerSweep: 100 });
    for (let index = 0; index < 1_000; index++) h.add(counterOf(`c${index}`, h.now()));
    for (let sweep = 0; sweep < 10; sweep++) {
      await h.expiry.sweep();
      h.advance(100);
    }
    // 10 slices of 100 checked every counter; the 11th finds the end. The pass under way shows its age.
    expect(h.expiry.passDurationMs()).toBe(1_000);
    await h.expiry.sweep();
    expect(h.expiry.passDurationMs()).toBe(1_000);
    // One that expires now is found within the next pass, wherever it sits.
    h.counters.get('c3')!.lastWriteMonotonicMs = h.now() - 60_000;
    for (let sweep = 0; sweep < 11 && h.batches.length === 0; sweep++) await h.expiry.sweep();
    expect(h.batches).toEqual([['c3']]);
    // The pass under way stalls 5 s: it shows before it ends, and stays the figure until a quicker pass ends.
    h.advance(5_000);
    expect(h.expiry.passDurationMs()).toBe(5_000);
    for (let sweep = 0; sweep < 11; sweep++) await h.expiry.sweep();
    expect(h.expiry.passDurationMs()).toBe(5_000);
    for (let sweep = 0; sweep < 11; sweep++) await h.expiry.sweep();
    expect(h.expiry.passDurationMs()).toBe(0);
  });

  it('a counter created in the middle of a pass is checked in that pass', async () => {
    const h = harness({ defaultTtlMs: 1_000, checksPerSweep: 10 });
    for (let index = 0; index < 30; index++) h.add(counterOf(`c${index}`, h.now()));
    await h.expiry.sweep();
    h.add(counterOf('born-idle', h.now() - 1_000));
    await h.expiry.sweep();
    await h.expiry.sweep();
    expect(h.batches).toEqual([]);
    await h.expiry.sweep();
    expect(h.batches).toEqual([['born-idle']]);
    // ... in the slice that ended the pass (no time passed: it took 0 ms).
    expect(h.expiry.passDurationMs()).toBe(0);
  });

  it('a failed batch is tried again on the next pass, with counters created since', async () => {
    const h = harness({ defaultTtlMs: 1_000, checksPerSweep: 10 });
    for (let index = 0; index < 5; index++) h.add(counterOf(`c${index}`, h.now()));
    h.advance(1_000);
    h.hooks.fail = true;
    await expect(h.expiry.sweep()).rejects.toThrow('nodes unavailable');
    expect(h.counters.size).toBe(5);
    h.hooks.fail = false;
    // That slice had reached the end of the pass: the next one starts over, with a counter created meanwhile.
    h.add(counterOf('late', h.now() - 1_000));
    await h.expiry.sweep();
    expect(h.batches.at(-1)).toEqual(['c0', 'c1', 'c2', 'c3', 'c4', 'late']);
    expect(h.counters.size).toBe(0);
    expect(h.expiredCount()).toBe(6);
  });
});
