// The router's ReadStream handler against scripted streams and a scripted
// ReadMany body: answers by sequence, the per-stream and router-wide bounds
// on pages in flight, a failed page answered NOT_APPLIED while the stream
// goes on, a reused sequence number, and a half-closed stream ending once
// its pages are answered.
import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { status, type Metadata, type ServerDuplexStream } from '@grpc/grpc-js';
import { createReadStreamHandler, type ReadPage } from '../../../src/router/api/counter/read-stream.ts';
import { ErrorReason, decodeStatusDetails, statusDetailsKey } from '../../../src/wire/index.ts';
import type { LeanReadStreamRequest, ReadStreamResponseInput } from '../../../src/wire/index.ts';

class ScriptedStream extends EventEmitter {
  cancelled = false;
  ended = false;
  failure: { code: number; details: string; metadata: Metadata } | undefined;
  readonly answers: ReadStreamResponseInput[] = [];
  constructor() {
    super();
    // As grpc-js: an 'error' emitted by the handler becomes the call's status.
    this.on('error', (error: { code: number; details: string; metadata: Metadata }) => (this.failure = error));
  }
  write(response: ReadStreamResponseInput, written?: () => void): boolean {
    this.answers.push(response);
    if (written) setImmediate(written);
    return true;
  }
  end(): void {
    this.ended = true;
  }
  pause(): void {}
  resume(): void {}
  send(sequence: number, counters: string[] = ['a'], consistency: string | number = 'EXACT'): void {
    const request: LeanReadStreamRequest = { sequence, counters, consistency };
    this.emit('data', request);
  }
  answerTo(sequence: number): ReadStreamResponseInput | undefined {
    return this.answers.find((answer) => answer.sequence === sequence);
  }
}

/** A ReadMany body whose pages complete when the test says. */
function scriptedPages() {
  const waiting: (() => void)[] = [];
  const readPage: ReadPage = (request) =>
    new Promise((resolve) =>
      waiting.push(() => resolve({ values: request.counters.map((counter) => ({ counter, total: 7n, exact: true })) })),
    );
  return { readPage, completeNext: () => waiting.shift()!(), completeLast: () => waiting.pop()!(), waitingCount: () => waiting.length };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

function handlerWith(readPage: ReadPage, pagesInFlightMax: number, routerPagesInFlightMax: number) {
  const handler = createReadStreamHandler(readPage, { pagesInFlightMax, routerPagesInFlightMax });
  return (): ScriptedStream => {
    const stream = new ScriptedStream();
    handler(stream as unknown as ServerDuplexStream<LeanReadStreamRequest, ReadStreamResponseInput>);
    return stream;
  };
}

describe('ReadStream handler', () => {
  it('read stream handler: pages past the per-stream bound, then past the router-wide bound, are answered RESOURCE_EXHAUSTED by sequence; a slot frees once its answer is written', async () => {
    const pages = scriptedPages();
    const open = handlerWith(pages.readPage, 2, 3);
    const first = open();
    const second = open();
    first.send(1);
    first.send(2);
    first.send(3, ['x', 'y']);
    second.send(1);
    second.send(2);
    expect(pages.waitingCount()).toBe(3);
    for (const answer of [first.answerTo(3), second.answerTo(2)]) {
      expect(answer?.error?.code).toBe(status.RESOURCE_EXHAUSTED);
      expect(answer?.error?.reason).toBe(ErrorReason.notApplied);
      expect(decodeStatusDetails(answer!.error!.statusDetails)?.retryAfterMs).toBeGreaterThan(0);
    }
    expect(first.answerTo(3)!.error!.message).toMatch(/2 pages in flight on this stream/);
    expect(second.answerTo(2)!.error!.message).toMatch(/3 stream pages in flight on this router/);
    pages.completeNext();
    await settle();
    await settle();
    expect(first.answerTo(1)?.values).toEqual([{ counter: 'a', total: 7n, exact: true }]);
    second.send(3);
    expect(pages.waitingCount()).toBe(3);
    expect(second.answerTo(3)).toBeUndefined();
  });

  it('read stream handler: answers go out as pages complete, not in the order they came', async () => {
    const pages = scriptedPages();
    const stream = handlerWith(pages.readPage, 8, 128)();
    stream.send(10, ['a']);
    stream.send(3, ['b', 'c']);
    stream.send(7, ['d']);
    pages.completeLast();
    await settle();
    pages.completeNext();
    await settle();
    pages.completeNext();
    await settle();
    expect(stream.answers.map((answer) => [answer.sequence, answer.values?.length])).toEqual([
      [7, 1],
      [10, 1],
      [3, 2],
    ]);
  });

  it('read stream handler: a failed page (thrown at once or later) is answered with its status, message and NOT_APPLIED; the stream goes on', async () => {
    const stream = handlerWith(
      (request) => {
        if (request.counters.length === 0)
          throw Object.assign(new Error('no'), { code: status.INVALID_ARGUMENT, details: 'ReadMany needs at least one counter' });
        if (request.counters[0] === 'down')
          return Promise.reject(Object.assign(new Error('no'), { code: status.UNAVAILABLE, details: 'shards on pair 0 cannot be read' }));
        return Promise.resolve({ values: [{ counter: 'ok', total: 1n }] });
      },
      8,
      128,
    )();
    stream.send(1, []);
    stream.send(2, ['down']);
    stream.send(3, ['ok']);
    await settle();
    expect(stream.answerTo(1)?.error).toMatchObject({ code: status.INVALID_ARGUMENT, reason: ErrorReason.notApplied });
    expect(stream.answerTo(1)?.error?.message).toMatch(/at least one counter/);
    expect(stream.answerTo(2)?.error).toMatchObject({ code: status.UNAVAILABLE, reason: ErrorReason.notApplied });
    expect(stream.answerTo(3)?.values).toEqual([{ counter: 'ok', total: 1n }]);
    expect(stream.failure).toBeUndefined();
  });

  it('read stream handler: a sequence reused while its page is in flight ends the stream INVALID_ARGUMENT, NOT_APPLIED (a read may be sent again)', async () => {
    const pages = scriptedPages();
    const stream = handlerWith(pages.readPage, 8, 128)();
    stream.send(5);
    stream.send(5);
    expect(stream.failure?.code).toBe(status.INVALID_ARGUMENT);
    expect(stream.failure?.details).toMatch(/sequence 5 is already in flight/);
    const bytes = stream.failure!.metadata.get(statusDetailsKey)[0] as Buffer;
    expect(decodeStatusDetails(bytes)?.reason).toBe(ErrorReason.notApplied);
    pages.completeNext();
    await settle();
    expect(stream.answers).toEqual([]);
  });

  it('read stream handler: a half-closed stream ends OK once every page is answered, not before', async () => {
    const pages = scriptedPages();
    const stream = handlerWith(pages.readPage, 8, 128)();
    stream.send(1);
    stream.send(2);
    stream.emit('end');
    pages.completeNext();
    await settle();
    await settle();
    expect(stream.ended).toBe(false);
    pages.completeNext();
    await settle();
    await settle();
    expect(stream.ended).toBe(true);
    expect(stream.answers.map((answer) => answer.sequence)).toEqual([1, 2]);
  });
});
