// The client's ReadStream against a scripted stream: pages numbered in
// order, answered by number in any order, each failing as the unary ReadMany
// would; a failed stream fails its unanswered pages NOT_APPLIED (a read may
// be sent again) and the next page opens a new stream; at most
// readStreamPagesInFlightMax pages go out at once; UNIMPLEMENTED before any
// answer means the router does not serve the stream.
import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { Metadata, status } from '@grpc/grpc-js';
import { ReadStreamSender, ReadStreamUnsupported, type ReadStreamCall } from '../../../src/client/streams/read-stream.ts';
import { ErrorReason, encodeStatusDetails, TallyError, readStreamPagesInFlightMax } from '../../../src/wire/index.ts';
import type { LeanReadStreamResponse, ReadStreamRequestInput } from '../../../src/wire/index.ts';

class ScriptedCall extends EventEmitter {
  readonly written: ReadStreamRequestInput[] = [];
  ended = false;
  write(request: ReadStreamRequestInput): boolean {
    this.written.push(request);
    return true;
  }
  end(): void {
    this.ended = true;
  }
  answer(response: Partial<LeanReadStreamResponse> & { sequence: number }): void {
    this.emit('data', { values: [], error: null, ...response });
  }
  fail(code: number, details: string): void {
    this.emit('error', Object.assign(new Error(details), { code, details, metadata: new Metadata() }));
  }
}

function scripted() {
  const calls: ScriptedCall[] = [];
  const sender = new ReadStreamSender(() => {
    const call = new ScriptedCall();
    calls.push(call);
    return call as unknown as ReadStreamCall;
  });
  return { calls, sender };
}

const page = (...counters: string[]) => ({ counters, consistency: 'EXACT' as const });
const value = (counter: string, total: number) => ({ counter, total, exact: true, asOfUnixMs: 1, stalenessMs: 0, shards: 1 });
const soon = () => performance.now() + 5_000;
const settled = <T>(promise: Promise<T>): Promise<T | Error> => promise.catch((error: unknown) => error as Error);
const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('ReadStream sender', () => {
  it('client read stream: pages share one stream, numbered from 1, each settled by its own answer whatever the order', async () => {
    const { calls, sender } = scripted();
    const first = sender.send(page('a'), soon());
    const second = sender.send(page('b', 'c'), soon());
    expect(calls).toHaveLength(1);
    expect(calls[0]!.written).toEqual([
      { counters: ['a'], consistency: 'EXACT', sequence: 1 },
      { counters: ['b', 'c'], consistency: 'EXACT', sequence: 2 },
    ]);
    calls[0]!.answer({ sequence: 2, values: [value('b', 2), value('c', 3)] });
    calls[0]!.answer({ sequence: 1, values: [value('a', 1)] });
    expect((await first).map((one) => one.total)).toEqual([1]);
    expect((await second).map((one) => one.total)).toEqual([2, 3]);
  });

  it('client read stream: a failed page fails alone with its status and reason; the stream goes on', async () => {
    const { calls, sender } = scripted();
    const bad = settled(sender.send(page(''), soon()));
    const good = sender.send(page('a'), soon());
    const details = encodeStatusDetails(status.INVALID_ARGUMENT, 'counter name is empty', { reason: ErrorReason.notApplied });
    calls[0]!.answer({
      sequence: 1,
      error: { code: status.INVALID_ARGUMENT, message: 'counter name is empty', reason: 'NOT_APPLIED', statusDetails: details },
    });
    calls[0]!.answer({ sequence: 2, values: [value('a', 1)] });
    const failure = (await bad) as TallyError;
    expect(failure).toBeInstanceOf(TallyError);
    expect(failure.code).toBe('invalid_argument');
    expect(failure.certainlyNotApplied).toBe(true);
    expect((await good).map((one) => one.total)).toEqual([1]);
    expect(calls).toHaveLength(1);
  });

  it('client read stream: a stream that fails fails its unanswered pages NOT_APPLIED, and the next page opens a new stream', async () => {
    const { calls, sender } = scripted();
    const answered = sender.send(page('a'), soon());
    const cut = settled(sender.send(page('b'), soon()));
    calls[0]!.answer({ sequence: 1, values: [value('a', 1)] });
    calls[0]!.fail(status.UNAVAILABLE, 'Connection dropped');
    expect((await answered).map((one) => one.total)).toEqual([1]);
    const failure = (await cut) as TallyError;
    expect(failure.code).toBe('unavailable');
    expect(failure.certainlyNotApplied).toBe(true);
    const again = sender.send(page('b'), soon());
    expect(calls).toHaveLength(2);
    calls[1]!.answer({ sequence: 1, values: [value('b', 2)] });
    expect((await again).map((one) => one.total)).toEqual([2]);
  });

  it('client read stream: at most readStreamPagesInFlightMax pages go out; the rest wait, in order, for a slot', async () => {
    const { calls, sender } = scripted();
    const pages = Array.from({ length: readStreamPagesInFlightMax + 3 }, (_, index) => sender.send(page(`p${index}`), soon()));
    // The pages left unanswered fail at their deadline after the test ends: nothing waits for them.
    for (const unanswered of pages.slice(1)) void settled(unanswered);
    expect(calls[0]!.written).toHaveLength(readStreamPagesInFlightMax);
    calls[0]!.answer({ sequence: 1, values: [value('p0', 0)] });
    await pages[0];
    await tick();
    expect(calls[0]!.written).toHaveLength(readStreamPagesInFlightMax + 1);
    expect(calls[0]!.written.at(-1)!.counters).toEqual([`p${readStreamPagesInFlightMax}`]);
  });

  it('client read stream: UNIMPLEMENTED before any answer is ReadStreamUnsupported (the caller reads with ReadMany)', async () => {
    const { calls, sender } = scripted();
    const first = settled(sender.send(page('a'), soon()));
    calls[0]!.fail(status.UNIMPLEMENTED, 'unknown method');
    expect(await first).toBeInstanceOf(ReadStreamUnsupported);
  });
});
