// IncrementStream: batches on one bidi stream, each answered by its sequence
// number with what IncrementBatch would have answered. Only the stream's
// bookkeeping lives here (sequence numbers, bounds, how it ends); validation,
// the write, keys and metrics are IncrementBatch's own (applyBatch).
import type { ServerDuplexStream } from '@grpc/grpc-js';
import {
  ErrorCode,
  TallyError,
  toServiceError,
  toStatusParts,
  withReason,
  type IncrementColumns,
  type IncrementResponseInput,
  type IncrementStreamResponseInput,
  type Uint64Value,
  ErrorReason,
} from '../../wire/index.ts';
import { busyRetryDelayMs, malformedRefusalOf } from '../../common/index.ts';

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

/** The batches in flight over every stream of one router. */
interface RouterCount {
  batches: number;
}

/** The handler of every IncrementStream of one router; the router-wide bound is shared by its streams. */
export function createIncrementStreamHandler(applyBatch: ApplyBatch, limits: IncrementStreamLimits, hooks: IncrementStreamHooks) {
  const routerCount: RouterCount = { batches: 0 };
  return (call: StreamCall): void => {
    new StreamSession(call, applyBatch, limits, hooks, routerCount).start();
  };
}

/** One stream: its batches in flight by sequence number, and how it ends. */
class StreamSession {
  // Sequence numbers of batches worked on, or answered but not yet flushed;
  // a number past 2^53 is a bigint (never equal to a number: the decoder is canonical).
  private readonly inFlight = new Set<Uint64Value>();
  // Of those, answered and waiting for HTTP/2 to take the answer: released by the write's callback, or when the stream closes.
  private readonly flushing = new Set<Uint64Value>();
  private inputEnded = false;
  private finished = false;

  constructor(
    private readonly call: StreamCall,
    private readonly applyBatch: ApplyBatch,
    private readonly limits: IncrementStreamLimits,
    private readonly hooks: IncrementStreamHooks,
    private readonly routerCount: RouterCount,
  ) {}

  start(): void {
    this.call.on('data', (request: IncrementColumns) => this.received(request));
    this.call.on('end', () => {
      this.inputEnded = true;
      this.finishIfDone();
    });
    // A cancelled stream (the client went away, its deadline passed): batches in flight see call.cancelled.
    const closed = (): void => this.closed();
    this.call.on('cancelled', closed);
    this.call.on('error', closed);
    this.call.on('close', closed);
  }

  private received(request: IncrementColumns): void {
    if (this.finished) return;
    const refusal = malformedRefusalOf(request);
    if (refusal !== undefined) {
      // A message that does not decode names no sequence number to answer: the stream ends.
      this.failStream(refusal);
      return;
    }
    const { sequence } = request;
    if (this.inFlight.has(sequence)) {
      this.failStream(new TallyError(ErrorCode.invalidArgument, `sequence ${sequence} is already in flight on this stream`));
      return;
    }
    const busy = this.busy();
    if (busy !== undefined) {
      this.hooks.onRefused(request.counters.length);
      // Not counted in flight: nothing is held for it but its answer.
      if (!this.call.cancelled) this.send({ sequence, error: streamErrorOf(busy) });
      return;
    }
    this.inFlight.add(sequence);
    this.routerCount.batches++;
    this.hooks.onInFlight(this.routerCount.batches);
    this.applyBatch(request, this.call).then(
      (results) => this.answer({ results, sequence }, sequence),
      (error: unknown) => this.answer({ sequence, error: streamErrorOf(error) }, sequence),
    );
  }

  /** The refusal of a batch past the stream's or the router's bound; undefined within both. */
  private busy(): TallyError | undefined {
    const { batchesInFlightMax, routerBatchesInFlightMax } = this.limits;
    const streamFull = this.inFlight.size >= batchesInFlightMax;
    if (!streamFull && this.routerCount.batches < routerBatchesInFlightMax) return undefined;
    const which = streamFull
      ? `${batchesInFlightMax} batches in flight on this stream`
      : `${routerBatchesInFlightMax} stream batches in flight on this router`;
    return new TallyError(ErrorCode.resourceExhausted, `server busy: ${which}; send it again after the retry delay`, undefined, {
      reason: ErrorReason.notApplied,
      retryAfterMs: busyRetryDelayMs,
    });
  }

  // The slot frees once the answer is handed to HTTP/2.
  private answer(response: IncrementStreamResponseInput, sequence: Uint64Value): void {
    if (this.finished || this.call.cancelled) {
      this.release(sequence);
      return;
    }
    this.flushing.add(sequence);
    this.send(response, () => this.release(sequence));
  }

  // Answers the client does not read are not piled up: past the stream's
  // buffer, no further batch is read until it drains (HTTP/2 flow control
  // then holds the client back).
  private send(response: IncrementStreamResponseInput, written?: () => void): void {
    if (this.call.write(response, written)) return;
    this.call.pause();
    this.call.once('drain', () => this.call.resume());
  }

  private release(sequence: Uint64Value): void {
    if (!this.inFlight.delete(sequence)) return;
    this.flushing.delete(sequence);
    this.routerCount.batches--;
    this.hooks.onInFlight(this.routerCount.batches);
    this.finishIfDone();
  }

  private finishIfDone(): void {
    if (this.finished || !this.inputEnded || this.inFlight.size > 0) return;
    this.finished = true;
    this.call.end();
  }

  // The whole stream fails: every batch still unanswered has an unknown
  // outcome, and the status says so (answers already written go out first).
  private failStream(error: TallyError): void {
    if (this.finished) return;
    this.finished = true;
    const unanswered = this.inFlight.size - this.flushing.size;
    this.call.emit('error', toServiceError(unanswered > 0 ? withReason(error, ErrorReason.outcomeUnknown) : error));
  }

  private closed(): void {
    this.finished = true;
    for (const sequence of [...this.flushing]) this.release(sequence);
  }
}

function streamErrorOf(error: unknown): IncrementStreamResponseInput['error'] {
  const { code, details, reason, statusDetails } = toStatusParts(error);
  return { code, message: details, reason, statusDetails };
}
