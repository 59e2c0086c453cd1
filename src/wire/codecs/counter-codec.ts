// Lean codecs for the public hot path: Increment, IncrementBatch, ReadMany and their streams
// requests and responses, wire bytes straight to and from plain objects, with an int64
// as a number when exact as one (a bigint past 2^53) instead of a decimal
// string, and one shared empty Buffer for every absent key. Reading follows
// protobufjs 7.6 (what proto-loader decodes with) step for step: the same
// bytes are accepted with the same values, and the same bytes are refused with
// the same error text (test/unit/wire/codecs/counter-codec.test.ts holds the two equal).
// Reading and writing live in counter-codec-read.ts and counter-codec-write.ts
// (the reader and writer, with what a server reads and writes per call) and
// their -read-many.ts (the rest of ReadMany and ReadStream).
// Must not import grpc-js or any server code: @tally/client ships this file.
import assert from 'node:assert';
import {
  decodeIncrementBatchColumns,
  decodeIncrementBatchRequest,
  decodeIncrementBatchResponse,
  decodeIncrementRequest,
  decodeIncrementResponse,
  decodeIncrementStreamColumns,
  decodeIncrementStreamRequest,
  decodeIncrementStreamResponse,
} from './counter-codec-read.ts';
import {
  decodeReadManyRequest,
  decodeReadManyResponse,
  decodeReadStreamRequest,
  decodeReadStreamResponse,
} from './counter-codec-read-many.ts';
import {
  encodeIncrementBatchRequest,
  encodeIncrementBatchResponse,
  encodeIncrementRequest,
  encodeIncrementResponse,
  encodeIncrementStreamRequest,
  encodeIncrementStreamResponse,
  encodeReadManyResponse,
  encodeReadStreamResponse,
} from './counter-codec-write.ts';
import { encodeReadManyRequest, encodeReadStreamRequest } from './counter-codec-write-read-many.ts';

export {
  decodeIncrementBatchColumns,
  decodeIncrementBatchRequest,
  decodeIncrementBatchResponse,
  decodeIncrementRequest,
  decodeIncrementResponse,
  decodeIncrementStreamColumns,
  decodeIncrementStreamRequest,
  decodeIncrementStreamResponse,
  decodeReadManyRequest,
  decodeReadManyResponse,
  encodeIncrementBatchRequest,
  encodeIncrementBatchResponse,
  encodeIncrementRequest,
  encodeIncrementResponse,
  encodeIncrementStreamRequest,
  encodeIncrementStreamResponse,
  encodeReadManyRequest,
  encodeReadManyResponse,
  decodeReadStreamRequest,
  decodeReadStreamResponse,
  encodeReadStreamRequest,
  encodeReadStreamResponse,
};

export type * from './counter-codec-types.ts';

/** The four functions of each method, in grpc-js's names for them. */
export const leanCounterCodecs = {
  Increment: {
    requestSerialize: encodeIncrementRequest,
    requestDeserialize: decodeIncrementRequest,
    responseSerialize: encodeIncrementResponse,
    responseDeserialize: decodeIncrementResponse,
  },
  IncrementBatch: {
    requestSerialize: encodeIncrementBatchRequest,
    requestDeserialize: decodeIncrementBatchRequest,
    responseSerialize: encodeIncrementBatchResponse,
    responseDeserialize: decodeIncrementBatchResponse,
  },
  // A batch's items and a sequence number each way.
  IncrementStream: {
    requestSerialize: encodeIncrementStreamRequest,
    requestDeserialize: decodeIncrementStreamRequest,
    responseSerialize: encodeIncrementStreamResponse,
    responseDeserialize: decodeIncrementStreamResponse,
  },
  // A feed page: 50 names in, 50 totals out, three int64s each.
  ReadMany: {
    requestSerialize: encodeReadManyRequest,
    requestDeserialize: decodeReadManyRequest,
    responseSerialize: encodeReadManyResponse,
    responseDeserialize: decodeReadManyResponse,
  },
  // A ReadMany's names and totals each way, with a sequence number.
  ReadStream: {
    requestSerialize: encodeReadStreamRequest,
    requestDeserialize: decodeReadStreamRequest,
    responseSerialize: encodeReadStreamResponse,
    responseDeserialize: decodeReadStreamResponse,
  },
} as const;

/**
 * A lean definition (withLeanCodecs) whose IncrementBatch and IncrementStream
 * requests decode into IncrementColumns: the router's, which routes columns.
 */
export function withColumnDecoders<Definition extends object>(service: Definition): Definition {
  const patched = { ...service } as Record<string, unknown>;
  for (const [name, requestDeserialize] of [
    ['IncrementBatch', decodeIncrementBatchColumns],
    ['IncrementStream', decodeIncrementStreamColumns],
  ] as const) {
    const method = patched[name];
    assert(typeof method === 'object' && method !== null, `counter codec: the service has no method ${name}`);
    patched[name] = { ...method, requestDeserialize };
  }
  return patched as Definition;
}

/**
 * A copy of counter.v1.CounterService's definition (proto-loader's or
 * grpc-js's) whose Increment, IncrementBatch, IncrementStream, ReadMany and ReadStream carry the lean
 * codecs; every other method keeps proto-loader's. For a server's addService
 * and for a client constructor alike.
 */
export function withLeanCodecs<Definition extends object>(service: Definition): Definition {
  const patched = { ...service } as Record<string, unknown>;
  for (const [name, codecs] of Object.entries(leanCounterCodecs)) {
    const method = patched[name];
    assert(typeof method === 'object' && method !== null, `counter codec: the service has no method ${name}`);
    patched[name] = { ...method, ...codecs };
  }
  return patched as Definition;
}
