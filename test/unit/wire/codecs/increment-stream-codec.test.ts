// The lean IncrementStream codecs against the reference, proto-loader's
// serializers (protobufjs) for the same method: every message one writes,
// the other reads to the same value (sequence numbers over the whole uint64
// range, errors with their details), and malformed bytes are refused by
// both, or read the same by both.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { counterServiceDefinition } from '../../../../src/common/index.ts';
import {
  decodeIncrementStreamRequest,
  decodeIncrementStreamResponse,
  encodeIncrementBatchRequest,
  encodeIncrementStreamRequest,
  encodeIncrementStreamResponse,
  type LeanIncrementRequest,
  encodeStatusDetails,
} from '../../../../src/wire/index.ts';
import { framedSoup, mutated, outcomeOf, wireTokens } from '../../../helpers/wire-soup.ts';

const reference = counterServiceDefinition.IncrementStream!;

interface PlainItem {
  counter: string;
  amount: string;
  key: string;
}
const plainItem = (item: { counter: string; amount: unknown; idempotencyKey: Uint8Array }): PlainItem => ({
  counter: item.counter,
  amount: String(item.amount),
  key: Buffer.from(item.idempotencyKey).toString('hex'),
});
const plainRequest = (request: { items: LeanIncrementRequest[]; sequence: unknown }) => ({
  items: request.items.map(plainItem),
  sequence: String(request.sequence),
});
const plainResponse = (response: {
  results: { applied: boolean; shard: number; total?: string; returnedTotal?: string }[];
  sequence: unknown;
  error: { code: number; message: string; reason: string; statusDetails: Uint8Array } | null;
}) => ({
  // proto-loader marks the oneof holding total (returnedTotal); the lean codec gives total alone.
  results: response.results.map(({ returnedTotal: _marker, ...result }) => result),
  sequence: String(response.sequence),
  error: response.error === null ? null : { ...response.error, statusDetails: Buffer.from(response.error.statusDetails).toString('hex') },
});

const sequence = fc.oneof(
  fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }),
  fc.constantFrom(0n, 1n, 2n ** 53n - 1n, 2n ** 53n, 2n ** 63n, 2n ** 64n - 1n),
);
const item = fc.record({
  counter: fc.string({ maxLength: 40 }),
  amount: fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }),
  idempotencyKey: fc.uint8Array({ maxLength: 40 }).map(Buffer.from),
});
const result = fc.record({ applied: fc.boolean(), shard: fc.nat({ max: 2 ** 32 - 1 }) });
const streamError = fc
  .record({
    code: fc.integer({ min: 1, max: 16 }),
    message: fc.string({ maxLength: 60 }),
    reason: fc.constantFrom('NOT_APPLIED', 'OUTCOME_UNKNOWN', ''),
  })
  .map((error) => ({
    ...error,
    statusDetails: encodeStatusDetails(error.code, error.message, { reason: error.reason || undefined, retryAfterMs: 100 }),
  }));
/** A sequence number as the encoders take it: a number where exact, else a bigint. */
const wireSequence = (value: bigint): number | bigint => (value <= 2n ** 53n - 1n ? Number(value) : value);

describe('IncrementStream codec', () => {
  it('stream codec: a request (0..20 items, any uint64 sequence) reads the same in protobufjs and in the lean codec, both ways', () => {
    fc.assert(
      fc.property(fc.array(item, { maxLength: 20 }), sequence, (items, seq) => {
        const leanBytes = encodeIncrementStreamRequest({ items, sequence: wireSequence(seq) });
        const expected = { items: items.map((one) => plainItem({ ...one, amount: one.amount.toString() })), sequence: seq.toString() };
        expect(plainRequest(reference.requestDeserialize(leanBytes) as never)).toEqual(expected);
        const lean = decodeIncrementStreamRequest(leanBytes);
        expect(plainRequest(lean)).toEqual(expected);
        expect(typeof lean.sequence).toBe(seq <= 2n ** 53n - 1n ? 'number' : 'bigint');
        const referenceBytes = reference.requestSerialize({
          items: items.map((one) => ({ ...one, amount: one.amount.toString() })),
          sequence: seq.toString(),
        });
        expect(plainRequest(decodeIncrementStreamRequest(referenceBytes))).toEqual(expected);
      }),
      { numRuns: 500 },
    );
  });

  it('stream codec: an IncrementBatchRequest is a stream request with sequence 0', () => {
    const bytes = encodeIncrementBatchRequest({ items: [{ counter: 'a', amount: 3 }] });
    expect(plainRequest(decodeIncrementStreamRequest(bytes))).toEqual({ items: [{ counter: 'a', amount: '3', key: '' }], sequence: '0' });
  });

  it('stream codec: a response (results or an error with its details) reads the same in protobufjs and in the lean codec, both ways', () => {
    fc.assert(
      fc.property(fc.array(result, { maxLength: 20 }), sequence, fc.option(streamError, { nil: null }), (results, seq, error) => {
        const answer = { results: error === null ? results : [], sequence: wireSequence(seq), error };
        const expected = plainResponse({ ...answer, sequence: seq });
        const leanBytes = encodeIncrementStreamResponse(answer);
        expect(plainResponse(decodeIncrementStreamResponse(leanBytes))).toEqual(expected);
        const decodedByReference = reference.responseDeserialize(leanBytes) as never as Parameters<typeof plainResponse>[0];
        expect(plainResponse({ ...decodedByReference, error: decodedByReference.error ?? null })).toEqual(expected);
        const referenceBytes = reference.responseSerialize({ ...answer, sequence: seq.toString() });
        expect(plainResponse(decodeIncrementStreamResponse(referenceBytes))).toEqual(expected);
      }),
      { numRuns: 500 },
    );
  });

  it('stream codec: random wire tokens as a stream request or response: both refuse, or both read the same value', () => {
    const tokens = wireTokens(5, [0x0a, 0x10, 0x1a]);
    const validRequest = fc
      .tuple(fc.array(item, { maxLength: 3 }), sequence)
      .map(([items, seq]) => encodeIncrementStreamRequest({ items, sequence: wireSequence(seq) }));
    fc.assert(
      fc.property(fc.oneof(tokens, framedSoup(tokens), mutated(validRequest)), (bytes) => {
        const lean = outcomeOf(() => plainRequest(decodeIncrementStreamRequest(bytes)));
        const byReference = outcomeOf(() => plainRequest(reference.requestDeserialize(bytes) as never));
        expect('error' in lean).toBe('error' in byReference);
        if ('value' in lean) expect(lean).toEqual(byReference);
        const leanResponse = outcomeOf(() => plainResponse(decodeIncrementStreamResponse(bytes)));
        const referenceResponse = outcomeOf(() => {
          const decoded = reference.responseDeserialize(bytes) as never as Parameters<typeof plainResponse>[0];
          return plainResponse({ ...decoded, error: decoded.error ?? null });
        });
        expect('error' in leanResponse).toBe('error' in referenceResponse);
        if ('value' in leanResponse) expect(leanResponse).toEqual(referenceResponse);
      }),
      { numRuns: 3000 },
    );
  });
});
