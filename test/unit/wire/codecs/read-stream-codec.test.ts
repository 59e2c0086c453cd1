// The lean ReadStream codecs against the reference, proto-loader's
// serializers (protobufjs) for the same method: every message one writes,
// the other reads to the same value (sequence numbers over the whole uint64
// range, totals over int64, errors with their details), a ReadManyRequest's
// bytes are a page with sequence 0, and malformed or truncated bytes are
// refused by both, or read the same by both.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { counterServiceDefinition } from '../../../../src/common/index.ts';
import {
  decodeReadStreamRequest,
  decodeReadStreamResponse,
  encodeReadManyRequest,
  encodeReadStreamRequest,
  encodeReadStreamResponse,
  encodeStatusDetails,
} from '../../../../src/wire/index.ts';
import { framedSoup, mutated, outcomeOf, wireTokens } from '../../../helpers/wire-soup.ts';

const reference = counterServiceDefinition.ReadStream!;

const plainRequest = (request: { counters: string[]; consistency: unknown; scope?: unknown; sequence: unknown }) => ({
  counters: request.counters,
  consistency: request.consistency,
  scope: request.scope,
  sequence: String(request.sequence),
});
interface AnyValue {
  counter: string;
  total: unknown;
  exact: boolean;
  asOfUnixMs: unknown;
  stalenessMs: unknown;
  shards: number;
}
const plainValue = (value: AnyValue) => ({
  counter: value.counter,
  total: String(value.total),
  exact: value.exact,
  asOfUnixMs: String(value.asOfUnixMs),
  stalenessMs: String(value.stalenessMs),
  shards: value.shards,
});
const plainResponse = (response: {
  values: AnyValue[];
  sequence: unknown;
  error?: { code: number; message: string; reason: string; statusDetails: Uint8Array } | null;
}) => ({
  values: response.values.map(plainValue),
  sequence: String(response.sequence),
  error:
    response.error === null || response.error === undefined
      ? null
      : { ...response.error, statusDetails: Buffer.from(response.error.statusDetails).toString('hex') },
});

const sequence = fc.oneof(
  fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }),
  fc.constantFrom(0n, 1n, 2n ** 53n - 1n, 2n ** 53n, 2n ** 63n, 2n ** 64n - 1n),
);
const int64 = fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n });
const value = fc.record({
  counter: fc.string({ maxLength: 40 }),
  total: int64,
  exact: fc.boolean(),
  asOfUnixMs: int64,
  stalenessMs: int64,
  shards: fc.nat({ max: 2 ** 32 - 1 }),
});
const pageError = fc
  .record({
    code: fc.integer({ min: 1, max: 16 }),
    message: fc.string({ maxLength: 60 }),
    reason: fc.constantFrom('NOT_APPLIED', ''),
  })
  .map((error) => ({ ...error, statusDetails: encodeStatusDetails(error.code, error.message, { reason: error.reason || undefined }) }));
const wireSequence = (seq: bigint): number | bigint => (seq <= 2n ** 53n - 1n ? Number(seq) : seq);

describe('ReadStream codec', () => {
  it('read stream codec: a page (0..60 names, either consistency and scope, any uint64 sequence) reads the same in protobufjs and in the lean codec, both ways', () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ maxLength: 30 }), { maxLength: 60 }),
        fc.constantFrom('EXACT', 'CACHED'),
        fc.constantFrom('SCOPE_REGION', 'SCOPE_GLOBAL'),
        sequence,
        (counters, consistency, scope, seq) => {
          const expected = { counters, consistency, scope, sequence: seq.toString() };
          const leanBytes = encodeReadStreamRequest({ counters, consistency, scope, sequence: wireSequence(seq) });
          expect(plainRequest(reference.requestDeserialize(leanBytes) as never)).toEqual(expected);
          const lean = decodeReadStreamRequest(leanBytes);
          expect(plainRequest(lean)).toEqual(expected);
          expect(typeof lean.sequence).toBe(seq <= 2n ** 53n - 1n ? 'number' : 'bigint');
          const referenceBytes = reference.requestSerialize({ counters, consistency, scope, sequence: seq.toString() });
          expect(plainRequest(decodeReadStreamRequest(referenceBytes))).toEqual(expected);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('read stream codec: a ReadManyRequest is a page with sequence 0; a consistency the enum does not name stays a number', () => {
    const bytes = encodeReadManyRequest({ counters: ['a', 'b'], consistency: 'CACHED' });
    expect(plainRequest(decodeReadStreamRequest(bytes))).toEqual({
      counters: ['a', 'b'],
      consistency: 'CACHED',
      scope: 'SCOPE_REGION',
      sequence: '0',
    });
    const global = encodeReadManyRequest({ counters: ['a'], consistency: 'EXACT', scope: 'SCOPE_GLOBAL' });
    expect(decodeReadStreamRequest(global).scope).toBe('SCOPE_GLOBAL');
    const unknown = decodeReadStreamRequest(encodeReadStreamRequest({ counters: ['a'], consistency: 7, sequence: 3 }));
    expect(unknown).toEqual({ counters: ['a'], consistency: 7, scope: 'SCOPE_REGION', sequence: 3 });
    const negative = decodeReadStreamRequest(encodeReadStreamRequest({ counters: ['a'], consistency: -1, sequence: 2n ** 64n - 1n }));
    expect(negative).toEqual({ counters: ['a'], consistency: -1, scope: 'SCOPE_REGION', sequence: 2n ** 64n - 1n });
  });

  it('read stream codec: an answer (values or an error with its details) reads the same in protobufjs and in the lean codec, both ways', () => {
    fc.assert(
      fc.property(fc.array(value, { maxLength: 60 }), sequence, fc.option(pageError, { nil: null }), (values, seq, error) => {
        const answer = { values: error === null ? values : [], sequence: wireSequence(seq), error };
        const expected = plainResponse({ ...answer, sequence: seq });
        const leanBytes = encodeReadStreamResponse(answer);
        expect(plainResponse(decodeReadStreamResponse(leanBytes))).toEqual(expected);
        expect(plainResponse(reference.responseDeserialize(leanBytes) as never)).toEqual(expected);
        const referenceBytes = reference.responseSerialize({
          values: answer.values.map((one) => ({
            ...one,
            total: one.total.toString(),
            asOfUnixMs: one.asOfUnixMs.toString(),
            stalenessMs: one.stalenessMs.toString(),
          })),
          sequence: seq.toString(),
          error,
        });
        expect(plainResponse(decodeReadStreamResponse(referenceBytes))).toEqual(expected);
      }),
      { numRuns: 300 },
    );
  });

  it('read stream codec: a page cut short anywhere is refused, never read as a shorter page', () => {
    const bytes = encodeReadStreamResponse({
      values: [
        { counter: 'likes:1', total: 12n, exact: true, asOfUnixMs: 1_700_000_000_000 },
        { counter: 'likes:2', total: 2n ** 62n, exact: true },
      ],
      sequence: 9,
    });
    for (let cut = 1; cut < bytes.length; cut++) {
      const lean = outcomeOf(() => plainResponse(decodeReadStreamResponse(bytes.subarray(0, cut))));
      const byReference = outcomeOf(() => plainResponse(reference.responseDeserialize(bytes.subarray(0, cut)) as never));
      expect('error' in lean).toBe('error' in byReference);
      if ('value' in lean) expect(lean).toEqual(byReference);
    }
    expect(() => decodeReadStreamResponse(bytes.subarray(0, 5))).toThrow();
  });

  it('read stream codec: random wire tokens as a page or an answer: both refuse, or both read the same value', () => {
    const tokens = wireTokens(5, [0x0a, 0x10, 0x72, 0x78]);
    const validRequest = fc
      .tuple(fc.array(fc.string({ maxLength: 8 }), { maxLength: 3 }), sequence)
      .map(([counters, seq]) => encodeReadStreamRequest({ counters, consistency: 'CACHED', sequence: wireSequence(seq) }));
    fc.assert(
      fc.property(fc.oneof(tokens, framedSoup(tokens), mutated(validRequest)), (bytes) => {
        const lean = outcomeOf(() => plainRequest(decodeReadStreamRequest(bytes)));
        const byReference = outcomeOf(() => plainRequest(reference.requestDeserialize(bytes) as never));
        expect('error' in lean).toBe('error' in byReference);
        if ('value' in lean) expect(lean).toEqual(byReference);
        const leanResponse = outcomeOf(() => plainResponse(decodeReadStreamResponse(bytes)));
        const referenceResponse = outcomeOf(() => plainResponse(reference.responseDeserialize(bytes) as never));
        expect('error' in leanResponse).toBe('error' in referenceResponse);
        if ('value' in leanResponse) expect(leanResponse).toEqual(referenceResponse);
      }),
      { numRuns: 3000 },
    );
  });
});
