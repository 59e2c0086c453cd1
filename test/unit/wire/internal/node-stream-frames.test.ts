// The frames of ShardNode's streams: every frame and answer survives a round
// trip through the wire (the lean read answer frame reads as proto-loader's
// own), a truncated or malformed frame is refused with a clear error and
// reaches no handler, and an answer finds its frame by seq exactly once.
import { EventEmitter } from 'node:events';
import { describe, expect, it, vi } from 'vitest';
import fc from 'fast-check';
import { status, type ServerDuplexStream } from '@grpc/grpc-js';
import { ErrorCode, TallyError, INT64_MAX, INT64_MIN, ErrorReason } from '../../../../src/wire/index.ts';
import { guardMalformed, malformedRefusalOf, shardNodeServiceDefinition, type shardV1 } from '../../../../src/common/index.ts';
import {
  checkFrame,
  frameErrorOf,
  frameSeqMax,
  serviceErrorOfFrame,
  shardProtocolStamp,
  type DecodedFrame,
  withLeanReadShardsResponse,
} from '../../../../src/wire/internal/index.ts';
import { FrameStreams, serveFrames, type FrameAnswer } from '../../../../src/node/handlers/frame-streams.ts';
import { SequenceTable } from '../../../../src/router/nodes/sequence-table.ts';
import { nodeCallError } from '../../../../src/router/nodes/node-sender.ts';

const guarded = guardMalformed(withLeanReadShardsResponse(shardNodeServiceDefinition));
const applyStream = guarded.ApplyStream!;
const readStream = guarded.ReadShardsStream!;
const unaryApply = shardNodeServiceDefinition.Apply!;
const unaryRead = shardNodeServiceDefinition.ReadShards!;
/** The unary ReadShards as the node reads it: ids and generations as numbers (bigints past 2^53). */
const leanUnaryRead = guarded.ReadShards!;

const seq = fc.integer({ min: 1, max: frameSeqMax });
const uint64 = fc.bigInt({ min: 0n, max: 2n ** 64n - 1n });
const packed = fc.record({
  windowBucketMs: fc.nat({ max: 1_000_000 }).map(String),
  windowRetentionMs: fc.constant('0'),
  records: fc.uint8Array({ maxLength: 64 }).map((bytes) => Buffer.from(bytes.slice(0, bytes.length - (bytes.length % 16)))),
  incrementCount: fc.nat({ max: 1000 }),
  generation: fc.nat({ max: 5 }).map(String),
});
const item = fc.record({
  shardId: fc.integer({ min: 1, max: 2 ** 53 - 1 }).map(String),
  amount: fc.bigInt({ min: INT64_MIN, max: INT64_MAX }).map(String),
  idempotencyKey: fc.uint8Array({ maxLength: 20 }).map((bytes) => Buffer.from(bytes)),
  fence: fc.boolean(),
  routedShardCount: fc.nat({ max: 1024 }),
});
const applyRequest = fc.record({
  epoch: uint64.map(String),
  groups: fc.array(fc.record({ items: fc.array(item, { maxLength: 4 }), increments: fc.array(packed, { maxLength: 3 }) }), {
    maxLength: 4,
  }),
  protocol: fc.constant(shardProtocolStamp),
});
const readRequest = fc.record({
  shardIds: fc.array(fc.integer({ min: 1, max: 2 ** 53 - 1 }).map(String), { maxLength: 60 }),
  generations: fc.constant([] as string[]),
  protocol: fc.constant(shardProtocolStamp),
});
const readAnswer = fc.record({
  totals: fc.array(fc.bigInt({ min: INT64_MIN, max: INT64_MAX }), { maxLength: 60 }),
  lsn: uint64,
  role: fc.constantFrom('primary', 'follower', ''),
  epoch: uint64,
  nodeId: fc.oneof(fc.uuid(), fc.constant('')),
  newerGenerationIndexes: fc.array(fc.nat({ max: 200 }), { maxLength: 4 }),
});

/** What a node makes of a frame's bytes: the request to act on, or the refusal (never both). */
function decodeFrame(definition: typeof applyStream, bytes: Buffer): { seq: number; request: unknown } | { refusal: TallyError } {
  const decoded = definition.requestDeserialize(bytes) as DecodedFrame<unknown>;
  const malformed = malformedRefusalOf(decoded);
  if (malformed !== undefined) return { refusal: malformed };
  const checked = checkFrame(decoded);
  if (checked.refusal !== undefined) return { refusal: checked.refusal };
  return { seq: checked.seq, request: checked.request };
}

describe('node stream frames: round trips', () => {
  it('an ApplyFrame decodes to its seq and the request the unary Apply would decode', () => {
    fc.assert(
      fc.property(seq, applyRequest, (frameSeq, request) => {
        const decoded = decodeFrame(applyStream, applyStream.requestSerialize({ seq: frameSeq, request }));
        expect(decoded).toEqual({ seq: frameSeq, request: unaryApply.requestDeserialize(unaryApply.requestSerialize(request)) });
      }),
      { numRuns: 500 },
    );
  });

  it('a ReadShardsFrame decodes to its seq and the request the unary ReadShards would decode', () => {
    fc.assert(
      fc.property(seq, readRequest, (frameSeq, request) => {
        const decoded = decodeFrame(readStream, readStream.requestSerialize({ seq: frameSeq, request }));
        expect(decoded).toEqual({ seq: frameSeq, request: leanUnaryRead.requestDeserialize(unaryRead.requestSerialize(request)) });
      }),
      { numRuns: 500 },
    );
  });

  it('the lean ReadShards answer frame reads as proto-loader reads the unary answer, under its seq', () => {
    fc.assert(
      fc.property(seq, readAnswer, (frameSeq, answer) => {
        const decoded = readStream.responseDeserialize(
          readStream.responseSerialize({ seq: frameSeq, response: answer }),
        ) as shardV1.ReadShardsAnswer__Output;
        expect(decoded.seq).toBe(frameSeq);
        expect(decoded.error).toBeNull();
        expect(decoded.response).toEqual(unaryRead.responseDeserialize(unaryRead.responseSerialize(answer)));
      }),
      { numRuns: 1000 },
    );
  });

  it('an error answer keeps code, message and reason, so the router tells not-applied from unknown as for a unary call', () => {
    const codes = fc.constantFrom(
      ErrorCode.failedPrecondition,
      ErrorCode.unavailable,
      ErrorCode.invalidArgument,
      ErrorCode.resourceExhausted,
      ErrorCode.outOfRange,
      ErrorCode.internal,
    );
    fc.assert(
      fc.property(seq, codes, fc.string({ maxLength: 40 }), (frameSeq, code, message) => {
        const thrown = new TallyError(code, message);
        const bytes = applyStream.responseSerialize({ seq: frameSeq, error: frameErrorOf(thrown) });
        const decoded = applyStream.responseDeserialize(bytes) as shardV1.ApplyAnswer__Output;
        expect(decoded.seq).toBe(frameSeq);
        expect(decoded.response).toBeNull();
        const asUnary = serviceErrorOfFrame(decoded.error!);
        expect(asUnary.details).toBe(message);
        const routed = nodeCallError('node', asUnary);
        const unaryRouted = nodeCallError('node', { ...asUnary, code: asUnary.code });
        expect(routed.code).toBe(unaryRouted.code);
        expect(routed.reason).toBe(unaryRouted.reason);
        // Stale epoch / not primary: certainly not applied; unavailable or internal: may have applied.
        if (code === ErrorCode.failedPrecondition) expect(routed.reason).toBe(ErrorReason.notApplied);
        if (code === ErrorCode.unavailable || code === ErrorCode.internal) expect(routed.reason).toBe(ErrorReason.outcomeUnknown);
      }),
      { numRuns: 300 },
    );
  });

  it('an error answer with code 0 is taken as INTERNAL (unknown outcome), never as success', () => {
    const error = serviceErrorOfFrame({ code: 0, message: 'x', reason: '', retryAfterMs: 0 });
    expect(error.code).toBe(status.INTERNAL);
    expect(nodeCallError('node', error).reason).toBe(ErrorReason.outcomeUnknown);
  });
});

describe('node stream frames: malformed and truncated frames', () => {
  it('frames: every strict prefix of a frame is refused with a clear error (INVALID_ARGUMENT, "malformed")', () => {
    fc.assert(
      fc.property(seq, applyRequest, fc.nat(), (frameSeq, request, cutAt) => {
        const bytes = applyStream.requestSerialize({ seq: frameSeq, request });
        const cut = bytes.subarray(0, cutAt % bytes.length);
        const decoded = decodeFrame(applyStream, cut);
        expect('refusal' in decoded, `prefix ${cut.length} of ${bytes.length} bytes was accepted`).toBe(true);
        if ('refusal' in decoded) {
          expect(decoded.refusal.code).toBe(ErrorCode.invalidArgument);
          expect(decoded.refusal.message).toMatch(/malformed/);
        }
      }),
      { numRuns: 1000 },
    );
  });

  it('frames: a frame without seq, with seq 0, or without a request is refused', () => {
    for (const frame of [{ request: { epoch: '1', groups: [] } }, { seq: 0, request: { epoch: '1', groups: [] } }, { seq: 7 }]) {
      const decoded = decodeFrame(applyStream, applyStream.requestSerialize(frame));
      expect('refusal' in decoded && decoded.refusal.message).toMatch(/malformed frame/);
    }
  });

  it('frames: random bytes either decode to a frame with a seq and a request, or are refused, never throw', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 80 }), (bytes) => {
        const decoded = decodeFrame(applyStream, Buffer.from(bytes));
        if ('refusal' in decoded) expect(decoded.refusal).toBeInstanceOf(TallyError);
        else {
          expect(decoded.seq).toBeGreaterThanOrEqual(1);
          expect(decoded.request).not.toBeNull();
        }
      }),
      { numRuns: 2000 },
    );
  });
});

/** A server stream the handler can be driven with: frames in, answers and the ending status out. */
class FakeServerCall extends EventEmitter {
  cancelled = false;
  readonly answers: FrameAnswer<unknown>[] = [];
  ended: { code: number; details?: string } | undefined;
  constructor() {
    super();
    this.on('error', (error: { code: number; details: string }) => {
      this.ended = { code: error.code, details: error.details };
    });
  }
  write(answer: FrameAnswer<unknown>): boolean {
    this.answers.push(answer);
    return true;
  }
  end(): void {
    this.ended = { code: status.OK };
  }
}

function serve(handle: (request: unknown) => Promise<unknown>) {
  const streams = new FrameStreams();
  const handler = serveFrames<unknown, unknown>({ method: 'ApplyStream', handle, refusalOf: () => undefined, streams });
  const call = new FakeServerCall();
  handler(call as unknown as ServerDuplexStream<DecodedFrame<unknown>, FrameAnswer<unknown>>);
  const send = (bytes: Buffer) => call.emit('data', applyStream.requestDeserialize(bytes));
  return { call, send, streams };
}

describe('node stream frames: the node side', () => {
  it('malformed frames reach no handler; one without a seq ends the stream INVALID_ARGUMENT after the frames begun are answered', async () => {
    const handle = vi.fn(async (request: unknown) => {
      await new Promise((resolve) => setTimeout(resolve, 5));
      return { results: [], lsn: '1', request };
    });
    const { call, send } = serve(handle);
    const good = applyStream.requestSerialize({ seq: 1, request: { epoch: '1', groups: [] } });
    send(good);
    // A request-less frame: answered by its seq, not acted on.
    send(applyStream.requestSerialize({ seq: 2 }));
    // Truncated inside the request: no seq to answer by.
    send(good.subarray(0, good.length - 1 > 2 ? good.length - 1 : 1));
    send(Buffer.from([0xff, 0xff, 0xff]));
    // After the stream failed: ignored.
    send(applyStream.requestSerialize({ seq: 3, request: { epoch: '1', groups: [] } }));
    expect(handle).toHaveBeenCalledTimes(1);
    await vi.waitFor(() => expect(call.ended).toBeDefined());
    expect(call.ended!.code).toBe(status.INVALID_ARGUMENT);
    expect(call.ended!.details).toMatch(/malformed/);
    expect(call.answers.map((answer) => answer.seq).sort()).toEqual([1, 2]);
    expect(call.answers.find((answer) => answer.seq === 2)!.error!.code).toBe(status.INVALID_ARGUMENT);
    expect(call.answers.find((answer) => answer.seq === 1)!.response).toBeDefined();
  });

  it('answers go out by seq in the order frames finish, and the stream ends once the router half-closes and all are answered', async () => {
    const delays = new Map([
      [1, 30],
      [2, 5],
      [3, 15],
    ]);
    const { call, send } = serve(async (request) => {
      const epoch = Number((request as shardV1.ApplyRequest__Output).epoch);
      await new Promise((resolve) => setTimeout(resolve, delays.get(epoch)));
      if (epoch === 3) throw new TallyError(ErrorCode.failedPrecondition, 'stale epoch');
      return { results: [], lsn: String(epoch) };
    });
    for (const frameSeq of [1, 2, 3])
      send(applyStream.requestSerialize({ seq: frameSeq, request: { epoch: String(frameSeq), groups: [] } }));
    call.emit('end');
    await vi.waitFor(() => expect(call.ended).toEqual({ code: status.OK }));
    expect(call.answers.map((answer) => answer.seq)).toEqual([2, 3, 1]);
    expect(call.answers[1]!.error).toMatchObject({ code: status.FAILED_PRECONDITION, reason: ErrorReason.notApplied });
    expect(call.answers[2]!.response).toEqual({ results: [], lsn: '1' });
  });

  it('at shutdown a stream answers what it began, refuses later frames NOT_APPLIED, and ends UNAVAILABLE', async () => {
    let release: () => void = () => undefined;
    const { call, send, streams } = serve(() => new Promise((resolve) => (release = () => resolve({ results: [], lsn: '9' }))));
    send(applyStream.requestSerialize({ seq: 1, request: { epoch: '1', groups: [] } }));
    streams.closeAll();
    send(applyStream.requestSerialize({ seq: 2, request: { epoch: '1', groups: [] } }));
    expect(call.answers).toEqual([expect.objectContaining({ seq: 2, error: expect.objectContaining({ reason: ErrorReason.notApplied }) })]);
    expect(call.ended).toBeUndefined();
    release();
    await vi.waitFor(() => expect(call.ended?.code).toBe(status.UNAVAILABLE));
    expect(call.answers.map((answer) => answer.seq)).toEqual([2, 1]);
  });
});

describe('node stream frames: the sequence table', () => {
  it('an answer takes its frame once; a second answer, or one for a seq never sent, is counted and takes nothing', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.constant('add' as const), fc.nat({ max: 40 })), { maxLength: 200 }), (steps) => {
        const table = new SequenceTable<{ id: number }>();
        const given = new Map<number, { id: number }>();
        const taken = new Set<number>();
        let strays = 0;
        let next = 0;
        for (const step of steps) {
          if (step === 'add') {
            const entry = { id: next++ };
            const frameSeq = table.add(entry);
            expect(given.has(frameSeq)).toBe(false);
            given.set(frameSeq, entry);
            continue;
          }
          const entry = table.take(step);
          if (given.has(step) && !taken.has(step)) {
            expect(entry).toBe(given.get(step));
            taken.add(step);
          } else {
            expect(entry).toBeUndefined();
            strays++;
          }
        }
        expect(table.strayAnswers).toBe(strays);
        expect(table.size).toBe(given.size - taken.size);
      }),
      { numRuns: 500 },
    );
  });
});
