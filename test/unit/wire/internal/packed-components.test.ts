// The packed component entry: many (shard id, component) rows in one payload,
// each component written by the region-component record's one codec. What
// goes in comes out, over the whole range of every field; a payload cut
// anywhere, a count that disagrees with the records, a bad shard id or an
// unknown format is refused with a message saying which, never misread.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  decodePackedComponents,
  encodeComponent,
  encodePackedComponents,
  packedComponentsMax,
  type RegionComponent,
  type ShardComponent,
} from '../../../../src/wire/internal/index.ts';
import { INT64_MAX, INT64_MIN, UINT64_MAX } from '../../../../src/wire/index.ts';

const component = fc.record({
  origin: fc.constantFrom('eu', 'us-east-1', 'a', 'x'.repeat(32)),
  version: fc.record({ term: fc.bigInt({ min: 1n, max: UINT64_MAX }), round: fc.bigInt({ min: 0n, max: UINT64_MAX }) }),
  total: fc.bigInt({ min: INT64_MIN, max: INT64_MAX }),
  asOfUnixMs: fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
  generation: fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
}) as fc.Arbitrary<RegionComponent>;

const row = fc.record({ shardId: fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }), component });

function rowOf(shardId: number, total: bigint): ShardComponent {
  return { shardId, component: { origin: 'eu', version: { term: 3n, round: 7n }, total, asOfUnixMs: 1_000, generation: 1 } };
}

describe('the packed component entry', () => {
  it('round trips any rows, in order, duplicates of a shard included', () => {
    fc.assert(
      fc.property(fc.array(row, { minLength: 1, maxLength: 40 }), (rows) => {
        expect(decodePackedComponents(encodePackedComponents(rows))).toEqual(rows);
      }),
    );
  });

  it('carries each component as its record: the bytes after the shard ids are the records one after another', () => {
    const rows = [rowOf(5, -3n), rowOf(2 ** 40, 9n)];
    const data = encodePackedComponents(rows);
    const records = Buffer.concat(rows.map((each) => encodeComponent(each.component)));
    expect(data.subarray(data.length - records.length)).toEqual(records);
    expect(data.length).toBe(1 + 4 + 8 * rows.length + records.length);
  });

  it('refuses a payload cut short at every length, naming it', () => {
    const data = encodePackedComponents([rowOf(1, 1n), rowOf(2, 2n), rowOf(3, 3n)]);
    for (let length = 0; length < data.length; length++)
      expect(() => decodePackedComponents(data.subarray(0, length)), `cut at ${length}`).toThrow(/cut short|holds \d+ records/);
  });

  it('refuses a count that disagrees with the records, a bad shard id, an unknown format, and trailing bytes', () => {
    const data = encodePackedComponents([rowOf(1, 1n), rowOf(2, 2n)]);
    const fewer = Buffer.from(data);
    fewer.writeUInt32BE(1, 1);
    expect(() => decodePackedComponents(fewer)).toThrow(/./);
    const zero = Buffer.from(data);
    zero.writeUInt32BE(0, 1);
    expect(() => decodePackedComponents(zero)).toThrow(/says 0 components/);
    const huge = Buffer.from(data);
    huge.writeUInt32BE(packedComponentsMax + 1, 1);
    expect(() => decodePackedComponents(huge)).toThrow(/components \(1\.\./);
    const badShard = Buffer.from(data);
    badShard.writeDoubleLE(0.5, 5);
    expect(() => decodePackedComponents(badShard)).toThrow(/shard id 0.5/);
    const format = Buffer.from(data);
    format.writeUInt8(2, 0);
    expect(() => decodePackedComponents(format)).toThrow(/unknown format 2/);
    expect(() => decodePackedComponents(Buffer.concat([data, Buffer.from([1])]))).toThrow(/./);
  });

  it('refuses to write what no reader would accept', () => {
    expect(() => encodePackedComponents([])).toThrow(/1\.\./);
    expect(() => encodePackedComponents([rowOf(0, 1n)])).toThrow(/shard id 0/);
    expect(() => encodePackedComponents([{ shardId: 1, component: { ...rowOf(1, 1n).component, origin: 'EU!' } }])).toThrow(/origin/);
  });
});
