// The shapes the lean counter.v1 codecs read into and write from (an int64 as
// a number while exact, a bigint past 2^53; one shared empty key): types
// only, imported by the reader, the writer and the surface alike.
import type { RegionPartValue } from './region-part-codec.ts';

/** An IncrementRequest as the router reads it. */
export interface LeanIncrementRequest {
  counter: string;
  /** int64: a number when exact as one (|amount| <= 2^53 - 1), else a bigint. Absent: 0. */
  amount: number | bigint;
  /** A view into the request's bytes; absent or empty: the one shared empty Buffer (never written to). */
  idempotencyKey: Buffer;
  /** IncrementRequest.return_total: answer with the counter's exact total after the increment. The decoder always sets it. */
  returnTotal?: boolean;
}

/**
 * An IncrementBatchRequest or IncrementStreamRequest as the router reads it:
 * one column per field, an entry per item in each, so the write path routes
 * a batch without an object per increment.
 */
export interface IncrementColumns {
  /** A run of one name is one string (the decoder reuses it). */
  counters: string[];
  /** int64: a number when exact as one (|amount| <= 2^53 - 1), else a bigint. Absent: 0. */
  amounts: (number | bigint)[];
  /** Views into the request's bytes; an absent or empty key is the one shared empty Buffer. */
  keys: Buffer[];
  /** return_total per item; undefined when no item asked it. */
  returnTotals: boolean[] | undefined;
  /** IncrementStreamRequest.sequence; 0 in an IncrementBatchRequest. */
  sequence: Uint64Value;
}

export interface LeanIncrementBatchRequest {
  items: LeanIncrementRequest[];
}

export interface LeanIncrementResponse {
  applied: boolean;
  shard: number;
  /** IncrementResponse.total, a decimal string as proto-loader gives it: present only when the request asked return_total and the read succeeded. */
  total?: string;
}

export interface LeanIncrementBatchResponse {
  results: LeanIncrementResponse[];
}

/** uint64: a number when exact as one, else a bigint. */
export type Uint64Value = number | bigint;

/** An IncrementStreamRequest as the router reads it: an IncrementBatchRequest's items and the client's sequence number. */
export interface LeanIncrementStreamRequest {
  items: LeanIncrementRequest[];
  sequence: Uint64Value;
}

/** IncrementStreamError: how one batch of a stream failed, as a unary IncrementBatch would have. */
export interface LeanIncrementStreamError {
  /** The gRPC status code. */
  code: number;
  message: string;
  /** ErrorInfo.reason: 'NOT_APPLIED' or 'OUTCOME_UNKNOWN'. */
  reason: string;
  /** A serialized google.rpc.Status, as in a unary call's grpc-status-details-bin trailer. */
  statusDetails: Buffer;
}

/** An IncrementStreamResponse: a batch's results, or its error (null when it succeeded). */
export interface LeanIncrementStreamResponse {
  results: LeanIncrementResponse[];
  sequence: Uint64Value;
  error: LeanIncrementStreamError | null;
}

/** A ReadManyRequest as the router reads it. */
export interface LeanReadManyRequest {
  counters: string[];
  /** counter.v1.Consistency by name ('EXACT', 'CACHED'); a number the enum does not name stays a number (as proto-loader gives it). */
  consistency: string | number;
  /** counter.v1.Scope by name ('SCOPE_REGION', 'SCOPE_GLOBAL'); a number the enum does not name stays a number; absent: SCOPE_REGION. */
  scope?: string | number;
}

/** A ReadResponse as the client reads it: int64s as numbers when exact as one, else bigints. */
export interface LeanReadResponse {
  counter: string;
  total: number | bigint;
  exact: boolean;
  asOfUnixMs: number | bigint;
  stalenessMs: number | bigint;
  shards: number;
  /** SCOPE_GLOBAL only: each region's part (docs/regions.md). */
  regions?: RegionPartValue[];
}

export interface LeanReadManyResponse {
  values: LeanReadResponse[];
}

/** A ReadStreamRequest as the router reads it: a ReadManyRequest's fields and the client's sequence number. */
export interface LeanReadStreamRequest extends LeanReadManyRequest {
  sequence: Uint64Value;
}

/** A ReadStreamResponse: a page's values, or its error (null when it succeeded). */
export interface LeanReadStreamResponse {
  values: LeanReadResponse[];
  sequence: Uint64Value;
  error: LeanIncrementStreamError | null;
}

/** A protobufjs Long or anything with its two halves. */
interface Int64Halves {
  low: number;
  high: number;
}

/** An int64 as proto-loader's serializers take it. */
export type Int64Input = number | bigint | string | Int64Halves;

/**
 * What the encoders take: the shapes proto-loader's serializers take for these
 * messages (int64 as a number, bigint, decimal string or Long; bytes as a
 * Buffer, Uint8Array or base64 string), absent fields left out.
 */
export interface IncrementRequestInput {
  counter?: string | null;
  amount?: Int64Input | null;
  idempotencyKey?: Uint8Array | string | null;
  returnTotal?: boolean | null;
}

export interface IncrementBatchRequestInput {
  items?: readonly IncrementRequestInput[] | null;
}

export interface IncrementResponseInput {
  applied?: boolean | null;
  shard?: number | null;
  /** Written when set (0 too: the field is in a oneof, so it has presence). */
  total?: Int64Input | null;
}

export interface IncrementBatchResponseInput {
  results?: readonly IncrementResponseInput[] | null;
}

export interface IncrementStreamRequestInput extends IncrementBatchRequestInput {
  sequence?: Uint64Value | null;
}

export interface IncrementStreamErrorInput {
  code: number;
  message: string;
  reason: string;
  statusDetails: Uint8Array;
}

export interface IncrementStreamResponseInput extends IncrementBatchResponseInput {
  sequence?: Uint64Value | null;
  error?: IncrementStreamErrorInput | null;
}

export interface ReadManyRequestInput {
  counters?: readonly string[] | null;
  /** A name of counter.v1.Consistency or a number; anything else is EXACT (0), as protobufjs's fromObject takes it. */
  consistency?: string | number | null;
  /** A name of counter.v1.Scope or a number; anything else is SCOPE_REGION (0). */
  scope?: string | number | null;
}

export interface ReadResponseInput {
  counter?: string | null;
  total?: Int64Input | null;
  exact?: boolean | null;
  asOfUnixMs?: Int64Input | null;
  stalenessMs?: Int64Input | null;
  shards?: number | null;
  /** SCOPE_GLOBAL only: each RegionPart message already encoded (region-part-codec.ts). */
  regionParts?: readonly Uint8Array[] | null;
}

export interface ReadManyResponseInput {
  values?: readonly ReadResponseInput[] | null;
}

export interface ReadStreamRequestInput extends ReadManyRequestInput {
  sequence?: Uint64Value | null;
}

export interface ReadStreamResponseInput extends ReadManyResponseInput {
  sequence?: Uint64Value | null;
  error?: IncrementStreamErrorInput | null;
}
