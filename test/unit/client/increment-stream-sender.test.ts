// The client's IncrementStream against a scripted stream: batches numbered
// in order, answered by number in any order, each failing as the unary call
// would; a failed stream leaves its unanswered batches of unknown outcome
// (unless the router said it read nothing), and UNIMPLEMENTED before any
// answer means the router does not serve the stream.
import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { Metadata, status } from '@grpc/grpc-js';
import { IncrementStreamSender, StreamUnsupported, type IncrementStreamCall } from '../../../src/client/streams/increment-stream.ts';
import { ErrorReason, encodeStatusDetails, statusDetailsKey, TallyError, streamBatchesInFlightMax } from '../../../src/wire/index.ts';
import type { CoalescedItem } from '../../../src/client/streams/increment-coalescer.ts';
import type { IncrementStreamRequestInput, LeanIncrementStreamResponse } from '../../../src/wire/index.ts';

class ScriptedCall extends EventEmitter {
  readonly written: IncrementStreamRequestInput[] = [];
  ended = false;
  constructor(readonly deadline: number) {
    super();
  }
  write(request: IncrementStreamRequestInput): boolean {
    this.written.push(request);
    return true;
  }
  end(): void {
    this.ended = true;
  }
  answer(response: Partial<LeanIncrementStreamResponse> & { sequence: number }): void {
    this.emit('data', { results: [], error: null, ...response });
  }
  fail(code: number, details: string, reason?: string): void {
    const metadata = new Metadata();
    if (reason !== undefined) metadata.set(statusDetailsKey, encodeStatusDetails(code, details, { reason }));
    this.emit('error', Object.assign(new Error(details), { code, details, metadata }));
  }
}

function scripted() {
  const calls: ScriptedCall[] = [];
  const sender = new IncrementStreamSender((deadline) => {
    const call = new ScriptedCall(deadline);
    calls.push(call);
    return call as unknown as IncrementStreamCall;
  });
  return { calls, sender };
}

const item = (counter: string): CoalescedItem => ({ counter, amount: 1, idempotencyKey: Buffer.alloc(0) });
const soon = () => performance.now() + 5_000;

async function settled<T>(promise: Promise<T>): Promise<T | Error> {
  return promise.catch((error: unknown) => error as Error);
}

describe('IncrementStream sender', () => {
  it('stream: batches share one stream, numbered from 1, and each is settled by its own answer whatever the order', async () => {
    const { calls, sender } = scripted();
    const first = sender.send([item('a')], soon());
    const second = sender.send([item('b'), item('c')], soon());
    expect(calls).toHaveLength(1);
    expect(calls[0]!.written.map((request) => request.sequence)).toEqual([1, 2]);
    calls[0]!.answer({
      sequence: 2,
      results: [
        { applied: true, shard: 1 },
        { applied: false, shard: 0 },
      ],
    });
    calls[0]!.answer({ sequence: 1, results: [{ applied: true, shard: 3 }] });
    expect(await first).toEqual([{ applied: true, shard: 3 }]);
    expect(await second).toEqual([
      { applied: true, shard: 1 },
      { applied: false, shard: 0 },
    ]);
  });

  it('stream: an answer repeated, or for a sequence never sent, is dropped; the batch keeps its first answer', async () => {
    const { calls, sender } = scripted();
    const first = sender.send([item('a')], soon());
    const second = sender.send([item('b')], soon());
    calls[0]!.answer({ sequence: 1, results: [{ applied: true, shard: 1 }] });
    calls[0]!.answer({ sequence: 1, results: [{ applied: false, shard: 9 }] });
    calls[0]!.answer({ sequence: 99, results: [{ applied: true, shard: 0 }] });
    expect(await first).toEqual([{ applied: true, shard: 1 }]);
    expect(sender.inFlight).toBe(1);
    calls[0]!.answer({ sequence: 2, results: [{ applied: true, shard: 2 }] });
    expect(await second).toEqual([{ applied: true, shard: 2 }]);
  });

  it('stream: at most streamBatchesInFlightMax batches go on the stream; the rest wait in order for a slot, or fail unsent at their deadline', async () => {
    const { calls, sender } = scripted();
    const sent = Array.from({ length: streamBatchesInFlightMax + 2 }, (_, index) => sender.send([item(`c${index}`)], soon()));
    // The batches left unanswered fail at their deadline after the test ends: nothing waits for them.
    for (const unanswered of sent.slice(1)) void settled(unanswered);
    const late = settled(sender.send([item('late')], performance.now() + 30));
    expect(calls[0]!.written).toHaveLength(streamBatchesInFlightMax);
    const error = (await late) as TallyError;
    expect([error.grpcCode, error.reason]).toEqual([status.DEADLINE_EXCEEDED, ErrorReason.notApplied]);
    calls[0]!.answer({ sequence: 1, results: [{ applied: true, shard: 0 }] });
    await sent[0];
    await new Promise((resolve) => setImmediate(resolve));
    expect(calls[0]!.written.map((request) => request.items![0]!.counter)).toEqual(
      Array.from({ length: streamBatchesInFlightMax + 1 }, (_, index) => `c${index}`),
    );
    expect(calls).toHaveLength(1);
  });

  it('stream: a batch answered with an error fails alone with its code, message, reason and retry delay; the stream goes on', async () => {
    const { calls, sender } = scripted();
    const bad = settled(sender.send([item('')], soon()));
    const good = sender.send([item('a')], soon());
    const statusDetails = encodeStatusDetails(status.RESOURCE_EXHAUSTED, 'busy', { reason: ErrorReason.notApplied, retryAfterMs: 100 });
    calls[0]!.answer({
      sequence: 1,
      error: { code: status.RESOURCE_EXHAUSTED, message: 'busy', reason: ErrorReason.notApplied, statusDetails },
    });
    calls[0]!.answer({ sequence: 2, results: [{ applied: true, shard: 0 }] });
    const error = (await bad) as TallyError;
    expect(error).toBeInstanceOf(TallyError);
    expect([error.grpcCode, error.message, error.reason, error.retryAfterMs]).toEqual([
      status.RESOURCE_EXHAUSTED,
      'busy',
      ErrorReason.notApplied,
      100,
    ]);
    expect(await good).toHaveLength(1);
    // The stream goes on: the next batch is written on it (then answered, so nothing is left to fail later).
    const next = sender.send([item('b')], soon());
    expect(calls).toHaveLength(1);
    expect(calls[0]!.written).toHaveLength(3);
    calls[0]!.answer({ sequence: 3, results: [{ applied: true, shard: 0 }] });
    expect(await next).toHaveLength(1);
  });

  it('stream: a stream that fails leaves every unanswered batch OUTCOME_UNKNOWN, and the next batch opens a new stream', async () => {
    const { calls, sender } = scripted();
    const answered = sender.send([item('a')], soon());
    const lost = [settled(sender.send([item('b')], soon())), settled(sender.send([item('c')], soon()))];
    calls[0]!.answer({ sequence: 1, results: [{ applied: true, shard: 0 }] });
    await answered;
    calls[0]!.fail(status.UNAVAILABLE, 'Connection dropped');
    for (const outcome of await Promise.all(lost)) {
      expect(outcome).toBeInstanceOf(TallyError);
      expect((outcome as TallyError).grpcCode).toBe(status.UNAVAILABLE);
      expect((outcome as TallyError).reason).toBe(ErrorReason.outcomeUnknown);
    }
    // The router's reason decides for a status it sent: a malformed message ended the stream with batches unanswered.
    const next = settled(sender.send([item('d')], soon()));
    expect(calls).toHaveLength(2);
    expect(calls[1]!.written[0]!.sequence).toBe(1);
    calls[1]!.fail(status.INVALID_ARGUMENT, 'malformed request', ErrorReason.outcomeUnknown);
    expect(((await next) as TallyError).reason).toBe(ErrorReason.outcomeUnknown);
  });

  it('stream: a stream refused on its headers (NOT_APPLIED: credentials, busy) says so to its batches: nothing of them was read', async () => {
    const { calls, sender } = scripted();
    const refused = settled(sender.send([item('a')], soon()));
    calls[0]!.fail(status.UNAUTHENTICATED, 'no token', ErrorReason.notApplied);
    const error = (await refused) as TallyError;
    expect([error.grpcCode, error.reason]).toEqual([status.UNAUTHENTICATED, ErrorReason.notApplied]);
  });

  it('stream: UNIMPLEMENTED before any answer rejects with StreamUnsupported (the router predates IncrementStream)', async () => {
    const { calls, sender } = scripted();
    const batch = settled(sender.send([item('a')], soon()));
    calls[0]!.fail(status.UNIMPLEMENTED, 'The server does not implement the method /counter.v1.CounterService/IncrementStream');
    expect(await batch).toBeInstanceOf(StreamUnsupported);
  });

  it('stream: a batch not answered by its deadline fails DEADLINE_EXCEEDED with an unknown outcome; a late answer is dropped', async () => {
    const { calls, sender } = scripted();
    const late = settled(sender.send([item('a')], performance.now() + 30));
    const error = (await late) as TallyError;
    expect([error.grpcCode, error.reason]).toEqual([status.DEADLINE_EXCEEDED, ErrorReason.outcomeUnknown]);
    calls[0]!.answer({ sequence: 1, results: [{ applied: true, shard: 0 }] });
    expect(sender.inFlight).toBe(0);
  });

  it('stream: a batch whose deadline outlasts the stream goes on a new stream; the old one is half-closed once it has answered', async () => {
    const { calls, sender } = scripted();
    const first = sender.send([item('a')], soon());
    const far = sender.send([item('b')], calls[0]!.deadline + 60_000);
    expect(calls).toHaveLength(2);
    expect(calls[1]!.deadline).toBeGreaterThan(calls[0]!.deadline);
    expect(calls[0]!.ended).toBe(false);
    calls[0]!.answer({ sequence: 1, results: [{ applied: true, shard: 0 }] });
    await first;
    expect(calls[0]!.ended).toBe(true);
    calls[1]!.answer({ sequence: 1, results: [{ applied: true, shard: 0 }] });
    await far;
    sender.close();
    expect(calls[1]!.ended).toBe(true);
  });
});
