// The coalescer against a scripted transport: what each caller hears and
// what is sent again when a batch fails, by status, keyed and unkeyed.
import { describe, expect, it } from 'vitest';
import { status } from '@grpc/grpc-js';
import { ErrorCode, TallyError, errorCodeOfGrpcStatus, reasonOf, ErrorReason, newCountersPerCallMax } from '../../../src/wire/index.ts';
import { IncrementCoalescer, type CoalescedItem, type CoalescerTransport } from '../../../src/client/streams/increment-coalescer.ts';

interface Sent {
  counters: string[];
  deadline: number;
}

/**
 * A transport that fails batches with `batchFailure` (once) and answers single
 * increments by `single`. Each failure carries the ErrorInfo reason a router
 * gives its status by default (reasonOf), or `batchReason` for the batch.
 */
function scripted(batchFailure: number | undefined, single: (item: CoalescedItem) => number = () => status.OK, batchReason?: ErrorReason) {
  const sent: Sent[] = [];
  let failuresLeft = batchFailure === undefined ? 0 : 1;
  const failure = (code: number, reason: ErrorReason = reasonOf(code)) =>
    new TallyError(errorCodeOfGrpcStatus(code), `scripted ${code}`, code, { reason });
  const transport: CoalescerTransport = {
    incrementBatch: (items, deadline) => {
      sent.push({ counters: items.map((item) => item.counter), deadline });
      if (failuresLeft > 0) {
        failuresLeft--;
        return Promise.reject(failure(batchFailure!, batchReason));
      }
      return Promise.resolve({ results: items.map(() => ({ applied: true, shard: 0 })) });
    },
    increment: (item, deadline) => {
      sent.push({ counters: [item.counter], deadline });
      const code = single(item);
      return code === status.OK ? Promise.resolve({ applied: true, shard: 0 }) : Promise.reject(failure(code));
    },
  };
  const coalescer = new IncrementCoalescer(transport, {
    attemptsMax: 12,
    attemptTimeoutMs: 2_000,
    retryAfterMs: (error, _attempt, _deadline, keyed) =>
      keyed && (error.grpcCode === status.UNAVAILABLE || error.grpcCode === status.DEADLINE_EXCEEDED) ? 0 : undefined,
  });
  return { sent, coalescer };
}

const keyed = (counter: string): CoalescedItem => ({ counter, amount: 1, idempotencyKey: Buffer.from(counter) });
const unkeyed = (counter: string): CoalescedItem => ({ counter, amount: 1, idempotencyKey: Buffer.alloc(0) });

async function outcomes(promises: Promise<unknown>[]): Promise<string[]> {
  return (await Promise.allSettled(promises)).map((outcome) =>
    outcome.status === 'fulfilled' ? 'ok' : (outcome.reason as TallyError).code,
  );
}

describe('increment coalescer', () => {
  it('calls made in one tick leave in one batch with the earliest deadline', async () => {
    const { sent, coalescer } = scripted(undefined);
    const now = performance.now();
    const results = await outcomes([
      coalescer.add(keyed('a'), now + 60_000),
      coalescer.add(unkeyed('b'), now + 900),
      coalescer.add(keyed('c'), now + 60_000),
    ]);
    expect(results).toEqual(['ok', 'ok', 'ok']);
    expect(sent).toHaveLength(1);
    expect(sent[0]!.counters).toEqual(['a', 'b', 'c']);
    expect(sent[0]!.deadline).toBe(now + 900);
  });

  it('UNAVAILABLE retries keyed items with their key and fails unkeyed ones, as unary calls', async () => {
    const { sent, coalescer } = scripted(status.UNAVAILABLE);
    const deadline = performance.now() + 10_000;
    const results = await outcomes([
      coalescer.add(keyed('k1'), deadline),
      coalescer.add(unkeyed('u'), deadline),
      coalescer.add(keyed('k2'), deadline),
    ]);
    expect(results).toEqual(['ok', ErrorCode.unavailable, 'ok']);
    expect(sent.slice(1).flatMap((call) => call.counters)).toEqual(['k1', 'k2']);
  });

  it('OUT_OF_RANGE of a batch maybe applied in part sends keyed items again alone (only the culprit fails) and fails unkeyed ones UNAVAILABLE', async () => {
    const { sent, coalescer } = scripted(
      status.OUT_OF_RANGE,
      (item) => (item.counter === 'huge' ? status.OUT_OF_RANGE : status.OK),
      ErrorReason.outcomeUnknown,
    );
    const deadline = performance.now() + 10_000;
    const results = await outcomes([
      coalescer.add(keyed('fine'), deadline),
      coalescer.add(keyed('huge'), deadline),
      coalescer.add(unkeyed('beside'), deadline),
    ]);
    expect(results).toEqual(['ok', ErrorCode.outOfRange, ErrorCode.unavailable]);
    // Sent alone: the two keyed items, each in its own call; never the unkeyed one.
    expect(sent.slice(1).map((call) => call.counters)).toEqual([['fine'], ['huge']]);
  });

  it('FAILED_PRECONDITION (refused before sending) sends unkeyed items again alone too', async () => {
    const { sent, coalescer } = scripted(status.FAILED_PRECONDITION, (item) =>
      item.counter === 'sketch' ? status.FAILED_PRECONDITION : status.OK,
    );
    const deadline = performance.now() + 10_000;
    const results = await outcomes([coalescer.add(unkeyed('a'), deadline), coalescer.add(unkeyed('sketch'), deadline)]);
    expect(results).toEqual(['ok', ErrorCode.failedPrecondition]);
    expect(sent).toHaveLength(3);
  });

  it('a batch failing FAILED_PRECONDITION with reason OUTCOME_UNKNOWN (applied on another pair) fails its unkeyed items as unknown, never re-sent', async () => {
    const { sent, coalescer } = scripted(status.FAILED_PRECONDITION, undefined, ErrorReason.outcomeUnknown);
    const deadline = performance.now() + 10_000;
    const settled = await Promise.allSettled([
      coalescer.add(unkeyed('a'), deadline),
      coalescer.add(keyed('k'), deadline),
      coalescer.add(unkeyed('b'), deadline),
    ]);
    const errors = settled.map((outcome) => (outcome.status === 'rejected' ? (outcome.reason as TallyError) : undefined));
    expect(errors[0]?.reason).toBe(ErrorReason.outcomeUnknown);
    expect(errors[1]).toBeUndefined();
    expect(errors[2]?.reason).toBe(ErrorReason.outcomeUnknown);
    // Only the keyed item goes again (alone, with its key).
    expect(sent.slice(1).map((call) => call.counters)).toEqual([['k']]);
  });

  it('a batch failing INVALID_ARGUMENT with reason OUTCOME_UNKNOWN re-sends no unkeyed item', async () => {
    const { sent, coalescer } = scripted(status.INVALID_ARGUMENT, undefined, ErrorReason.outcomeUnknown);
    const deadline = performance.now() + 10_000;
    const results = await outcomes([coalescer.add(unkeyed('a'), deadline), coalescer.add(unkeyed('b'), deadline)]);
    expect(results).toEqual([ErrorCode.unavailable, ErrorCode.unavailable]);
    expect(sent).toHaveLength(1);
  });

  it('a batch refused OUT_OF_RANGE with reason NOT_APPLIED sends its unkeyed items again alone', async () => {
    const { sent, coalescer } = scripted(status.OUT_OF_RANGE, (item) => (item.counter === 'huge' ? status.OUT_OF_RANGE : status.OK));
    const deadline = performance.now() + 10_000;
    const results = await outcomes([coalescer.add(unkeyed('fine'), deadline), coalescer.add(unkeyed('huge'), deadline)]);
    expect(results).toEqual(['ok', ErrorCode.outOfRange]);
    expect(sent.slice(1).map((call) => call.counters)).toEqual([['fine'], ['huge']]);
  });

  it('UNAUTHENTICATED fails every item and sends nothing again', async () => {
    const { sent, coalescer } = scripted(status.UNAUTHENTICATED);
    const deadline = performance.now() + 10_000;
    const results = await outcomes([coalescer.add(keyed('a'), deadline), coalescer.add(unkeyed('b'), deadline)]);
    expect(results).toEqual([ErrorCode.unauthenticated, ErrorCode.unauthenticated]);
    expect(sent).toHaveLength(1);
  });

  it('RESOURCE_EXHAUSTED of a batch (maybe applied in part) is an unknown outcome: keyed items go again, unkeyed fail UNAVAILABLE', async () => {
    const { sent, coalescer } = scripted(status.RESOURCE_EXHAUSTED, undefined, ErrorReason.outcomeUnknown);
    const deadline = performance.now() + 10_000;
    const results = await outcomes([coalescer.add(keyed('a'), deadline), coalescer.add(unkeyed('b'), deadline)]);
    expect(results).toEqual(['ok', ErrorCode.unavailable]);
    expect(sent.slice(1).flatMap((call) => call.counters)).toEqual(['a']);
  });

  it('a lone increment refused RESOURCE_EXHAUSTED hears just that, as a unary call', async () => {
    const { coalescer } = scripted(undefined, () => status.RESOURCE_EXHAUSTED);
    expect(await outcomes([coalescer.add(keyed('a'), performance.now() + 10_000)])).toEqual([ErrorCode.resourceExhausted]);
  });

  it('an item already past its deadline is DEADLINE_EXCEEDED and left out of the batch', async () => {
    const { sent, coalescer } = scripted(undefined);
    const now = performance.now();
    const results = await outcomes([
      coalescer.add(keyed('late'), now - 1),
      coalescer.add(keyed('a'), now + 10_000),
      coalescer.add(keyed('b'), now + 10_000),
    ]);
    expect(results).toEqual([ErrorCode.deadlineExceeded, 'ok', 'ok']);
    expect(sent.flatMap((call) => call.counters)).toEqual(['a', 'b']);
  });

  it('a batch names at most newCountersPerCallMax counters, however many items it carries', async () => {
    const { sent, coalescer } = scripted(undefined);
    const deadline = performance.now() + 10_000;
    const distinct = 2 * newCountersPerCallMax + 500;
    const names = Array.from({ length: distinct }, (_, index) => `new:${index}`);
    // One hot counter between them: its name counts once per batch, however many of its items ride along.
    const items = names.flatMap((name) => [unkeyed(name), unkeyed('hot')]);
    const results = await outcomes(items.map((item) => coalescer.add(item, deadline)));
    expect(results.every((result) => result === 'ok')).toBe(true);
    expect(sent.map((call) => new Set(call.counters).size)).toEqual([
      newCountersPerCallMax,
      newCountersPerCallMax,
      distinct - 2 * (newCountersPerCallMax - 1) + 1,
    ]);
    expect(sent.flatMap((call) => call.counters)).toEqual(items.map((item) => item.counter));
  });

  it('close() sends what is queued and refuses later adds', async () => {
    const { sent, coalescer } = scripted(undefined);
    const pending = coalescer.add(keyed('queued'), performance.now() + 10_000);
    coalescer.close();
    expect(sent).toHaveLength(1);
    await expect(pending).resolves.toEqual({ applied: true, shard: 0 });
    await expect(coalescer.add(keyed('after'), performance.now() + 10_000)).rejects.toMatchObject({ code: ErrorCode.unavailable });
  });
});
