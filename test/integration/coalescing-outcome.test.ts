// The coalescing client against a batch applied on one pair and refused by
// another: the router answers the batch's status with reason OUTCOME_UNKNOWN,
// and no unkeyed item of it may be sent again (G2). A scripted router serves
// the answer a real cluster gives only under a race (a stale epoch on one
// pair after another applied): it keeps its own totals, so the ledger's
// bounds are checked against what it applied.
import { afterEach, describe, expect, it } from 'vitest';
import { createTallyClient, TallyError, type TallyClient } from '../../src/client/index.ts';
import { ErrorCode, TallyError as ServerError, ErrorReason } from '../../src/wire/index.ts';
import { startFakeRouter, type FakeRouter } from '../helpers/fake-router.ts';

/** ok <= total <= ok + unknown, classified by the error's reason: NOT_APPLIED is failed, anything else unknown. */
class ReasonLedger {
  ok = new Map<string, bigint>();
  unknown = new Map<string, bigint>();
  outcomes = { ok: 0, unknown: 0, failed: 0 };
  record(counter: string, amount: bigint, error?: unknown): void {
    if (error === undefined) {
      this.ok.set(counter, (this.ok.get(counter) ?? 0n) + amount);
      this.outcomes.ok++;
    } else if (error instanceof TallyError && error.certainlyNotApplied) {
      this.outcomes.failed++;
    } else {
      this.unknown.set(counter, (this.unknown.get(counter) ?? 0n) + amount);
      this.outcomes.unknown++;
    }
  }
  expectWithinBounds(totals: Map<string, bigint>): void {
    for (const counter of new Set([...totals.keys(), ...this.ok.keys()])) {
      const total = totals.get(counter) ?? 0n;
      const ok = this.ok.get(counter) ?? 0n;
      const unknown = this.unknown.get(counter) ?? 0n;
      const what = `${counter}: total ${total}, ok ${ok}, unknown ${unknown}`;
      expect(total, what).toBeGreaterThanOrEqual(ok);
      expect(total, what).toBeLessThanOrEqual(ok + unknown);
    }
  }
}

describe('coalescing client: outcome-unknown batches', () => {
  let router: FakeRouter | undefined;
  let client: TallyClient | undefined;
  afterEach(async () => {
    client?.close();
    await router?.stop();
    client = undefined;
    router = undefined;
  });

  it('unkeyed items of a batch that failed FAILED_PRECONDITION after one pair applied are unknown, never re-sent: total <= ok + unknown', async () => {
    // Items at even places live on pair A (applied), at odd places on pair B (stale epoch: refused whole).
    router = await startFakeRouter({
      incrementBatch: (items) => ({
        appliedIndexes: items.map((_, index) => index).filter((index) => index % 2 === 0),
        failure: new ServerError(ErrorCode.failedPrecondition, 'stale epoch: request 3, node primary at 4', undefined, {
          reason: ErrorReason.outcomeUnknown,
        }),
      }),
    });
    client = createTallyClient({ address: router.address, coalesce: true, deadlineMs: 5_000 });
    const ledger = new ReasonLedger();
    const counters = ['split:a', 'split:b', 'split:c'];
    await Promise.all(
      Array.from({ length: 32 }, async (_, writer) => {
        for (let round = 0; round < 5; round++) {
          const counter = counters[(writer + round) % counters.length]!;
          const amount = BigInt((writer % 3) + 1);
          try {
            await client!.increment(counter, amount, { idempotencyKey: null });
            ledger.record(counter, amount);
          } catch (error) {
            ledger.record(counter, amount, error);
          }
        }
      }),
    );
    expect(router.calls.IncrementBatch ?? 0).toBeGreaterThan(0);
    ledger.expectWithinBounds(router.totals);
    expect(ledger.outcomes.unknown).toBeGreaterThan(0);
  });

  it('against a router without IncrementStream (UNIMPLEMENTED) the coalescer sends its batches as IncrementBatch calls', async () => {
    router = await startFakeRouter({ incrementBatch: (items) => ({ appliedIndexes: items.map((_, index) => index) }) });
    client = createTallyClient({ address: router.address, coalesce: true, deadlineMs: 5_000 });
    for (let round = 0; round < 3; round++) {
      const results = await Promise.all(Array.from({ length: 10 }, () => client!.increment('fallback', 1, { idempotencyKey: null })));
      expect(results.every((result) => result.applied)).toBe(true);
    }
    expect(router.totals.get('fallback')).toBe(30n);
    expect(router.calls.IncrementBatch).toBe(3);
  });

  it('a batch refused FAILED_PRECONDITION with nothing applied (NOT_APPLIED) sends its items alone: each caller gets its own answer', async () => {
    router = await startFakeRouter({
      incrementBatch: () => ({
        appliedIndexes: [],
        failure: new ServerError(ErrorCode.failedPrecondition, 'counter "sketch" is a distinct counter', undefined, {
          reason: ErrorReason.notApplied,
        }),
      }),
    });
    client = createTallyClient({ address: router.address, coalesce: true, deadlineMs: 5_000 });
    const results = await Promise.all(Array.from({ length: 8 }, () => client!.increment('alone', 1, { idempotencyKey: null })));
    expect(results.every((result) => result.applied)).toBe(true);
    expect(router.totals.get('alone')).toBe(8n);
    expect(router.calls.Increment).toBe(8);
  });
});
