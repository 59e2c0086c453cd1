// A link batch's components as columns: counter names, then each component
// written by the region-component record's one codec. What goes in comes
// out, names in any script and every field over its whole range, sketches
// included; a payload cut anywhere, a count that disagrees with the names or
// the records, an empty name or an unknown format is refused with a message
// saying which, never misread.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  batchComponentsMax,
  decodeBatchComponents,
  encodeBatchComponents,
  type CounterComponent,
  type RegionComponent,
} from '../../../../src/wire/internal/index.ts';
import { INT64_MAX, INT64_MIN, UINT64_MAX } from '../../../../src/wire/index.ts';

const component = fc.record(
  {
    origin: fc.constantFrom('eu', 'us-east-1', 'x'.repeat(32)),
    version: fc.record({ term: fc.bigInt({ min: 1n, max: UINT64_MAX }), round: fc.bigInt({ min: 0n, max: UINT64_MAX }) }),
    total: fc.bigInt({ min: INT64_MIN, max: INT64_MAX }),
    asOfUnixMs: fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
    generation: fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
    sketch: fc.uint8Array({ minLength: 1, maxLength: 64 }).map((bytes) => Buffer.from(bytes)),
  },
  { requiredKeys: ['origin', 'version', 'total', 'asOfUnixMs', 'generation'] },
) as fc.Arbitrary<RegionComponent>;

const row = fc.record({ counter: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 255 }), component });

function rowOf(counter: string, total: bigint): CounterComponent {
  return { counter, component: { origin: 'eu', version: { term: 3n, round: 7n }, total, asOfUnixMs: 1_000, generation: 1 } };
}

describe("a link batch's packed components", () => {
  it('round trips any rows in order: names in any script, every field over its range, sketches', () => {
    fc.assert(
      fc.property(fc.array(row, { minLength: 1, maxLength: 30 }), (rows) => {
        expect(decodeBatchComponents(encodeBatchComponents(rows))).toEqual(rows);
      }),
    );
  });

  it('holds a full batch and refuses to write an empty or oversized one', () => {
    const rows = Array.from({ length: batchComponentsMax }, (_, index) => rowOf(`c:${index}`, BigInt(index) - 5n));
    expect(decodeBatchComponents(encodeBatchComponents(rows))).toEqual(rows);
    expect(() => encodeBatchComponents([])).toThrow(/1\.\.4096 components, not 0/);
    expect(() => encodeBatchComponents([...rows, rowOf('one-more', 1n)])).toThrow(/not 4097/);
    expect(() => encodeBatchComponents([rowOf('', 1n)])).toThrow(/name of 0 bytes/);
  });

  it('refuses a payload cut anywhere, naming what is short', () => {
    const data = encodeBatchComponents([rowOf('alpha', 1n), rowOf('βeta', -2n)]);
    for (let length = 0; length < data.length; length++)
      expect(() => decodeBatchComponents(data.subarray(0, length)), `cut at ${length}`).toThrow(/cut short|holds \d+ records|says/);
  });

  it('refuses an unknown format, a count out of range or at odds with the records, an empty name', () => {
    const data = encodeBatchComponents([rowOf('alpha', 1n), rowOf('beta', 2n)]);
    const withFormat = Buffer.from(data);
    withFormat.writeUInt8(9, 0);
    expect(() => decodeBatchComponents(withFormat)).toThrow(/unknown format 9/);
    const zero = Buffer.from(data);
    zero.writeUInt32BE(0, 1);
    expect(() => decodeBatchComponents(zero)).toThrow(/says 0 components/);
    const huge = Buffer.from(data);
    huge.writeUInt32BE(batchComponentsMax + 1, 1);
    expect(() => decodeBatchComponents(huge)).toThrow(/says 4097 components/);
    // One name fewer than said: the second record's bytes are read as names and do not add up.
    const fewer = Buffer.from(data);
    fewer.writeUInt32BE(1, 1);
    expect(() => decodeBatchComponents(fewer)).toThrow(/says 1 components but holds|record/);
    const emptyName = Buffer.from(data);
    emptyName.writeUInt16BE(0, 5);
    expect(() => decodeBatchComponents(emptyName)).toThrow(/name 0 is empty/);
  });

  it('refuses a record no writer could make (a term of 0)', () => {
    const data = encodeBatchComponents([rowOf('alpha', 1n)]);
    // The record follows the header (5), the name's length (2) and the name (5): origin length, origin, then the term.
    const recordAt = 5 + 2 + 5;
    data.writeBigUInt64BE(0n, recordAt + 1 + 2);
    expect(() => decodeBatchComponents(data)).toThrow(/version out of range/);
  });
});
