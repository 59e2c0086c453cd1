// The lean Increment codecs (src/wire/codecs/counter-codec.ts) against the
// reference: proto-loader's serializers (protobufjs) for the same methods.
// Property tests over random requests (unicode names, the whole int64 range,
// keys present, absent or empty, batches of 0..40) and random malformed bytes:
// every message one codec writes, the other reads to the same value; every
// input one accepts, the other accepts with the same value; every input one
// refuses, the other refuses with the same error text.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { counterServiceDefinition } from '../../../../src/common/index.ts';
import {
  decodeIncrementBatchRequest,
  decodeIncrementBatchResponse,
  decodeIncrementRequest,
  decodeIncrementResponse,
  encodeIncrementBatchRequest,
  encodeIncrementBatchResponse,
  encodeIncrementRequest,
  encodeIncrementResponse,
  leanCounterCodecs,
  withLeanCodecs,
  type LeanIncrementRequest,
  INT64_MAX,
  INT64_MIN,
} from '../../../../src/wire/index.ts';
import { CounterServiceClient as ClientCounterService } from '../../../../src/client/counter-proto.ts';
import { toWireKey } from '../../../../src/client/wire.ts';
import { framedSoup, mutated, outcomeOf, wireTokens } from '../../../helpers/wire-soup.ts';

const reference = {
  Increment: counterServiceDefinition.Increment!,
  IncrementBatch: counterServiceDefinition.IncrementBatch!,
};

// Reference decodes (proto-loader: amount a decimal string, key a Buffer), in a comparable form.
interface PlainRequest {
  counter: string;
  amount: string;
  key: string;
}
function plainOf(request: { counter: string; amount: unknown; idempotencyKey: Uint8Array }): PlainRequest {
  return { counter: request.counter, amount: String(request.amount), key: Buffer.from(request.idempotencyKey).toString('hex') };
}
function referenceRequest(bytes: Buffer): PlainRequest {
  return plainOf(reference.Increment.requestDeserialize(bytes) as LeanIncrementRequest);
}
function referenceBatch(bytes: Buffer): PlainRequest[] {
  return (reference.IncrementBatch.requestDeserialize(bytes) as { items: LeanIncrementRequest[] }).items.map(plainOf);
}
// IncrementResponse.total (int64 in a oneof) in one form: proto-loader's decimal string and oneof marker, the lean codec's string.
function plainResponseOf(response: { total?: unknown; returnedTotal?: unknown }): unknown {
  const { returnedTotal: _marker, total, ...rest } = response;
  return total === undefined ? rest : { ...rest, total: String(total) };
}
function referenceResponse(bytes: Buffer): unknown {
  return plainResponseOf(reference.Increment.responseDeserialize(bytes) as { total?: unknown });
}
function referenceBatchResponse(bytes: Buffer): unknown {
  const { results } = reference.IncrementBatch.responseDeserialize(bytes) as { results: { total?: unknown }[] };
  return { results: results.map(plainResponseOf) };
}

const int64 = fc.bigInt({ min: INT64_MIN, max: INT64_MAX });
/** Amounts near the edges where a number stops being exact, and across the range. */
const amount = fc.oneof(
  int64,
  fc.bigInt({ min: -(2n ** 54n), max: 2n ** 54n }),
  fc.integer({ min: -1000, max: 1000 }).map(BigInt),
  fc.constantFrom(INT64_MIN, INT64_MAX, 0n, -1n, 2n ** 53n - 1n, 2n ** 53n, -(2n ** 53n) + 1n, -(2n ** 53n), 2n ** 32n, -(2n ** 32n)),
);
const name = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.string({ maxLength: 80 }),
  fc.constantFrom('', 'hot', 'a'.repeat(200)),
);
const key = fc.oneof(
  fc.constant(undefined),
  fc.constant(Buffer.alloc(0)),
  fc.uint8Array({ minLength: 1, maxLength: 130 }).map(Buffer.from),
);
const request = fc.record({ counter: name, amount, idempotencyKey: key });
/** The three forms the encoders take an int64 in. */
const wireAmount = (value: bigint, form: number): number | bigint | string =>
  form === 0 && value >= -(2n ** 53n) + 1n && value <= 2n ** 53n - 1n ? Number(value) : form === 1 ? value : value.toString();
const expectedOf = (item: { counter: string; amount: bigint; idempotencyKey?: Buffer }): PlainRequest => ({
  counter: item.counter,
  amount: item.amount.toString(),
  key: (item.idempotencyKey ?? Buffer.alloc(0)).toString('hex'),
});

describe('counter codec: requests equal to the reference', () => {
  it('an IncrementRequest the lean codec writes reads back the same in protobufjs and in itself', () => {
    fc.assert(
      fc.property(request, fc.integer({ min: 0, max: 2 }), (item, form) => {
        const bytes = encodeIncrementRequest({ ...item, amount: wireAmount(item.amount, form) });
        expect(referenceRequest(bytes)).toEqual(expectedOf(item));
        const lean = decodeIncrementRequest(bytes);
        expect(plainOf(lean)).toEqual(expectedOf(item));
        // Exact: a number only where a number is exact, never a string.
        expect(typeof lean.amount).toBe(
          Number.isSafeInteger(Number(item.amount)) && BigInt(Number(item.amount)) === item.amount ? 'number' : 'bigint',
        );
      }),
      { numRuns: 2000 },
    );
  });

  it('an IncrementRequest protobufjs writes reads the same in the lean codec', () => {
    fc.assert(
      fc.property(request, (item) => {
        const bytes = reference.Increment.requestSerialize({ ...item, amount: item.amount.toString() });
        expect(plainOf(decodeIncrementRequest(bytes))).toEqual(referenceRequest(bytes));
        expect(plainOf(decodeIncrementRequest(bytes))).toEqual(expectedOf(item));
      }),
      { numRuns: 2000 },
    );
  });

  it('an IncrementBatchRequest of 0..40 items reads the same both ways', () => {
    fc.assert(
      fc.property(fc.array(request, { maxLength: 40 }), fc.integer({ min: 0, max: 2 }), (items, form) => {
        const leanBytes = encodeIncrementBatchRequest({ items: items.map((item) => ({ ...item, amount: wireAmount(item.amount, form) })) });
        expect(referenceBatch(leanBytes)).toEqual(items.map(expectedOf));
        expect(decodeIncrementBatchRequest(leanBytes).items.map(plainOf)).toEqual(items.map(expectedOf));
        const referenceBytes = reference.IncrementBatch.requestSerialize({
          items: items.map((item) => ({ ...item, amount: item.amount.toString() })),
        });
        expect(decodeIncrementBatchRequest(referenceBytes).items.map(plainOf)).toEqual(referenceBatch(referenceBytes));
      }),
      { numRuns: 500 },
    );
  });

  it('an absent or empty key is one shared empty Buffer, not one per item', () => {
    const bytes = encodeIncrementBatchRequest({
      items: [
        { counter: 'a', amount: 1 },
        { counter: 'b', amount: 2, idempotencyKey: Buffer.alloc(0) },
      ],
    });
    const [first, second] = decodeIncrementBatchRequest(bytes).items;
    expect(first!.idempotencyKey.length).toBe(0);
    expect(Buffer.isBuffer(first!.idempotencyKey)).toBe(true);
    expect(second!.idempotencyKey).toBe(first!.idempotencyKey);
  });

  it('int64 edges come out exact — numbers up to 2^53 - 1, bigints beyond, negatives as 10-byte varints', () => {
    const read = (value: number | bigint | string) =>
      decodeIncrementRequest(encodeIncrementRequest({ counter: 'c', amount: value })).amount;
    expect(read(2n ** 53n - 1n)).toBe(Number.MAX_SAFE_INTEGER);
    expect(read(-(2n ** 53n) + 1n)).toBe(-Number.MAX_SAFE_INTEGER);
    expect(read(2n ** 53n)).toBe(2n ** 53n);
    expect(read(2n ** 53n + 1n)).toBe(2n ** 53n + 1n);
    expect(read(-(2n ** 53n) - 1n)).toBe(-(2n ** 53n) - 1n);
    expect(read(INT64_MAX)).toBe(INT64_MAX);
    expect(read(INT64_MIN.toString())).toBe(INT64_MIN);
    expect(read(-1)).toBe(-1);
    expect([...encodeIncrementRequest({ amount: -1 })]).toEqual([0x10, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]);
    expect([...encodeIncrementRequest({ amount: -1 })]).toEqual([...reference.Increment.requestSerialize({ amount: -1 })]);
  });

  it('fields in any order, repeated (last wins) and unknown (every wire type, groups too) read as protobufjs reads them', () => {
    const bytes = Buffer.from([
      // field 9 varint, field 10 fixed64, field 11 bytes, field 12 group holding a varint, field 13 fixed32
      0x48, 0x96, 0x01, 0x51, 1, 2, 3, 4, 5, 6, 7, 8, 0x5a, 0x02, 0xaa, 0xbb, 0x63, 0x08, 0x01, 0x64, 0x6d, 1, 2, 3, 4,
      // key 'k', amount 5, counter 'x', amount 7 (last wins), counter 'y'
      0x1a, 0x01, 0x6b, 0x10, 0x05, 0x0a, 0x01, 0x78, 0x10, 0x07, 0x0a, 0x01, 0x79,
    ]);
    expect(plainOf(decodeIncrementRequest(bytes))).toEqual({ counter: 'y', amount: '7', key: '6b' });
    expect(referenceRequest(bytes)).toEqual({ counter: 'y', amount: '7', key: '6b' });
  });

  it('invalid UTF-8 in a name reads as protobufjs reads it (U+FFFD), not refused', () => {
    const bytes = Buffer.from([0x0a, 0x03, 0x61, 0xff, 0x62, 0x10, 0x01]);
    expect(decodeIncrementRequest(bytes).counter).toBe('a\ufffdb');
    expect(referenceRequest(bytes).counter).toBe('a\ufffdb');
  });
});

describe('counter codec: responses equal to the reference', () => {
  const response = fc.record({ applied: fc.boolean(), shard: fc.oneof(fc.nat({ max: 300 }), fc.nat({ max: 0xffffffff })) });

  it('IncrementResponse and IncrementBatchResponse read the same both ways', () => {
    fc.assert(
      fc.property(fc.array(response, { maxLength: 40 }), (results) => {
        const leanBytes = encodeIncrementBatchResponse({ results });
        expect(referenceBatchResponse(leanBytes)).toEqual({ results });
        expect(decodeIncrementBatchResponse(leanBytes)).toEqual({ results });
        const referenceBytes = reference.IncrementBatch.responseSerialize({ results });
        expect(decodeIncrementBatchResponse(referenceBytes)).toEqual(referenceBatchResponse(referenceBytes));
        for (const result of results) {
          expect(referenceResponse(encodeIncrementResponse(result))).toEqual(result);
          expect(decodeIncrementResponse(reference.Increment.responseSerialize(result))).toEqual(result);
        }
      }),
      { numRuns: 500 },
    );
  });
});

describe('counter codec: malformed input is refused as protobufjs refuses it', () => {
  const tokens = wireTokens();
  const batchOfSoup = framedSoup(tokens);
  const validRequest = request.map((item) => encodeIncrementRequest(item));
  const validBatch = fc.array(request, { maxLength: 4 }).map((items) => encodeIncrementBatchRequest({ items }));

  const sameRequestOutcome = (bytes: Buffer): void => {
    const lean = outcomeOf(() => plainOf(decodeIncrementRequest(bytes)));
    expect(lean).toEqual(outcomeOf(() => referenceRequest(bytes)));
  };
  const sameBatchOutcome = (bytes: Buffer): void => {
    const lean = outcomeOf(() => decodeIncrementBatchRequest(bytes).items.map(plainOf));
    expect(lean).toEqual(outcomeOf(() => referenceBatch(bytes)));
  };

  it('random wire tokens as an IncrementRequest: both refuse with the same error, or both read the same value', () => {
    fc.assert(fc.property(fc.oneof(tokens, fc.uint8Array({ maxLength: 40 }).map(Buffer.from), mutated(validRequest)), sameRequestOutcome), {
      numRuns: 5000,
    });
  });

  it('random wire tokens as an IncrementBatchRequest: both refuse with the same error, or both read the same value', () => {
    fc.assert(fc.property(fc.oneof(tokens, batchOfSoup, mutated(validBatch)), sameBatchOutcome), { numRuns: 5000 });
  });

  it('random bytes as responses: both refuse with the same error, or both read the same value', () => {
    const bytes = fc.oneof(tokens, batchOfSoup);
    fc.assert(
      fc.property(bytes, (input) => {
        expect(outcomeOf(() => plainResponseOf(decodeIncrementResponse(input)))).toEqual(outcomeOf(() => referenceResponse(input)));
        expect(outcomeOf(() => ({ results: decodeIncrementBatchResponse(input).results.map(plainResponseOf) }))).toEqual(
          outcomeOf(() => referenceBatchResponse(input)),
        );
      }),
      { numRuns: 3000 },
    );
  });

  it("the bad-input test's cases — a cut varint, a bad wire type, a length past the end — are refused with protobufjs's words", () => {
    const cases = [
      Buffer.from([0x10]), // amount announced, no value (test/integration/bad-input.test.ts)
      Buffer.from([0x0f]), // field 1, wire type 7
      Buffer.from([0x1a, 0x05, 0x01]), // key of 5 bytes, 1 there
      Buffer.from([0x10, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]), // an 11-byte varint
      Buffer.from([0x0c]), // an end-group with no group
    ];
    for (const bytes of cases) {
      const lean = outcomeOf(() => decodeIncrementRequest(bytes));
      expect(lean).toHaveProperty('error');
      expect(lean).toEqual(outcomeOf(() => reference.Increment.requestDeserialize(bytes)));
    }
    const batch = Buffer.from([0x0a, 0x09, 0x0a, 0x01, 0x78]); // an item longer than the message
    expect(outcomeOf(() => decodeIncrementBatchRequest(batch))).toEqual({ error: 'index out of range' });
    expect(outcomeOf(() => reference.IncrementBatch.requestDeserialize(batch))).toEqual({ error: 'index out of range' });
  });
});

describe('counter codec: wiring', () => {
  it('the client sends Increment and IncrementBatch through the lean codec, everything else through proto-loader', () => {
    const service = ClientCounterService.service;
    expect(service.IncrementBatch!.requestSerialize).toBe(encodeIncrementBatchRequest);
    expect(service.IncrementBatch!.responseDeserialize).toBe(decodeIncrementBatchResponse);
    expect(service.Increment!.requestSerialize).toBe(encodeIncrementRequest);
    expect(service.Read!.requestSerialize).not.toBe(encodeIncrementRequest);
  });

  it('the client gives every unkeyed increment the same empty key, not a Buffer each', () => {
    expect(toWireKey(null)).toBe(toWireKey(null));
    expect(toWireKey(null).length).toBe(0);
    expect(encodeIncrementRequest({ counter: 'c', amount: 1, idempotencyKey: toWireKey(null) })).toEqual(
      Buffer.from([0x0a, 0x01, 0x63, 0x10, 0x01]),
    );
  });

  it('withLeanCodecs replaces only the two methods, leaving the definition it was given as it was', () => {
    const lean = withLeanCodecs(counterServiceDefinition);
    expect(lean.IncrementBatch!.requestDeserialize).toBe(leanCounterCodecs.IncrementBatch.requestDeserialize);
    expect(lean.IncrementBatch!.path).toBe('/counter.v1.CounterService/IncrementBatch');
    expect(lean.Read).toBe(counterServiceDefinition.Read);
    expect(counterServiceDefinition.IncrementBatch!.requestDeserialize).not.toBe(leanCounterCodecs.IncrementBatch.requestDeserialize);
  });
});
