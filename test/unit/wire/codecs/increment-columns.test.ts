// The router's column decoders (decodeIncrementBatchColumns,
// decodeIncrementStreamColumns) against the object decoders they stand in
// for, which test/unit/counter-codec.test.ts and increment-stream-codec.test.ts
// hold equal to protobufjs: every input one accepts, the other accepts with
// the same items (name, amount, key, return_total) and sequence number; every
// input one refuses, the other refuses with the same error text.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  decodeIncrementBatchColumns,
  decodeIncrementBatchRequest,
  decodeIncrementStreamColumns,
  decodeIncrementStreamRequest,
  encodeIncrementBatchRequest,
  encodeIncrementStreamRequest,
  type IncrementColumns,
  type LeanIncrementRequest,
  INT64_MAX,
  INT64_MIN,
} from '../../../../src/wire/index.ts';
import { framedSoup, mutated, outcomeOf, wireTokens } from '../../../helpers/wire-soup.ts';

interface Row {
  counter: string;
  amount: string;
  key: string;
  returnTotal: boolean;
}

function rowOf(item: LeanIncrementRequest): Row {
  return {
    counter: item.counter,
    amount: String(item.amount),
    key: item.idempotencyKey.toString('hex'),
    returnTotal: item.returnTotal === true,
  };
}

function rowsOfColumns(columns: IncrementColumns): { rows: Row[]; sequence: string } {
  const { counters, amounts, keys, returnTotals } = columns;
  expect(amounts).toHaveLength(counters.length);
  expect(keys).toHaveLength(counters.length);
  if (returnTotals !== undefined) {
    expect(returnTotals).toHaveLength(counters.length);
    // Present only when some item asked.
    expect(returnTotals).toContain(true);
  }
  const rows = counters.map((counter, index) => ({
    counter,
    amount: String(amounts[index]),
    key: keys[index]!.toString('hex'),
    returnTotal: returnTotals?.[index] === true,
  }));
  return { rows, sequence: String(columns.sequence) };
}

const item = fc.record({
  counter: fc.oneof(fc.constantFrom('a', 'post:1:like', 'b'), fc.string({ maxLength: 20, unit: 'grapheme' })),
  amount: fc.bigInt({ min: INT64_MIN, max: INT64_MAX }),
  idempotencyKey: fc.oneof(
    fc.constant(null),
    fc.uint8Array({ maxLength: 20 }).map((bytes) => Buffer.from(bytes)),
  ),
  returnTotal: fc.boolean(),
});
const sequence = fc.bigInt({ min: 0n, max: 2n ** 64n - 1n });
const wireSequence = (value: bigint): number | bigint => (value <= 2n ** 53n - 1n ? Number(value) : value);

const sameBatchOutcome = (bytes: Buffer): void => {
  const columns = outcomeOf(() => rowsOfColumns(decodeIncrementBatchColumns(bytes)));
  const objects = outcomeOf(() => ({ rows: decodeIncrementBatchRequest(bytes).items.map(rowOf), sequence: '0' }));
  expect(columns).toEqual(objects);
};
const sameStreamOutcome = (bytes: Buffer): void => {
  const columns = outcomeOf(() => rowsOfColumns(decodeIncrementStreamColumns(bytes)));
  const objects = outcomeOf(() => {
    const request = decodeIncrementStreamRequest(bytes);
    return { rows: request.items.map(rowOf), sequence: String(request.sequence) };
  });
  expect(columns).toEqual(objects);
};

describe('increment columns', () => {
  it('columns: a batch or stream request (0..30 items, runs of one name, keys absent or empty) reads as the object decoders read it', () => {
    fc.assert(
      fc.property(fc.array(item, { maxLength: 30 }), sequence, (items, seq) => {
        const wireItems = items;
        sameBatchOutcome(encodeIncrementBatchRequest({ items: wireItems }));
        sameStreamOutcome(encodeIncrementStreamRequest({ items: wireItems, sequence: wireSequence(seq) }));
        // A stream request's sequence is an unknown field to IncrementBatch: skipped, sequence 0.
        const asBatch = decodeIncrementBatchColumns(encodeIncrementStreamRequest({ items: wireItems, sequence: wireSequence(seq) }));
        expect(asBatch.sequence).toBe(0);
        expect(asBatch.counters).toEqual(items.map((one) => one.counter));
      }),
      { numRuns: 200 },
    );
  });

  it('columns: a run of one name is one string, and every absent or empty key is the same shared empty Buffer', () => {
    const columns = decodeIncrementBatchColumns(
      encodeIncrementBatchRequest({
        items: [
          { counter: 'same', amount: 1, idempotencyKey: null },
          { counter: 'same', amount: 2, idempotencyKey: Buffer.alloc(0) },
          { counter: 'other', amount: 3, idempotencyKey: Buffer.from('k') },
        ],
      }),
    );
    expect(columns.counters).toEqual(['same', 'same', 'other']);
    expect(columns.amounts).toEqual([1, 2, 3]);
    expect(columns.keys[0]).toBe(columns.keys[1]);
    expect(columns.keys[0]).toHaveLength(0);
    expect(columns.keys[2]!.toString()).toBe('k');
    expect(columns.returnTotals).toBeUndefined();
  });

  it("columns: malformed or truncated bytes are refused with the object decoders' words, or read to the same items", () => {
    const tokens = wireTokens();
    const validBatch = fc.array(item, { maxLength: 4 }).map((items) => encodeIncrementBatchRequest({ items }));
    const validStream = fc
      .tuple(fc.array(item, { maxLength: 4 }), sequence)
      .map(([items, seq]) => encodeIncrementStreamRequest({ items, sequence: wireSequence(seq) }));
    fc.assert(fc.property(fc.oneof(tokens, framedSoup(tokens), mutated(validBatch)), sameBatchOutcome), { numRuns: 1500 });
    fc.assert(fc.property(fc.oneof(tokens, framedSoup(tokens), mutated(validStream)), sameStreamOutcome), { numRuns: 1500 });
    // An item longer than the message: refused, not read short.
    const cut = Buffer.from([0x0a, 0x09, 0x0a, 0x01, 0x78]);
    expect(outcomeOf(() => decodeIncrementBatchColumns(cut))).toEqual({ error: 'index out of range' });
    expect(outcomeOf(() => decodeIncrementStreamColumns(cut))).toEqual({ error: 'index out of range' });
  });
});
