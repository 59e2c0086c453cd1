// Lean codecs for the public hot path: Increment and IncrementBatch requests
// and responses, wire bytes straight to and from plain objects, with an int64
// as a number when exact as one (a bigint past 2^53) instead of a decimal
// string, and one shared empty Buffer for every absent key. Reading follows
// protobufjs 7.6 (what proto-loader decodes with) step for step: the same
// bytes are accepted with the same values, and the same bytes are refused with
// the same error text (test/unit/counter-codec.test.ts holds the two equal).
// Reading and writing live in counter-codec-read.ts and counter-codec-write.ts.
// Must not import grpc-js or any server code: @tally/client ships this file.
import assert from 'node:assert';
import {
  decodeIncrementBatchRequest,
  decodeIncrementBatchResponse,
  decodeIncrementRequest,
  decodeIncrementResponse,
} from './counter-codec-read.ts';
import {
  encodeIncrementBatchRequest,
  encodeIncrementBatchResponse,
  encodeIncrementRequest,
  encodeIncrementResponse,
} from './counter-codec-write.ts';

export {
  decodeIncrementBatchRequest,
  decodeIncrementBatchResponse,
  decodeIncrementRequest,
  decodeIncrementResponse,
  encodeIncrementBatchRequest,
  encodeIncrementBatchResponse,
  encodeIncrementRequest,
  encodeIncrementResponse,
};

/** An IncrementRequest as the router reads it. */
export interface LeanIncrementRequest {
  counter: string;
  /** int64: a number when exact as one (|amount| <= 2^53 - 1), else a bigint. Absent: 0. */
  amount: number | bigint;
  /** A view into the request's bytes; absent or empty: the one shared empty Buffer (never written to). */
  idempotencyKey: Buffer;
}

export interface LeanIncrementBatchRequest {
  items: LeanIncrementRequest[];
}

export interface LeanIncrementResponse {
  applied: boolean;
  shard: number;
}

export interface LeanIncrementBatchResponse {
  results: LeanIncrementResponse[];
}

/** A protobufjs Long or anything with its two halves. */
interface Int64Halves {
  low: number;
  high: number;
}

/**
 * What the encoders take: the shapes proto-loader's serializers take for these
 * messages (int64 as a number, bigint, decimal string or Long; bytes as a
 * Buffer, Uint8Array or base64 string), absent fields left out.
 */
export interface IncrementRequestInput {
  counter?: string | null;
  amount?: number | bigint | string | Int64Halves | null;
  idempotencyKey?: Uint8Array | string | null;
}

export interface IncrementBatchRequestInput {
  items?: readonly IncrementRequestInput[] | null;
}

export interface IncrementResponseInput {
  applied?: boolean | null;
  shard?: number | null;
}

export interface IncrementBatchResponseInput {
  results?: readonly IncrementResponseInput[] | null;
}

/** The four functions of each method, in grpc-js's names for them. */
export const leanIncrementCodecs = {
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
} as const;

/**
 * A copy of counter.v1.CounterService's definition (proto-loader's or
 * grpc-js's) whose Increment and IncrementBatch carry the lean codecs; every
 * other method keeps proto-loader's. For a server's addService and for a
 * client constructor alike.
 */
export function withLeanIncrementCodecs<Definition extends object>(service: Definition): Definition {
  const patched = { ...service } as Record<string, unknown>;
  for (const [name, codecs] of Object.entries(leanIncrementCodecs)) {
    const method = patched[name];
    assert(typeof method === 'object' && method !== null, `counter codec: the service has no method ${name}`);
    patched[name] = { ...method, ...codecs };
  }
  return patched as Definition;
}
