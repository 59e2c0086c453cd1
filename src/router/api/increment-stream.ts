// IncrementStream: batches on one bidi stream, each answered by its sequence
// number with what IncrementBatch would have answered. Only the stream's
// bookkeeping lives here (sequence numbers, bounds, how it ends); validation,
// the write, keys and metrics are IncrementBatch's own (applyBatch).
import type { ServerDuplexStream } from '@grpc/grpc-js';
import {
  ErrorCode,
  ErrorReason,
  TallyError,
  busyRetryDelayMs,
  malformedRequestError,
  toServiceError,
  toStatusParts,
  withReason,
  type IncrementResponseInput,
  type IncrementStreamResponseInput,
  type LeanIncrementBatchRequest,
  type LeanIncrementStreamRequest,
  type Uint64Value,
} from '../../common/index.ts';

/** IncrementBatch's handler body: validates, applies, counts; throws the error the unary call fails with. */
export type ApplyBatch = (
  request: LeanIncrementBatchRequest,
  call: { readonly cancelled: boolean },
) => Promise<readonly IncrementResponseInput[]>;

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

/** The handler of every IncrementStream of one router; the router-wide bound is shared by its streams. */
export function createIncrementStreamHandler(applyBatch: ApplyBatch, limits: IncrementStreamLimits, hooks: IncrementStreamHooks) {
  let routerInFlight = 0;
  return (call: ServerDuplexStream<LeanIncrementStreamRequest, IncrementStreamResponseInput>): void => {
    // Sequence numbers of batches worked on or answered but not yet flushed;
    // a number past 2^53 is a bigint (never equal to a number: the decoder is canonical).
    const inFlight = new Set<Uint64Value>();
    // Of those, answered and waiting for HTTP/2 to take the answer: released by the write's callback, or when the stream closes.
    const flushing = new Set<Uint64Value>();
    let inputEnded = false;
    let finished = false;

    const finishIfDone = (): void => {
      if (finished || !inputEnded || inFlight.size > 0) return;
      finished = true;
      call.end();
    };
    // The whole stream fails: every batch still unanswered has an unknown
    // outcome, and the status says so (answers already written go out first).
    const failStream = (error: TallyError): void => {
      if (finished) return;
      finished = true;
      const unanswered = inFlight.size - flushing.size;
      call.emit('error', toServiceError(unanswered > 0 ? withReason(error, ErrorReason.outcomeUnknown) : error));
    };
    const release = (sequence: Uint64Value): void => {
      if (!inFlight.delete(sequence)) return;
      flushing.delete(sequence);
      routerInFlight--;
      hooks.onInFlight(routerInFlight);
      finishIfDone();
    };
    // Answers the client does not read are not piled up: past the stream's
    // buffer, no further batch is read until it drains (HTTP/2 flow control
    // then holds the client back).
    const send = (response: IncrementStreamResponseInput, written?: () => void): void => {
      if (call.write(response, written)) return;
      call.pause();
      call.once('drain', () => call.resume());
    };
    // The slot frees once the answer is handed to HTTP/2.
    const answer = (response: IncrementStreamResponseInput, sequence: Uint64Value): void => {
      if (finished || call.cancelled) {
        release(sequence);
        return;
      }
      flushing.add(sequence);
      send(response, () => release(sequence));
    };
    const closed = (): void => {
      finished = true;
      for (const sequence of [...flushing]) release(sequence);
    };

    call.on('data', (request: LeanIncrementStreamRequest) => {
      if (finished) return;
      const refusal = malformedRequestError(request);
      if (refusal !== undefined) {
        // A message that does not decode names no sequence number to answer: the stream ends.
        failStream(refusal.code === ErrorCode.invalidArgument ? refusal : new TallyError(refusal.code, refusal.message));
        return;
      }
      const { sequence } = request;
      if (inFlight.has(sequence)) {
        failStream(new TallyError(ErrorCode.invalidArgument, `sequence ${sequence} is already in flight on this stream`));
        return;
      }
      if (inFlight.size >= limits.batchesInFlightMax || routerInFlight >= limits.routerBatchesInFlightMax) {
        hooks.onRefused(request.items.length);
        const which =
          inFlight.size >= limits.batchesInFlightMax
            ? `${limits.batchesInFlightMax} batches in flight on this stream`
            : `${limits.routerBatchesInFlightMax} stream batches in flight on this router`;
        const busy = new TallyError(ErrorCode.resourceExhausted, `server busy: ${which}; send it again after the retry delay`, undefined, {
          reason: ErrorReason.notApplied,
          retryAfterMs: busyRetryDelayMs,
        });
        // Not counted in flight: nothing is held for it but its answer.
        if (!call.cancelled) send({ sequence, error: streamErrorOf(busy) });
        return;
      }
      inFlight.add(sequence);
      routerInFlight++;
      hooks.onInFlight(routerInFlight);
      applyBatch(request, call).then(
        (results) => answer({ results, sequence }, sequence),
        (error: unknown) => answer({ sequence, error: streamErrorOf(error) }, sequence),
      );
    });
    call.on('end', () => {
      inputEnded = true;
      finishIfDone();
    });
    // A cancelled stream (the client went away, its deadline passed): batches in flight see call.cancelled.
    call.on('cancelled', closed);
    call.on('error', closed);
    call.on('close', closed);
  };
}

function streamErrorOf(error: unknown): IncrementStreamResponseInput['error'] {
  const { code, details, reason, statusDetails } = toStatusParts(error);
  return { code, message: details, reason, statusDetails };
}
