// IncrementStream: batches on one bidi stream (a StreamSession), each
// answered by its sequence number with what IncrementBatch would have
// answered. Validation, the write, keys and metrics are IncrementBatch's own
// (applyBatch); a stream that fails leaves its unanswered batches' outcome unknown.
import type { ServerDuplexStream } from '@grpc/grpc-js';
import { StreamSession, type StreamKind } from './stream-session.ts';
import {
  ErrorReason,
  toServiceError,
  toStatusParts,
  withReason,
  type IncrementColumns,
  type IncrementResponseInput,
  type IncrementStreamResponseInput,
} from '../../../wire/index.ts';

/** IncrementBatch's handler body: validates, applies, counts; throws the error the unary call fails with. */
export type ApplyBatch = (request: IncrementColumns, call: { readonly cancelled: boolean }) => Promise<readonly IncrementResponseInput[]>;

export interface IncrementStreamLimits {
  /** Batches of one stream worked on at once (streamBatchesInFlightMax). */
  batchesInFlightMax: number;
  /** Stream batches worked on at once over all streams (routerStreamBatchesInFlightMax). */
  routerBatchesInFlightMax: number;
}

export interface IncrementStreamHooks {
  /** A batch refused for the bounds: counted as IncrementBatch's rejections are. */
  onRefused(itemCount: number): void;
  onInFlight(batches: number): void;
}

/** Each request decoded into columns with its sequence number (withColumnDecoders). */
type StreamCall = ServerDuplexStream<IncrementColumns, IncrementStreamResponseInput>;

/** The handler of every IncrementStream of one router; the router-wide bound is shared by its streams. */
export function createIncrementStreamHandler(applyBatch: ApplyBatch, limits: IncrementStreamLimits, hooks: IncrementStreamHooks) {
  const kind: StreamKind<IncrementColumns, readonly IncrementResponseInput[], IncrementStreamResponseInput> = {
    units: 'batches',
    inFlightMax: limits.batchesInFlightMax,
    routerInFlightMax: limits.routerBatchesInFlightMax,
    routerCount: { inFlight: 0 },
    work: applyBatch,
    answerOf: (sequence, results) => ({ results, sequence }),
    refusalOf: (sequence, error) => ({ sequence, error: streamErrorOf(error) }),
    onRefused: (request) => hooks.onRefused(request.counters.length),
    onInFlight: (batches) => hooks.onInFlight(batches),
    // Every batch still unanswered has an unknown outcome, and the status says so.
    streamFailure: (error, unanswered) => toServiceError(unanswered > 0 ? withReason(error, ErrorReason.outcomeUnknown) : error),
  };
  return (call: StreamCall): void => {
    new StreamSession(call, kind).start();
  };
}

function streamErrorOf(error: unknown): IncrementStreamResponseInput['error'] {
  const { code, details, reason, statusDetails } = toStatusParts(error);
  return { code, message: details, reason, statusDetails };
}
