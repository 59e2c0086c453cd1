// The lean ReadMany codec (src/wire/codecs/counter-codec.ts) against the reference,
// proto-loader's serializers (protobufjs): random requests (unicode names,
// empty ones, every int32 consistency) and responses (the whole int64 range in
// each of total, as_of_unix_ms and staleness_ms) read the same whichever side
// wrote them; random malformed bytes are refused by both with the same error
// text, or read by both to the same value. The router answers a refused
// request INVALID_ARGUMENT "malformed request: <that text>" (guardMalformed).
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { counterServiceDefinition } from '../../../../src/common/index.ts';
import {
  decodeReadManyRequest,
  decodeReadManyResponse,
  encodeReadManyRequest,
  encodeReadManyResponse,
  leanCounterCodecs,
  withLeanCodecs,
  type LeanReadResponse,
  INT64_MAX,
  INT64_MIN,
} from '../../../../src/wire/index.ts';
import { CounterServiceClient as ClientCounterService } from '../../../../src/client/counter-proto.ts';
import { framedSoup, mutated, outcomeOf, wireTokens } from '../../../helpers/wire-soup.ts';

const reference = counterServiceDefinition.ReadMany!;

/** A ReadResponse with its int64s as decimal strings: how proto-loader gives them, so both decodes compare. */
interface PlainValue {
  counter: string;
  total: string;
  exact: boolean;
  asOfUnixMs: string;
  stalenessMs: string;
  shards: number;
}
const plainOf = (value: LeanReadResponse | PlainValue): PlainValue => ({
  counter: value.counter,
  total: String(value.total),
  exact: value.exact,
  asOfUnixMs: String(value.asOfUnixMs),
  stalenessMs: String(value.stalenessMs),
  shards: value.shards,
});
const referenceResponse = (bytes: Buffer): PlainValue[] =>
  (reference.responseDeserialize(bytes) as { values: PlainValue[] }).values.map(plainOf);
const leanResponse = (bytes: Buffer): PlainValue[] => decodeReadManyResponse(bytes).values.map(plainOf);
const referenceRequest = (bytes: Buffer): unknown => reference.requestDeserialize(bytes);

const name = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.string({ maxLength: 80 }),
  fc.constantFrom('', 'post:1:views', 'a'.repeat(200)),
);
/** Consistency as a client may give it: the enum's names, any int32, or a name the enum does not have. */
const consistency = fc.oneof(
  fc.constantFrom<string | number>('EXACT', 'CACHED', 0, 1, 2, -1, 'BOGUS'),
  fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }),
);
const int64 = fc.oneof(
  fc.bigInt({ min: INT64_MIN, max: INT64_MAX }),
  fc.bigInt({ min: -(2n ** 54n), max: 2n ** 54n }),
  fc.integer({ min: -1000, max: 1000 }).map(BigInt),
  fc.constantFrom(INT64_MIN, INT64_MAX, 0n, -1n, 2n ** 53n - 1n, 2n ** 53n, -(2n ** 53n) + 1n, -(2n ** 53n), 2n ** 32n),
);
const value = fc.record({
  counter: name,
  total: int64,
  exact: fc.boolean(),
  asOfUnixMs: int64,
  stalenessMs: int64,
  shards: fc.oneof(fc.nat({ max: 300 }), fc.nat({ max: 0xffffffff })),
});
type Value = typeof value extends fc.Arbitrary<infer T> ? T : never;
/** The three forms the encoders take an int64 in. */
const wireInt64 = (int: bigint, form: number): number | bigint | string =>
  form === 0 && int >= -(2n ** 53n) + 1n && int <= 2n ** 53n - 1n ? Number(int) : form === 1 ? int : int.toString();
const wireValue = (item: Value, form: number) => ({
  ...item,
  total: wireInt64(item.total, form),
  asOfUnixMs: wireInt64(item.asOfUnixMs, (form + 1) % 3),
  stalenessMs: wireInt64(item.stalenessMs, (form + 2) % 3),
});
const expectedOf = (item: Value): PlainValue => plainOf(item);

describe('counter codec, ReadMany: requests equal to the reference', () => {
  it('counter codec: a ReadManyRequest either side writes reads the same in protobufjs and in the lean codec', () => {
    fc.assert(
      fc.property(fc.array(name, { maxLength: 60 }), consistency, (counters, given) => {
        const leanBytes = encodeReadManyRequest({ counters, consistency: given });
        const referenceBytes = reference.requestSerialize({ counters, consistency: given });
        const expected = referenceRequest(referenceBytes);
        expect(referenceRequest(leanBytes)).toEqual(expected);
        expect(decodeReadManyRequest(leanBytes)).toEqual(expected);
        expect(decodeReadManyRequest(referenceBytes)).toEqual(expected);
        expect((expected as { counters: string[] }).counters).toEqual(counters.map((counter) => referenceRoundTrip(counter)));
      }),
      { numRuns: 1000 },
    );
  });

  it('counter codec: consistency reads as the enum name when it has one, as the number when not (what the service reports)', () => {
    expect(decodeReadManyRequest(encodeReadManyRequest({ counters: ['a'] }))).toEqual({
      counters: ['a'],
      consistency: 'EXACT',
      scope: 'SCOPE_REGION',
    });
    expect(decodeReadManyRequest(encodeReadManyRequest({ counters: ['a'], consistency: 'CACHED' })).consistency).toBe('CACHED');
    expect(decodeReadManyRequest(encodeReadManyRequest({ counters: [], consistency: 7 })).consistency).toBe(7);
    expect(decodeReadManyRequest(encodeReadManyRequest({ counters: [], consistency: -1 })).consistency).toBe(-1);
    expect([...encodeReadManyRequest({ counters: [], consistency: -1 })]).toEqual([...reference.requestSerialize({ consistency: -1 })]);
  });
});

/** A name as protobufjs reads it back after writing it (a lone surrogate becomes U+FFFD). */
function referenceRoundTrip(counter: string): string {
  return (referenceRequest(reference.requestSerialize({ counters: [counter] })) as { counters: string[] }).counters[0]!;
}

describe('counter codec, ReadMany: responses equal to the reference', () => {
  it('counter codec: a ReadManyResponse of 0..60 values either side writes reads the same both ways, int64s exact', () => {
    fc.assert(
      fc.property(fc.array(value, { maxLength: 60 }), fc.integer({ min: 0, max: 2 }), (values, form) => {
        const leanBytes = encodeReadManyResponse({ values: values.map((item) => wireValue(item, form)) });
        const expected = values.map(expectedOf).map((item) => ({ ...item, counter: referenceRoundTrip(item.counter) }));
        expect(referenceResponse(leanBytes)).toEqual(expected);
        expect(leanResponse(leanBytes)).toEqual(expected);
        const referenceBytes = reference.responseSerialize({
          values: values.map((item) => ({
            ...item,
            total: item.total.toString(),
            asOfUnixMs: item.asOfUnixMs.toString(),
            stalenessMs: item.stalenessMs.toString(),
          })),
        });
        expect(leanResponse(referenceBytes)).toEqual(referenceResponse(referenceBytes));
        // A number only where a number is exact, else a bigint; never a string.
        for (const decoded of decodeReadManyResponse(leanBytes).values)
          for (const int of [decoded.total, decoded.asOfUnixMs, decoded.stalenessMs])
            expect(
              typeof int === 'number'
                ? Number.isSafeInteger(int)
                : typeof int === 'bigint' && (int > 2n ** 53n - 1n || int < -(2n ** 53n) + 1n),
            ).toBe(true);
      }),
      { numRuns: 500 },
    );
  });
});

describe('counter codec, ReadMany: malformed input is refused as protobufjs refuses it', () => {
  const tokens = wireTokens(7, [0x0a, 0x10, 0x12]);
  const validRequest = fc
    .tuple(fc.array(name, { maxLength: 5 }), consistency)
    .map(([counters, given]) => encodeReadManyRequest({ counters, consistency: given }));
  const validResponse = fc.array(value, { maxLength: 4 }).map((values) => encodeReadManyResponse({ values }));

  it('counter codec: random wire tokens as a ReadManyRequest: both refuse with the same error, or both read the same value', () => {
    fc.assert(
      fc.property(fc.oneof(tokens, fc.uint8Array({ maxLength: 40 }).map(Buffer.from), mutated(validRequest)), (bytes) => {
        expect(outcomeOf(() => decodeReadManyRequest(bytes))).toEqual(outcomeOf(() => referenceRequest(bytes)));
      }),
      { numRuns: 5000 },
    );
  });

  it('counter codec: random wire tokens as a ReadManyResponse: both refuse with the same error, or both read the same value', () => {
    fc.assert(
      fc.property(fc.oneof(tokens, framedSoup(tokens), mutated(validResponse)), (bytes) => {
        expect(outcomeOf(() => leanResponse(bytes))).toEqual(outcomeOf(() => referenceResponse(bytes)));
      }),
      { numRuns: 5000 },
    );
  });

  it("counter codec: a cut varint, a bad wire type, a name past the end, an unclosed group: refused in protobufjs's words", () => {
    const cases = [
      Buffer.from([0x10]), // consistency announced, no value
      Buffer.from([0x0f]), // field 1, wire type 7
      Buffer.from([0x12, 0x01, 0x61]), // field 2 as length-delimited: read as a varint, then a tag of wire type 1 past the end
      Buffer.from([0x0b]), // a group that never ends
      Buffer.from([0x0c]), // an end-group with no group
    ];
    for (const bytes of cases) {
      const lean = outcomeOf(() => decodeReadManyRequest(bytes));
      expect(lean).toHaveProperty('error');
      expect(lean).toEqual(outcomeOf(() => referenceRequest(bytes)));
    }
    const response = Buffer.from([0x0a, 0x09, 0x0a, 0x01, 0x78]); // a value longer than the message
    expect(outcomeOf(() => decodeReadManyResponse(response))).toEqual({ error: 'index out of range' });
    expect(outcomeOf(() => reference.responseDeserialize(response))).toEqual({ error: 'index out of range' });
  });
});

describe('counter codec, ReadMany: wiring', () => {
  it('counter codec: the client and the router both send and read ReadMany through the lean codec', () => {
    const client = ClientCounterService.service.ReadMany!;
    expect(client.requestSerialize).toBe(encodeReadManyRequest);
    expect(client.responseDeserialize).toBe(decodeReadManyResponse);
    const router = withLeanCodecs(counterServiceDefinition).ReadMany!;
    expect(router.requestDeserialize).toBe(leanCounterCodecs.ReadMany.requestDeserialize);
    expect(router.responseSerialize).toBe(encodeReadManyResponse);
    expect(router.path).toBe('/counter.v1.CounterService/ReadMany');
    expect(counterServiceDefinition.ReadMany!.responseSerialize).not.toBe(encodeReadManyResponse);
  });
});
