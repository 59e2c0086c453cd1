// The node's lean ReadShards request decoders (the unary request and the
// ReadShardsStream frame) against the reference, proto-loader's decoder for
// the same methods: whatever the router's encoder writes (packed or not,
// ids and generations over the whole uint64 range, with or without a
// protocol stamp) reads to the same values; random, mutated and truncated
// bytes are refused by both or read the same by both; and the wired
// definition decodes with them.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { shardNodeServiceDefinition } from '../../../../src/common/index.ts';
import { decodeReadShardsFrame, decodeReadShardsRequest, withLeanReadShardsResponse } from '../../../../src/wire/internal/index.ts';
import { framedSoup, mutated, outcomeOf, wireTokens } from '../../../helpers/wire-soup.ts';

const unary = shardNodeServiceDefinition.ReadShards!;
const stream = shardNodeServiceDefinition.ReadShardsStream!;

interface AnyRequest {
  shardIds: unknown[];
  generations: unknown[];
  protocol: { current: number; oldest: number } | null;
}
const plainRequest = (request: AnyRequest | null) =>
  request === null
    ? null
    : { shardIds: request.shardIds.map(String), generations: request.generations.map(String), protocol: request.protocol };
const plainFrame = (frame: { seq: number; request: AnyRequest | null }) => ({ seq: frame.seq, request: plainRequest(frame.request) });

const uint64 = fc.oneof(
  fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }),
  fc.bigInt({ min: 1n, max: 2n ** 40n }),
  fc.constantFrom(0n, 1n, 2n ** 32n - 1n, 2n ** 32n, 2n ** 53n - 1n, 2n ** 53n, 2n ** 64n - 1n),
);
const request = fc.record({
  shardIds: fc.array(uint64, { maxLength: 60 }),
  generations: fc.array(uint64, { maxLength: 5 }),
  protocol: fc.option(fc.record({ current: fc.nat({ max: 2 ** 32 - 1 }), oldest: fc.nat({ max: 2 ** 32 - 1 }) }), { nil: null }),
});
const asInput = (value: { shardIds: bigint[]; generations: bigint[]; protocol: AnyRequest['protocol'] }) => ({
  shardIds: value.shardIds.map(String),
  generations: value.generations.map(String),
  protocol: value.protocol,
});

describe('ReadShards request codec', () => {
  it('node codec: a request as the router writes it reads the same in protobufjs and in the lean decoder; ids are numbers below 2^53', () => {
    fc.assert(
      fc.property(request, (value) => {
        const bytes = unary.requestSerialize(asInput(value));
        const lean = decodeReadShardsRequest(bytes);
        expect(plainRequest(lean)).toEqual(plainRequest(unary.requestDeserialize(bytes) as AnyRequest));
        lean.shardIds.forEach((id, index) => expect(typeof id).toBe(value.shardIds[index]! < 2n ** 53n ? 'number' : 'bigint'));
      }),
      { numRuns: 500 },
    );
  });

  it('node codec: a ReadShardsStream frame (any seq, a request or none) reads the same in protobufjs and in the lean decoder', () => {
    fc.assert(
      fc.property(fc.nat({ max: 2 ** 32 - 1 }), fc.option(request, { nil: null }), (seq, value) => {
        const bytes = stream.requestSerialize(value === null ? { seq } : { seq, request: asInput(value) });
        expect(plainFrame(decodeReadShardsFrame(bytes))).toEqual(plainFrame(stream.requestDeserialize(bytes) as never));
      }),
      { numRuns: 500 },
    );
  });

  it('node codec: unpacked repeated ids (another writer) read as packed ones do', () => {
    // Field 1 as three separate varints: 5, 300, 2^40.
    const bytes = Buffer.from([0x08, 0x05, 0x08, 0xac, 0x02, 0x08, 0x80, 0x80, 0x80, 0x80, 0x80, 0x20]);
    expect(decodeReadShardsRequest(bytes)).toEqual({ shardIds: [5, 300, 2 ** 40], generations: [], protocol: null });
    expect(plainRequest(unary.requestDeserialize(bytes) as AnyRequest)).toEqual({
      shardIds: ['5', '300', String(2 ** 40)],
      generations: [],
      protocol: null,
    });
  });

  it('node codec: a frame cut short anywhere is refused by both decoders or read the same by both', () => {
    const bytes = stream.requestSerialize({
      seq: 7,
      request: { shardIds: ['1', '99999', String(2n ** 60n)], generations: ['0', '2', '3'], protocol: { current: 5, oldest: 3 } },
    });
    for (let cut = 0; cut < bytes.length; cut++) {
      const lean = outcomeOf(() => plainFrame(decodeReadShardsFrame(bytes.subarray(0, cut))));
      const byReference = outcomeOf(() => plainFrame(stream.requestDeserialize(bytes.subarray(0, cut)) as never));
      expect('error' in lean, `cut at ${cut}`).toBe('error' in byReference);
      if ('value' in lean) expect(lean).toEqual(byReference);
    }
  });

  it('node codec: random wire tokens as a request or a frame: both refuse, or both read the same value', () => {
    const tokens = wireTokens(5, [0x08, 0x0a, 0x10, 0x12, 0xa2, 0x06]);
    const valid = request.map((value) => stream.requestSerialize({ seq: 3, request: asInput(value) }));
    fc.assert(
      fc.property(fc.oneof(tokens, framedSoup(tokens), mutated(valid)), (bytes) => {
        const lean = outcomeOf(() => plainFrame(decodeReadShardsFrame(bytes)));
        const byReference = outcomeOf(() => plainFrame(stream.requestDeserialize(bytes) as never));
        expect('error' in lean).toBe('error' in byReference);
        if ('value' in lean) expect(lean).toEqual(byReference);
        const leanRequest = outcomeOf(() => plainRequest(decodeReadShardsRequest(bytes)));
        const referenceRequest = outcomeOf(() => plainRequest(unary.requestDeserialize(bytes) as AnyRequest));
        expect('error' in leanRequest).toBe('error' in referenceRequest);
        if ('value' in leanRequest) expect(leanRequest).toEqual(referenceRequest);
      }),
      { numRuns: 3000 },
    );
  });

  it('node codec: the wired definition reads ReadShards and ReadShardsStream with the lean decoders', () => {
    const wired = withLeanReadShardsResponse(shardNodeServiceDefinition);
    expect(wired.ReadShards!.requestDeserialize).toBe(decodeReadShardsRequest);
    expect(wired.ReadShardsStream!.requestDeserialize).toBe(decodeReadShardsFrame);
  });
});
