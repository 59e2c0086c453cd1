// The frames of ShardNode's streams (ApplyStream, ReadShardsStream), for
// both ends: what a frame must hold before a node acts on it, how a failed
// frame's status travels in its answer and back to a ServiceError, and the
// lean writer of a ReadShards answer frame. No stream plumbing here.
import { status, type ServiceError } from '@grpc/grpc-js';
import { TallyError, ErrorCode, grpcStatusOf, reasonOf, statusMetadata, storageError } from '../errors/errors.ts';
import { ErrorReason } from '../errors/error-details.ts';
import { encodeReadShardsResponse, type ReadShardsAnswer } from './read-shards-messages.ts';
import type * as shardV1 from '../../generated/tally-shard-v1.ts';

/** Frame sequence numbers are uint32 on the wire, from 1; a stream that would pass this is replaced by a new one. */
export const frameSeqMax = 0xffff_ffff;

/** A frame as proto-loader decodes it (defaults on: a missing request is null). */
export interface DecodedFrame<Request> {
  seq: number;
  request: Request | null;
}

/** The frame's seq and request, or the refusal of a frame a node must not act on (seq 0 when it has none to answer by). */
export function checkFrame<Request>(
  frame: DecodedFrame<Request>,
): { seq: number; request: Request; refusal?: undefined } | { seq: number; refusal: TallyError } {
  const seq = frame.seq;
  if (!Number.isInteger(seq) || seq < 1 || seq > frameSeqMax)
    return {
      seq: 0,
      refusal: new TallyError(ErrorCode.invalidArgument, `malformed frame: sequence number ${String(seq)} is not 1..${frameSeqMax}`),
    };
  if (frame.request === null || frame.request === undefined)
    return { seq, refusal: new TallyError(ErrorCode.invalidArgument, `malformed frame ${seq}: it carries no request`) };
  return { seq, request: frame.request };
}

/** What a thrown error becomes in a frame's answer: the status, message and reason the unary call would have ended with. */
export function frameErrorOf(thrown: unknown): shardV1.FrameError {
  const error = storageError(thrown, "this server's");
  if (error instanceof TallyError) {
    const code = grpcStatusOf(error.code);
    return { code, message: error.message, reason: error.reason ?? reasonOf(code), retryAfterMs: error.retryAfterMs ?? 0 };
  }
  const message = `internal error: ${error instanceof Error ? error.message : String(error)}`;
  return { code: status.INTERNAL, message, reason: ErrorReason.outcomeUnknown, retryAfterMs: 0 };
}

/** A frame's error as the ServiceError a unary call would have failed with, for the same mapping (nodeCallError). */
export function serviceErrorOfFrame(error: shardV1.FrameError__Output): ServiceError {
  // Code 0 in an error is a broken peer: treat it as the worst case, not as success.
  const code = error.code === 0 || error.code > 16 ? status.INTERNAL : (error.code as status);
  const details = error.message;
  const retryAfterMs = error.retryAfterMs > 0 ? error.retryAfterMs : undefined;
  const metadata = statusMetadata(code, details, { reason: error.reason || reasonOf(code), retryAfterMs });
  return Object.assign(new Error(`${code} ${status[code]}: ${details}`), { code, details, metadata });
}

/** A ReadShardsStream answer as a node gives it: the lean answer (totals as bigints) or an error. */
export interface ReadShardsAnswerFrame {
  seq: number;
  response?: ReadShardsAnswer;
  error?: shardV1.FrameError;
}

/** Bytes of v as a varint (v a uint32). */
function varint32Bytes(value: number): number {
  let count = 1;
  for (let rest = value >>> 7; rest !== 0; rest >>>= 7) count++;
  return count;
}

function writeVarint32(out: Buffer, at: number, value: number): number {
  let rest = value >>> 0;
  while (rest > 0x7f) {
    out[at++] = (rest & 0x7f) | 0x80;
    rest >>>= 7;
  }
  out[at++] = rest;
  return at;
}

/**
 * A ReadShardsAnswer frame carrying a response, written straight to bytes:
 * seq (field 1) then the lean ReadShardsResponse (field 2), as proto-loader
 * would lay them out. Errors go through the ordinary serializer.
 */
export function encodeReadShardsAnswerFrame(seq: number, answer: ReadShardsAnswer): Buffer {
  const body = encodeReadShardsResponse(answer);
  const out = Buffer.allocUnsafe(1 + varint32Bytes(seq) + 1 + varint32Bytes(body.length) + body.length);
  let at = 0;
  out[at++] = 0x08; // field 1 (seq), varint
  at = writeVarint32(out, at, seq);
  out[at++] = 0x12; // field 2 (response), length-delimited
  at = writeVarint32(out, at, body.length);
  body.copy(out, at);
  return out;
}
