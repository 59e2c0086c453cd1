// The router's IncrementStream handler against scripted streams and a
// scripted IncrementBatch body: answers by sequence, the per-stream and
// router-wide bounds on batches in flight (a slot frees once the answer is
// written), a reused sequence number, and a half-closed stream ending once
// its batches are answered.
import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { status, type Metadata, type ServerDuplexStream } from '@grpc/grpc-js';
import { createIncrementStreamHandler, type ApplyBatch } from '../../../../src/router/api/counter/increment-stream.ts';
import { ErrorReason, decodeStatusDetails, statusDetailsKey } from '../../../../src/wire/index.ts';
import type { IncrementStreamResponseInput, IncrementColumns } from '../../../../src/wire/index.ts';

class ScriptedStream extends EventEmitter {
  cancelled = false;
  ended = false;
  failure: { code: number; details: string; metadata: Metadata } | undefined;
  readonly answers: IncrementStreamResponseInput[] = [];
  constructor() {
    super();
    // As grpc-js: an 'error' emitted by the handler becomes the call's status.
    this.on('error', (error: { code: number; details: string; metadata: Metadata }) => (this.failure = error));
  }
  write(response: IncrementStreamResponseInput, written?: () => void): boolean {
    this.answers.push(response);
    if (written) setImmediate(written);
    return true;
  }
  end(): void {
    this.ended = true;
  }
  pause(): void {}
  resume(): void {}
  send(sequence: number, counters: string[] = ['a']): void {
    const request: IncrementColumns = {
      sequence,
      counters,
      amounts: counters.map(() => 1),
      keys: counters.map(() => Buffer.alloc(0)),
      returnTotals: undefined,
    };
    this.emit('data', request);
  }
  answerTo(sequence: number): IncrementStreamResponseInput | undefined {
    return this.answers.find((answer) => answer.sequence === sequence);
  }
}

/** An IncrementBatch body whose batches complete when the test says. */
function scriptedBatches() {
  const waiting: (() => void)[] = [];
  const applyBatch: ApplyBatch = (request) =>
    new Promise((resolve) => waiting.push(() => resolve(request.counters.map(() => ({ applied: true, shard: 0 })))));
  return {
    applyBatch,
    completeNext: () => waiting.shift()!(),
    completeLast: () => waiting.pop()!(),
    waitingCount: () => waiting.length,
  };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

function handlerWith(applyBatch: ApplyBatch, batchesInFlightMax: number, routerBatchesInFlightMax: number) {
  let refused = 0;
  const handler = createIncrementStreamHandler(
    applyBatch,
    { batchesInFlightMax, routerBatchesInFlightMax },
    { onRefused: (items) => (refused += items), onInFlight: () => {} },
  );
  const open = (): ScriptedStream => {
    const stream = new ScriptedStream();
    handler(stream as unknown as ServerDuplexStream<IncrementColumns, IncrementStreamResponseInput>);
    return stream;
  };
  return { open, refused: () => refused };
}

describe('IncrementStream handler', () => {
  it('stream handler: batches past the per-stream bound, then past the router-wide bound, are answered RESOURCE_EXHAUSTED by sequence; a slot frees once its answer is written', async () => {
    const batches = scriptedBatches();
    const { open, refused } = handlerWith(batches.applyBatch, 2, 3);
    const first = open();
    const second = open();
    first.send(1);
    first.send(2);
    first.send(3, ['x', 'y']);
    second.send(1);
    second.send(2);
    expect(batches.waitingCount()).toBe(3);
    const busy = (answer: IncrementStreamResponseInput | undefined) => {
      expect(answer?.error?.code).toBe(status.RESOURCE_EXHAUSTED);
      expect(answer?.error?.reason).toBe(ErrorReason.notApplied);
      expect(decodeStatusDetails(answer!.error!.statusDetails)?.retryAfterMs).toBeGreaterThan(0);
    };
    busy(first.answerTo(3));
    expect(first.answerTo(3)!.error!.message).toMatch(/2 batches in flight on this stream/);
    busy(second.answerTo(2));
    expect(second.answerTo(2)!.error!.message).toMatch(/3 stream batches in flight on this router/);
    expect(refused()).toBe(3);
    batches.completeNext();
    await settle();
    await settle();
    expect(first.answerTo(1)?.results).toEqual([{ applied: true, shard: 0 }]);
    // The answer is written: its slot is free, on the stream and on the router.
    second.send(3);
    expect(batches.waitingCount()).toBe(3);
    expect(second.answerTo(3)).toBeUndefined();
  });

  it('stream handler: answers go out as batches complete, not in the order they came', async () => {
    const batches = scriptedBatches();
    const { open } = handlerWith(batches.applyBatch, 8, 128);
    const stream = open();
    stream.send(10, ['a']);
    stream.send(3, ['b', 'c']);
    stream.send(7, ['d']);
    batches.completeLast();
    await settle();
    batches.completeNext();
    await settle();
    batches.completeNext();
    await settle();
    expect(stream.answers.map((answer) => [answer.sequence, answer.results?.length])).toEqual([
      [7, 1],
      [10, 1],
      [3, 2],
    ]);
  });

  it('stream handler: a failed batch is answered with its status, message and reason; the stream goes on', async () => {
    const { open } = handlerWith(
      async (request) => {
        if (request.counters[0] === 'bad') throw Object.assign(new Error('no'), { code: status.INVALID_ARGUMENT, details: 'item 0: bad' });
        return [{ applied: true, shard: 2 }];
      },
      8,
      128,
    );
    const stream = open();
    stream.send(1, ['bad']);
    stream.send(2, ['good']);
    await settle();
    expect(stream.answerTo(1)?.error).toMatchObject({
      code: status.INVALID_ARGUMENT,
      message: 'item 0: bad',
      reason: ErrorReason.notApplied,
    });
    expect(stream.answerTo(2)?.results).toEqual([{ applied: true, shard: 2 }]);
    expect(stream.failure).toBeUndefined();
  });

  it('stream handler: a sequence reused while its batch is in flight ends the stream INVALID_ARGUMENT, OUTCOME_UNKNOWN for the batch unanswered', async () => {
    const batches = scriptedBatches();
    const { open } = handlerWith(batches.applyBatch, 8, 128);
    const stream = open();
    stream.send(5);
    stream.send(5);
    expect(stream.failure?.code).toBe(status.INVALID_ARGUMENT);
    expect(stream.failure?.details).toMatch(/sequence 5 is already in flight/);
    const bytes = stream.failure!.metadata.get(statusDetailsKey)[0] as Buffer;
    expect(decodeStatusDetails(bytes)?.reason).toBe(ErrorReason.outcomeUnknown);
    // Its batch completes, unanswered: the router-wide slot still frees.
    batches.completeNext();
    await settle();
    expect(stream.answers).toEqual([]);
  });

  it('stream handler: a half-closed stream ends OK once every batch is answered, not before', async () => {
    const batches = scriptedBatches();
    const { open } = handlerWith(batches.applyBatch, 8, 128);
    const stream = open();
    stream.send(1);
    stream.send(2);
    stream.emit('end');
    expect(stream.ended).toBe(false);
    batches.completeNext();
    await settle();
    await settle();
    expect(stream.ended).toBe(false);
    batches.completeNext();
    await settle();
    await settle();
    expect(stream.ended).toBe(true);
    expect(stream.answers.map((answer) => answer.sequence)).toEqual([1, 2]);
  });
});
