// The router's side of a node stream (src/router/nodes/frame-stream.ts) over
// a fake call: answers are matched by seq once (a second answer is ignored
// and counted), a frame past its deadline fails its caller with an unknown
// outcome and the stream is abandoned and reopened, a broken stream fails
// every frame in flight as unknown (never not-applied), and flow control
// holds frames back by count and bytes.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { status } from '@grpc/grpc-js';
import { ErrorReason, TallyError, ErrorCode } from '../../../../src/wire/index.ts';
import { frameErrorOf } from '../../../../src/wire/internal/index.ts';
import {
  FrameStream,
  StreamUnsupportedError,
  type DecodedAnswer,
  type FrameCall,
  type FrameCallHandlers,
} from '../../../../src/router/nodes/frame-stream.ts';
import { nodeCallError } from '../../../../src/router/nodes/node-sender.ts';

interface FakeCall extends FrameCall<string> {
  written: { seq: number; request: string }[];
  cancelled: boolean;
  handlers: FrameCallHandlers<string>;
  answer(seq: number, response: string): void;
}

function harness(limits = { framesInFlightMax: 8, bytesInFlightMax: 1_000, queuedFramesMax: 100 }) {
  const calls: FakeCall[] = [];
  const events = { strays: 0, abandoned: [] as string[], fresh: [] as boolean[] };
  const stream = new FrameStream<string, string>(
    'node-a',
    (handlers, fresh) => {
      events.fresh.push(fresh);
      const call: FakeCall = {
        written: [],
        cancelled: false,
        handlers,
        write(frame) {
          this.written.push(frame);
        },
        cancel() {
          this.cancelled = true;
        },
        answer(seq, response) {
          handlers.onAnswer({ seq, response, error: null } satisfies DecodedAnswer<string>);
        },
      };
      calls.push(call);
      return call;
    },
    limits,
    { onStrayAnswer: () => events.strays++, onAbandoned: (_address, why) => events.abandoned.push(why) },
  );
  return { stream, calls, events };
}

/** What the write path makes of a rejected frame: as a unary call's failure. */
function routed(error: unknown): TallyError {
  return error instanceof TallyError ? error : nodeCallError('node-a', error as never);
}

describe('router: frame stream to a node', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('one call opened lazily and reused; answers out of order reach their own callers', async () => {
    const { stream, calls } = harness();
    const first = stream.send('a', 10, 1_000);
    const second = stream.send('b', 10, 1_000);
    expect(calls).toHaveLength(1);
    const [one, two] = calls[0]!.written;
    calls[0]!.answer(two!.seq, 'answer b');
    calls[0]!.answer(one!.seq, 'answer a');
    await expect(first).resolves.toBe('answer a');
    await expect(second).resolves.toBe('answer b');
    const third = stream.send('c', 10, 1_000);
    expect(calls).toHaveLength(1);
    calls[0]!.answer(calls[0]!.written[2]!.seq, 'answer c');
    await expect(third).resolves.toBe('answer c');
  });

  it('a frame answered twice settles once; the second answer is ignored and counted, never given to another caller', async () => {
    const { stream, calls, events } = harness();
    const first = stream.send('a', 10, 1_000);
    const seqA = calls[0]!.written[0]!.seq;
    calls[0]!.answer(seqA, 'answer a');
    await expect(first).resolves.toBe('answer a');
    const second = stream.send('b', 10, 1_000);
    // The duplicate of a's answer arrives while b is in flight: b must not take it.
    calls[0]!.answer(seqA, 'answer a again');
    calls[0]!.answer(999, 'never sent');
    expect(events.strays).toBe(2);
    const seqB = calls[0]!.written[1]!.seq;
    expect(seqB).not.toBe(seqA);
    calls[0]!.answer(seqB, 'answer b');
    await expect(second).resolves.toBe('answer b');
    expect(stream.framesInFlight).toBe(0);
  });

  it('a frame past its deadline fails as DEADLINE_EXCEEDED (unknown outcome); the stalled stream is abandoned, its other frames fail unknown, and the next frame opens a new stream', async () => {
    const { stream, calls, events } = harness();
    const late = stream.send('a', 10, 500);
    const other = stream.send('b', 10, 2_000);
    const lateFailure = late.catch((error: unknown) => error);
    const otherFailure = other.catch((error: unknown) => error);
    await vi.advanceTimersByTimeAsync(501);
    const lateError = routed(await lateFailure);
    const otherError = routed(await otherFailure);
    expect(lateError.reason).toBe(ErrorReason.outcomeUnknown);
    expect(lateError.message).toMatch(/did not answer in time/);
    expect(otherError.reason).toBe(ErrorReason.outcomeUnknown);
    expect(otherError.message).toMatch(/did not answer in time/);
    expect(calls[0]!.cancelled).toBe(true);
    expect(events.abandoned).toEqual(['deadline']);
    // The answer to the late frame, arriving after all, is ignored.
    calls[0]!.answer(calls[0]!.written[0]!.seq, 'too late');
    expect(events.strays).toBe(1);
    const next = stream.send('c', 10, 500);
    expect(calls).toHaveLength(2);
    // On a new connection: the stalled one may be a blackhole that keepalive would take seconds to give up on.
    expect(events.fresh).toEqual([false, true]);
    calls[1]!.answer(calls[1]!.written[0]!.seq, 'answer c');
    await expect(next).resolves.toBe('answer c');
  });

  it('a stream that breaks fails every frame in flight as unknown outcome, never not-applied, whatever status it ends with', async () => {
    for (const code of [
      status.UNAVAILABLE,
      status.CANCELLED,
      status.INTERNAL,
      status.OK,
      status.FAILED_PRECONDITION,
      status.RESOURCE_EXHAUSTED,
    ]) {
      const { stream, calls } = harness();
      const pending = [stream.send('a', 10, 1_000), stream.send('b', 10, 1_000)].map((frame) => frame.catch((error: unknown) => error));
      calls[0]!.handlers.onEnd({ code, details: code === status.UNAVAILABLE ? 'Connection dropped' : 'No connection established: cut' });
      for (const failure of await Promise.all(pending)) {
        const error = routed(failure);
        expect(error.reason, `ended ${status[code]}`).toBe(ErrorReason.outcomeUnknown);
        expect(error.certainlyNotApplied).toBe(false);
      }
    }
  });

  it('a stream grpc-js never found a connection for (UNAVAILABLE "No connection established") fails its frames as not applied, as a unary call', async () => {
    const { stream, calls } = harness();
    const pending = [stream.send('a', 10, 1_000), stream.send('b', 10, 1_000)].map((frame) => frame.catch((error: unknown) => error));
    calls[0]!.handlers.onEnd({ code: status.UNAVAILABLE, details: 'No connection established. Last error: connect ECONNREFUSED' });
    for (const failure of await Promise.all(pending)) {
      const error = routed(failure);
      expect(error.certainlyNotApplied).toBe(true);
      expect(error.message).toMatch(/unreachable/);
    }
  });

  it('a frame the node refused by epoch or role is NOT_APPLIED, as a unary refusal', async () => {
    const { stream, calls } = harness();
    const frame = stream.send('a', 10, 1_000).catch((error: unknown) => error);
    calls[0]!.handlers.onAnswer({
      seq: calls[0]!.written[0]!.seq,
      response: null,
      error: frameErrorOf(new TallyError(ErrorCode.failedPrecondition, 'stale epoch: request 1, node primary at 2')) as never,
    });
    const error = routed(await frame);
    expect(error.certainlyNotApplied).toBe(true);
    expect(error.message).toMatch(/stale epoch/);
  });

  it('a node without streams (UNIMPLEMENTED) fails frames with StreamUnsupportedError so callers go unary', async () => {
    const { stream, calls } = harness();
    const frame = stream.send('a', 10, 1_000).catch((error: unknown) => error);
    calls[0]!.handlers.onEnd({ code: status.UNIMPLEMENTED, details: 'unknown method' });
    expect(await frame).toBeInstanceOf(StreamUnsupportedError);
    expect(stream.unsupported).toBe(true);
    await expect(stream.send('b', 10, 1_000)).rejects.toBeInstanceOf(StreamUnsupportedError);
  });

  it('frames wait for room by count and by bytes in flight, and leave as answers free it', async () => {
    const { stream, calls } = harness({ framesInFlightMax: 2, bytesInFlightMax: 100, queuedFramesMax: 3 });
    const frames = [stream.send('a', 10, 1_000), stream.send('b', 10, 1_000), stream.send('c', 90, 1_000), stream.send('d', 10, 1_000)];
    expect(calls[0]!.written.map((frame) => frame.request)).toEqual(['a', 'b']);
    calls[0]!.answer(calls[0]!.written[0]!.seq, 'A');
    // c (90 bytes) does not fit beside b (10) in 100 bytes... 10 + 90 = 100 fits exactly.
    expect(calls[0]!.written.map((frame) => frame.request)).toEqual(['a', 'b', 'c']);
    calls[0]!.answer(calls[0]!.written[1]!.seq, 'B');
    // d: 90 + 10 = 100, fits.
    expect(calls[0]!.written.map((frame) => frame.request)).toEqual(['a', 'b', 'c', 'd']);
    // The queue holds at most 3: beyond that, refused with nothing sent.
    const waiting = [stream.send('e', 60, 1_000), stream.send('f', 10, 1_000), stream.send('g', 10, 1_000)];
    const refused = await stream.send('h', 10, 1_000).catch((error: unknown) => error);
    expect((refused as TallyError).certainlyNotApplied).toBe(true);
    // Answer whatever is on the wire until all is answered: each answer lets the next frame out, never more than 2 at once.
    for (let answered = 2; answered < calls[0]!.written.length; answered++) {
      expect(stream.framesInFlight).toBeLessThanOrEqual(2);
      const frame = calls[0]!.written[answered]!;
      calls[0]!.answer(frame.seq, frame.request.toUpperCase());
    }
    expect(calls[0]!.written.map((frame) => frame.request)).toEqual(['a', 'b', 'c', 'd', 'e', 'f', 'g']);
    await expect(Promise.all(frames)).resolves.toEqual(['A', 'B', 'C', 'D']);
    await expect(Promise.all(waiting)).resolves.toEqual(['E', 'F', 'G']);
  });
});
