// The coalescing client: concurrent increment calls share batches (on its
// IncrementStream, or unary IncrementBatch calls with incrementStream: false), and each caller still gets what a unary call would
// give it: its own result, its own error, bad input refused before sending.
// Calls are counted by the router's own metrics, per RPC.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { status } from '@grpc/grpc-js';
import { createTallyClient, TallyError, type TallyClient } from '../../src/client/index.ts';
import { INT64_MAX } from '../../src/wire/index.ts';
import { scrapeMetric, startCluster, type TestCluster } from '../helpers/cluster.ts';

describe('coalescing client', () => {
  let tc: TestCluster;
  let unary: TallyClient;

  beforeAll(async () => {
    tc = await startCluster({ pairs: 2, metrics: true, coalesce: true });
    // No coalesce option: the default is one Increment call per increment (the last test checks it).
    unary = createTallyClient({ address: tc.cluster.routerAddress, deadlineMs: 10_000 });
  });
  afterAll(async () => {
    unary?.close();
    await tc?.stop();
  });

  /** Calls the router has answered, per RPC (0 before the first). */
  /** Batches are counted whether they came as IncrementBatch calls or on an IncrementStream (stream: those alone). */
  async function routerCalls(): Promise<{ increment: number; batch: number; stream: number; rejected: number }> {
    const count = (name: string, labels: Record<string, string> = {}) => scrapeMetric(tc.routerMetricsPort, name, labels).catch(() => 0);
    const stream = await count('tally_increment_latency_seconds_count', { rpc: 'increment_stream' });
    return {
      increment: await count('tally_increment_latency_seconds_count', { rpc: 'increment' }),
      batch: (await count('tally_increment_latency_seconds_count', { rpc: 'increment_batch' })) + stream,
      stream,
      rejected: await count('tally_increments_rejected_total'),
    };
  }

  async function rejection(attempt: Promise<unknown>): Promise<TallyError> {
    const error = await attempt.then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(TallyError);
    return error as TallyError;
  }

  it('64 increments made in one tick leave in one batch on the IncrementStream; the total is exact', async () => {
    const before = await routerCalls();
    const results = await Promise.all(Array.from({ length: 64 }, (_, index) => tc.client.increment('tick', index + 1)));
    const after = await routerCalls();
    expect(results.every((result) => result.applied)).toBe(true);
    expect(after.batch - before.batch).toBe(1);
    expect(after.stream - before.stream).toBe(1);
    expect(after.increment - before.increment).toBe(0);
    expect((await tc.client.read('tick')).total).toBe(BigInt((64 * 65) / 2));
  });

  it('64 callers looping on increment make fewer calls than increments; keyed and unkeyed totals are exact', async () => {
    const before = await routerCalls();
    const callers = 64;
    const perCaller = 25;
    await Promise.all(
      Array.from({ length: callers }, async (_, caller) => {
        for (let index = 0; index < perCaller; index++) {
          const counter = caller % 2 === 0 ? 'loop:keyed' : 'loop:unkeyed';
          const amount = ((caller + index) % 7) - 3 || 5;
          await tc.client.increment(counter, amount, caller % 2 === 0 ? undefined : { idempotencyKey: null });
        }
      }),
    );
    const after = await routerCalls();
    const calls = after.batch - before.batch + (after.increment - before.increment);
    expect(calls).toBeGreaterThan(0);
    expect(calls).toBeLessThan(callers * perCaller);
    const expected = (parity: number): bigint => {
      let sum = 0n;
      for (let caller = parity; caller < callers; caller += 2)
        for (let index = 0; index < perCaller; index++) sum += BigInt(((caller + index) % 7) - 3 || 5);
      return sum;
    };
    const [keyed, unkeyed] = await tc.client.readMany(['loop:keyed', 'loop:unkeyed']);
    expect(keyed!.total).toBe(expected(0));
    expect(unkeyed!.total).toBe(expected(1));
  });

  it('the same key twice in one batch applies once; the second caller hears applied=false', async () => {
    const [first, second] = await Promise.all([
      tc.client.increment('same-key', 4, { idempotencyKey: 'order-7' }),
      tc.client.increment('same-key', 4, { idempotencyKey: 'order-7' }),
    ]);
    expect([first!.applied, second!.applied].sort()).toEqual([false, true]);
    expect((await tc.client.read('same-key')).total).toBe(4n);
  });

  it('bad input rejects at once with the unary error and is never sent', async () => {
    const cases: [string, number | bigint, string | undefined, number][] = [
      ['', 1, undefined, status.INVALID_ARGUMENT],
      ['bad\nname', 1, undefined, status.INVALID_ARGUMENT],
      ['fine', 0, undefined, status.INVALID_ARGUMENT],
      ['fine', INT64_MAX + 1n, undefined, status.OUT_OF_RANGE],
      ['fine', 1, 'k'.repeat(129), status.INVALID_ARGUMENT],
    ];
    for (const [counter, amount, key, grpcCode] of cases) {
      const before = await routerCalls();
      const coalesced = await rejection(tc.client.increment(counter, amount, { idempotencyKey: key }));
      const after = await routerCalls();
      expect(after).toEqual(before);
      const alone = await rejection(unary.increment(counter, amount, { idempotencyKey: key }));
      expect(coalesced.grpcCode).toBe(grpcCode);
      expect([coalesced.code, coalesced.message]).toEqual([alone.code, alone.message]);
    }
  });

  it('an increment past int64 fails OUT_OF_RANGE alone; the keyed callers it travelled with are applied', async () => {
    await tc.client.increment('edge', INT64_MAX - 10n);
    const before = await routerCalls();
    const outcomes = await Promise.allSettled([
      ...Array.from({ length: 20 }, () => tc.client.increment('beside', 1)),
      tc.client.increment('edge', 11),
      ...Array.from({ length: 20 }, () => tc.client.increment('beside', 1)),
    ]);
    const after = await routerCalls();
    expect(after.batch - before.batch).toBeGreaterThanOrEqual(1);
    const failures = outcomes.filter((outcome) => outcome.status === 'rejected');
    expect(failures).toHaveLength(1);
    expect(outcomes[20]!.status).toBe('rejected');
    const coalesced = (outcomes[20] as PromiseRejectedResult).reason as TallyError;
    const alone = await rejection(unary.increment('edge', 11));
    expect(coalesced.grpcCode).toBe(status.OUT_OF_RANGE);
    expect([coalesced.code, coalesced.message]).toEqual([alone.code, alone.message]);
    const [edge, beside] = await tc.client.readMany(['edge', 'beside']);
    expect(edge!.total).toBe(INT64_MAX - 10n);
    expect(beside!.total).toBe(40n);
  });

  it('an increment of a distinct counter fails FAILED_PRECONDITION alone; unkeyed callers beside it are applied once', async () => {
    await tc.client.addDistinct('sketch', ['a']);
    const outcomes = await Promise.allSettled([
      ...Array.from({ length: 10 }, () => tc.client.increment('near-sketch', 2, { idempotencyKey: null })),
      tc.client.increment('sketch', 1, { idempotencyKey: null }),
      ...Array.from({ length: 10 }, () => tc.client.increment('near-sketch', 3, { idempotencyKey: null })),
    ]);
    expect(outcomes.filter((outcome) => outcome.status === 'rejected')).toHaveLength(1);
    const coalesced = (outcomes[10] as PromiseRejectedResult).reason as TallyError;
    const alone = await rejection(unary.increment('sketch', 1, { idempotencyKey: null }));
    expect(coalesced.grpcCode).toBe(status.FAILED_PRECONDITION);
    expect([coalesced.code, coalesced.message]).toEqual([alone.code, alone.message]);
    expect((await tc.client.read('near-sketch')).total).toBe(50n);
  });

  it('with incrementStream: false the batches are unary IncrementBatch calls, with the same results', async () => {
    const batching = createTallyClient({ address: tc.cluster.routerAddress, deadlineMs: 10_000, coalesce: true, incrementStream: false });
    try {
      const before = await routerCalls();
      const results = await Promise.all(Array.from({ length: 16 }, () => batching.increment('unary-batches', 2)));
      const after = await routerCalls();
      expect(results.every((result) => result.applied)).toBe(true);
      expect(after.batch - before.batch).toBe(1);
      expect(after.stream - before.stream).toBe(0);
      expect((await tc.client.read('unary-batches')).total).toBe(32n);
    } finally {
      batching.close();
    }
  });

  it('by default (no coalesce option) every increment is its own unary Increment call', async () => {
    const before = await routerCalls();
    await Promise.all(Array.from({ length: 32 }, () => unary.increment('unary', 1)));
    const after = await routerCalls();
    expect(after.increment - before.increment).toBe(32);
    expect(after.batch - before.batch).toBe(0);
    expect((await tc.client.read('unary')).total).toBe(32n);
  });
});
