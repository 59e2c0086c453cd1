// Decoding of the lean Increment and ReadMany codecs (counter-codec.ts): protobufjs 7.6's
// Reader and generated decoders, ported step for step so that acceptance,
// values and error texts stay the same, but writing plain objects with int64s
// as numbers (bigints past 2^53) and one shared empty key.
import type {
  IncrementColumns,
  LeanIncrementBatchRequest,
  LeanIncrementBatchResponse,
  LeanIncrementRequest,
  LeanIncrementResponse,
  LeanIncrementStreamError,
  LeanIncrementStreamRequest,
  LeanIncrementStreamResponse,
  LeanReadManyRequest,
  LeanReadManyResponse,
  LeanReadStreamRequest,
  LeanReadStreamResponse,
  LeanReadResponse,
} from './counter-codec.ts';
import type { RegionPartValue } from './region-part-codec.ts';

import {
  emptyKey,
  readUint32,
  readUint64,
  readInt64,
  readString,
  readBytes,
  skipType,
  readEmbedded,
  readRepeatedFirstField,
  decodeWith,
  position,
} from './proto-reader.ts';

function readIncrementRequest(end: number, depth: number): LeanIncrementRequest {
  let counter = '';
  let amount: number | bigint = 0;
  let idempotencyKey = emptyKey;
  let returnTotal = false;
  while (position() < end) {
    const tag = readUint32();
    switch (tag >>> 3) {
      case 1:
        counter = readString();
        break;
      case 2:
        amount = readInt64();
        break;
      case 3:
        idempotencyKey = readBytes();
        break;
      case 4:
        returnTotal = readUint32() !== 0;
        break;
      default:
        skipType(tag & 7, depth);
    }
  }
  return { counter, amount, idempotencyKey, returnTotal };
}

function readIncrementBatchRequest(end: number, depth: number): LeanIncrementBatchRequest {
  return { items: readRepeatedFirstField(end, depth, readIncrementRequest) };
}

function readIncrementResponse(end: number, depth: number): LeanIncrementResponse {
  let applied = false;
  let shard = 0;
  let total: string | undefined;
  while (position() < end) {
    const tag = readUint32();
    switch (tag >>> 3) {
      case 1:
        applied = readUint32() !== 0;
        break;
      case 2:
        shard = readUint32();
        break;
      case 3:
        total = String(readInt64());
        break;
      default:
        skipType(tag & 7, depth);
    }
  }
  return total === undefined ? { applied, shard } : { applied, shard, total };
}

function readIncrementBatchResponse(end: number, depth: number): LeanIncrementBatchResponse {
  return { results: readRepeatedFirstField(end, depth, readIncrementResponse) };
}

// IncrementStream: a batch's fields (1) with a sequence number (2) and, in a response, an error (3).

function readIncrementStreamRequest(end: number, depth: number): LeanIncrementStreamRequest {
  const items: LeanIncrementRequest[] = [];
  let sequence: number | bigint = 0;
  while (position() < end) {
    const tag = readUint32();
    switch (tag >>> 3) {
      case 1:
        items.push(readEmbedded(readUint32(), depth + 1, readIncrementRequest));
        break;
      case 2:
        sequence = readUint64();
        break;
      default:
        skipType(tag & 7, depth);
    }
  }
  return { items, sequence };
}

// The router's decoding of a batch: straight into columns (counter.ts's
// IncrementColumns), one entry per item in each, no object per item. The
// same reads as readIncrementRequest, so the same bytes are accepted or
// refused with the same words.

/** The columns being filled (a module variable: readEmbedded takes no argument for it). */
let columnsTarget: IncrementColumns | undefined;

function readIncrementRequestInto(end: number, depth: number): void {
  let counter = '';
  let amount: number | bigint = 0;
  let idempotencyKey = emptyKey;
  let returnTotal = false;
  while (position() < end) {
    const tag = readUint32();
    switch (tag >>> 3) {
      case 1:
        counter = readString();
        break;
      case 2:
        amount = readInt64();
        break;
      case 3:
        idempotencyKey = readBytes();
        break;
      case 4:
        returnTotal = readUint32() !== 0;
        break;
      default:
        skipType(tag & 7, depth);
    }
  }
  const columns = columnsTarget!;
  const index = columns.counters.length;
  columns.counters.push(counter);
  columns.amounts.push(amount);
  columns.keys.push(idempotencyKey);
  if (columns.returnTotals !== undefined) columns.returnTotals.push(returnTotal);
  else if (returnTotal) (columns.returnTotals = new Array<boolean>(index).fill(false)).push(true);
}

/** The fields of IncrementBatchRequest (1, the items) and, withSequence, IncrementStreamRequest's 2; others skipped. */
function readColumnFields(end: number, depth: number, withSequence: boolean): IncrementColumns {
  const columns: IncrementColumns = { counters: [], amounts: [], keys: [], returnTotals: undefined, sequence: 0 };
  columnsTarget = columns;
  try {
    while (position() < end) {
      const tag = readUint32();
      const field = tag >>> 3;
      if (field === 1) readEmbedded(readUint32(), depth + 1, readIncrementRequestInto);
      else if (field === 2 && withSequence) columns.sequence = readUint64();
      else skipType(tag & 7, depth);
    }
  } finally {
    columnsTarget = undefined;
  }
  return columns;
}

function readIncrementBatchColumns(end: number, depth: number): IncrementColumns {
  return readColumnFields(end, depth, false);
}

function readIncrementStreamColumns(end: number, depth: number): IncrementColumns {
  return readColumnFields(end, depth, true);
}

function readIncrementStreamError(end: number, depth: number): LeanIncrementStreamError {
  let code = 0;
  let message = '';
  let reason = '';
  let statusDetails = emptyKey;
  while (position() < end) {
    const tag = readUint32();
    switch (tag >>> 3) {
      case 1:
        code = readUint32() | 0;
        break;
      case 2:
        message = readString();
        break;
      case 3:
        reason = readString();
        break;
      case 4:
        // A copy: the error outlives the message's bytes.
        statusDetails = Buffer.from(readBytes());
        break;
      default:
        skipType(tag & 7, depth);
    }
  }
  return { code, message, reason, statusDetails };
}

function readIncrementStreamResponse(end: number, depth: number): LeanIncrementStreamResponse {
  const results: LeanIncrementResponse[] = [];
  let sequence: number | bigint = 0;
  let error: LeanIncrementStreamError | null = null;
  while (position() < end) {
    const tag = readUint32();
    switch (tag >>> 3) {
      case 1:
        results.push(readEmbedded(readUint32(), depth + 1, readIncrementResponse));
        break;
      case 2:
        sequence = readUint64();
        break;
      case 3:
        error = readEmbedded(readUint32(), depth + 1, readIncrementStreamError);
        break;
      default:
        skipType(tag & 7, depth);
    }
  }
  return { results, sequence, error };
}

/** counter.v1.Consistency's names by number (proto-loader `enums: String`); a number it does not name stays a number. */
const consistencyNames: readonly string[] = ['EXACT', 'CACHED'];

/** counter.v1.Scope's names by number. */
const scopeNames: readonly string[] = ['SCOPE_REGION', 'SCOPE_GLOBAL'];

/** The fields of ReadManyRequest (1, 2, 3) and, withSequence, ReadStreamRequest's 15; others skipped. */
function readReadRequestFields(end: number, depth: number, withSequence: boolean): LeanReadStreamRequest {
  const counters: string[] = [];
  let consistency: string | number = consistencyNames[0]!;
  let scope: string | number = scopeNames[0]!;
  let sequence: number | bigint = 0;
  while (position() < end) {
    const tag = readUint32();
    switch (tag >>> 3) {
      case 1:
        counters.push(readString());
        break;
      case 2: {
        // protobufjs reads an enum as int32.
        const value = readUint32() | 0;
        consistency = consistencyNames[value] ?? value;
        break;
      }
      case 3: {
        const value = readUint32() | 0;
        scope = scopeNames[value] ?? value;
        break;
      }
      case 15:
        if (withSequence) sequence = readUint64();
        else skipType(tag & 7, depth);
        break;
      default:
        skipType(tag & 7, depth);
    }
  }
  return { counters, consistency, scope, sequence };
}

function readReadManyRequest(end: number, depth: number): LeanReadManyRequest {
  const { counters, consistency, scope } = readReadRequestFields(end, depth, false);
  return { counters, consistency, scope };
}

function readRegionPart(end: number, depth: number): RegionPartValue {
  let region = '';
  let total: number | bigint = 0;
  let asOfUnixMs: number | bigint = 0;
  let stalenessMs: number | bigint = 0;
  let home = false;
  while (position() < end) {
    const tag = readUint32();
    switch (tag >>> 3) {
      case 1:
        region = readString();
        break;
      case 2:
        total = readInt64();
        break;
      case 3:
        asOfUnixMs = readInt64();
        break;
      case 4:
        stalenessMs = readInt64();
        break;
      case 5:
        home = readUint32() !== 0;
        break;
      default:
        skipType(tag & 7, depth);
    }
  }
  return { region, total: BigInt(total), asOfUnixMs, stalenessMs, home };
}

function readReadResponse(end: number, depth: number): LeanReadResponse {
  let counter = '';
  let total: number | bigint = 0;
  let exact = false;
  let asOfUnixMs: number | bigint = 0;
  let stalenessMs: number | bigint = 0;
  let shards = 0;
  let regions: RegionPartValue[] | undefined;
  while (position() < end) {
    const tag = readUint32();
    switch (tag >>> 3) {
      case 1:
        counter = readString();
        break;
      case 2:
        total = readInt64();
        break;
      case 7:
        (regions ??= []).push(readEmbedded(readUint32(), depth + 1, readRegionPart));
        break;
      case 3:
        exact = readUint32() !== 0;
        break;
      case 4:
        asOfUnixMs = readInt64();
        break;
      case 5:
        stalenessMs = readInt64();
        break;
      case 6:
        shards = readUint32();
        break;
      default:
        skipType(tag & 7, depth);
    }
  }
  return regions === undefined
    ? { counter, total, exact, asOfUnixMs, stalenessMs, shards }
    : { counter, total, exact, asOfUnixMs, stalenessMs, shards, regions };
}

function readReadManyResponse(end: number, depth: number): LeanReadManyResponse {
  return { values: readRepeatedFirstField(end, depth, readReadResponse) };
}

// ReadStream: a ReadMany's fields (1, 2, 3) with a sequence number (15) and, in a response, an error (14).

function readReadStreamRequest(end: number, depth: number): LeanReadStreamRequest {
  return readReadRequestFields(end, depth, true);
}

function readReadStreamResponse(end: number, depth: number): LeanReadStreamResponse {
  const values: LeanReadResponse[] = [];
  let sequence: number | bigint = 0;
  let error: LeanIncrementStreamError | null = null;
  while (position() < end) {
    const tag = readUint32();
    switch (tag >>> 3) {
      case 1:
        values.push(readEmbedded(readUint32(), depth + 1, readReadResponse));
        break;
      case 15:
        sequence = readUint64();
        break;
      case 14:
        error = readEmbedded(readUint32(), depth + 1, readIncrementStreamError);
        break;
      default:
        skipType(tag & 7, depth);
    }
  }
  return { values, sequence, error };
}

// ReadShards (shard.proto), what a router asks a node for a page: shard ids
// and generations as numbers (a bigint past 2^53), not a decimal string
// made by Long arithmetic per id. Packed or not, as protobufjs accepts.

export function decodeIncrementRequest(bytes: Uint8Array): LeanIncrementRequest {
  return decodeWith(bytes, readIncrementRequest);
}

export function decodeIncrementBatchRequest(bytes: Uint8Array): LeanIncrementBatchRequest {
  return decodeWith(bytes, readIncrementBatchRequest);
}

/** The router's IncrementBatchRequest: items as columns; accepts and refuses exactly what decodeIncrementBatchRequest does. */
export function decodeIncrementBatchColumns(bytes: Uint8Array): IncrementColumns {
  return decodeWith(bytes, readIncrementBatchColumns);
}

/** The router's IncrementStreamRequest: a batch's items as columns and its sequence number. */
export function decodeIncrementStreamColumns(bytes: Uint8Array): IncrementColumns {
  return decodeWith(bytes, readIncrementStreamColumns);
}

export function decodeIncrementResponse(bytes: Uint8Array): LeanIncrementResponse {
  return decodeWith(bytes, readIncrementResponse);
}

export function decodeIncrementBatchResponse(bytes: Uint8Array): LeanIncrementBatchResponse {
  return decodeWith(bytes, readIncrementBatchResponse);
}

export function decodeIncrementStreamRequest(bytes: Uint8Array): LeanIncrementStreamRequest {
  return decodeWith(bytes, readIncrementStreamRequest);
}

export function decodeIncrementStreamResponse(bytes: Uint8Array): LeanIncrementStreamResponse {
  return decodeWith(bytes, readIncrementStreamResponse);
}

export function decodeReadManyRequest(bytes: Uint8Array): LeanReadManyRequest {
  return decodeWith(bytes, readReadManyRequest);
}

export function decodeReadManyResponse(bytes: Uint8Array): LeanReadManyResponse {
  return decodeWith(bytes, readReadManyResponse);
}

export function decodeReadStreamRequest(bytes: Uint8Array): LeanReadStreamRequest {
  return decodeWith(bytes, readReadStreamRequest);
}

export function decodeReadStreamResponse(bytes: Uint8Array): LeanReadStreamResponse {
  return decodeWith(bytes, readReadStreamResponse);
}
