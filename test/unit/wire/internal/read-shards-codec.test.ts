// The node's lean ReadShards response encoder (src/wire/internal/read-shards-codec.ts)
// against the reference: whatever it writes, proto-loader's decoder (what the
// router reads with) reads to the same value as proto-loader's own encoding of
// the same answer — every total across the sint64 range, lsn and epoch across
// uint64, unicode roles and node ids, defaults left out.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { shardNodeServiceDefinition } from '../../../../src/common/index.ts';
import { encodeReadShardsResponse, withLeanReadShardsResponse } from '../../../../src/wire/internal/index.ts';
import { INT64_MAX, INT64_MIN } from '../../../../src/wire/index.ts';

const reference = shardNodeServiceDefinition.ReadShards!;
const uint64Max = 2n ** 64n - 1n;

const total = fc.oneof(
  fc.bigInt({ min: INT64_MIN, max: INT64_MAX }),
  fc.bigInt({ min: -(2n ** 54n), max: 2n ** 54n }),
  fc.integer({ min: -1000, max: 1000 }).map(BigInt),
  fc.constantFrom(
    INT64_MIN,
    INT64_MAX,
    0n,
    -1n,
    2n ** 52n - 1n,
    2n ** 52n,
    -(2n ** 52n) + 1n,
    -(2n ** 52n),
    2n ** 53n,
    2n ** 32n,
    -(2n ** 32n),
  ),
);
const uint64 = fc.oneof(
  fc.bigInt({ min: 0n, max: uint64Max }),
  fc.bigInt({ min: 0n, max: 2n ** 40n }),
  fc.constantFrom(0n, 1n, 127n, 128n, 2n ** 32n - 1n, 2n ** 32n, 2n ** 53n - 1n, 2n ** 53n, uint64Max),
);
const answer = fc.record({
  totals: fc.array(total, { maxLength: 60 }),
  lsn: uint64,
  role: fc.oneof(fc.constantFrom('primary', 'follower', 'unassigned', ''), fc.string({ unit: 'grapheme', maxLength: 12 })),
  epoch: uint64,
  nodeId: fc.oneof(fc.uuid(), fc.constant(''), fc.string({ maxLength: 40 })),
  newerGenerationIndexes: fc.array(fc.oneof(fc.nat({ max: 200 }), fc.nat({ max: 0xffffffff })), { maxLength: 8 }),
});

describe('ReadShards codec: the node answers in bytes proto-loader reads as its own', () => {
  it('read-shards codec: a ReadShardsResponse the lean encoder writes decodes as proto-loader decodes its own encoding', () => {
    fc.assert(
      fc.property(answer, (given) => {
        const lean = reference.responseDeserialize(encodeReadShardsResponse(given));
        const own = reference.responseDeserialize(
          reference.responseSerialize({
            ...given,
            totals: given.totals.map(String),
            lsn: given.lsn.toString(),
            epoch: given.epoch.toString(),
          }),
        );
        expect(lean).toEqual(own);
        expect(lean).toMatchObject({ totals: given.totals.map(String), lsn: given.lsn.toString(), epoch: given.epoch.toString() });
      }),
      { numRuns: 2000 },
    );
  });

  it('read-shards codec: defaults are left out, totals and indexes packed', () => {
    const empty = { totals: [], lsn: 0n, role: '', epoch: 0n, nodeId: '', newerGenerationIndexes: [] };
    expect(encodeReadShardsResponse(empty).length).toBe(0);
    // totals 0, -1, 1 zigzag to 0, 1, 2
    expect([...encodeReadShardsResponse({ ...empty, totals: [0n, -1n, 1n] })]).toEqual([0x0a, 0x03, 0x00, 0x01, 0x02]);
    expect(() => encodeReadShardsResponse({ ...empty, lsn: -1n })).toThrow(/uint64 out of range/);
  });

  it('read-shards codec: only ReadShards (and its stream) of the definition it is given answers through the lean encoder', () => {
    const lean = withLeanReadShardsResponse(shardNodeServiceDefinition);
    expect(lean.ReadShards!.responseSerialize).toBe(encodeReadShardsResponse);
    // Its request is read by the lean decoder too (test/unit/wire/internal/read-shards-request-codec.test.ts).
    expect(lean.ReadShards!.requestDeserialize).not.toBe(reference.requestDeserialize);
    expect(lean.ReadWindows).toBe(shardNodeServiceDefinition.ReadWindows);
    expect(reference.responseSerialize).not.toBe(encodeReadShardsResponse);
  });
});
