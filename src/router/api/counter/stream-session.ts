// One bidi stream of sequenced units (IncrementStream's batches,
// ReadStream's pages), each answered by its sequence number with what the
// unary call it repeats would have answered. The session keeps only the
// stream's bookkeeping: sequence numbers in flight, the stream's and the
// router's bounds, flow control, and how the stream ends. What a unit does,
// and what its failure means, is its kind's (StreamKind).
import type { ServerDuplexStream, ServiceError } from '@grpc/grpc-js';
import { ErrorCode, ErrorReason, TallyError, type Uint64Value } from '../../../wire/index.ts';
import { busyRetryDelayMs, malformedRefusalOf } from '../../../common/index.ts';

/** The units in flight over every stream of one kind on one router. */
export interface RouterCount {
  inFlight: number;
}

/** What one kind of stream does with its units, and its bounds. */
export interface StreamKind<Request, Response, Answer> {
  /** The units' name in a busy refusal: 'batches', 'pages'. */
  readonly units: string;
  /** Units of one stream worked on at once. */
  readonly inFlightMax: number;
  /** Stream units worked on at once over all streams of this kind. */
  readonly routerInFlightMax: number;
  readonly routerCount: RouterCount;
  /** The unary handler's body: throws the error the unary call fails with. */
  work(request: Request, call: { readonly cancelled: boolean }): Promise<Response>;
  answerOf(sequence: Uint64Value, response: Response): Answer;
  /** A unit's failure as its answer. */
  refusalOf(sequence: Uint64Value, error: unknown): Answer;
  /** A unit refused for the bounds (not counted in flight). */
  onRefused(request: Request): void;
  onInFlight(units: number): void;
  /** The status the whole stream fails with, with `unanswered` units not yet answered. */
  streamFailure(error: TallyError, unanswered: number): Partial<ServiceError>;
}

/** One stream: its units in flight by sequence number, and how it ends. */
export class StreamSession<Request extends { sequence: Uint64Value }, Response, Answer> {
  // Sequence numbers of units worked on, or answered but not yet flushed;
  // a number past 2^53 is a bigint (never equal to a number: the decoder is canonical).
  private readonly inFlight = new Set<Uint64Value>();
  // Of those, answered and waiting for HTTP/2 to take the answer: released by the write's callback, or when the stream closes.
  private readonly flushing = new Set<Uint64Value>();
  private inputEnded = false;
  private finished = false;

  constructor(
    private readonly call: ServerDuplexStream<Request, Answer>,
    private readonly kind: StreamKind<Request, Response, Answer>,
  ) {}

  start(): void {
    this.call.on('data', (request: Request) => this.received(request));
    this.call.on('end', () => {
      this.inputEnded = true;
      this.finishIfDone();
    });
    // A cancelled stream (the client went away, its deadline passed): units in flight see call.cancelled.
    const closed = (): void => this.closed();
    this.call.on('cancelled', closed);
    this.call.on('error', closed);
    this.call.on('close', closed);
  }

  private received(request: Request): void {
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
      this.kind.onRefused(request);
      // Not counted in flight: nothing is held for it but its answer.
      if (!this.call.cancelled) this.send(this.kind.refusalOf(sequence, busy));
      return;
    }
    this.inFlight.add(sequence);
    this.kind.routerCount.inFlight++;
    this.kind.onInFlight(this.kind.routerCount.inFlight);
    let work: Promise<Response>;
    try {
      work = this.kind.work(request, this.call);
    } catch (error) {
      work = Promise.reject(error as Error);
    }
    work.then(
      (response) => this.answer(this.kind.answerOf(sequence, response), sequence),
      (error: unknown) => this.answer(this.kind.refusalOf(sequence, error), sequence),
    );
  }

  /** The refusal of a unit past the stream's or the router's bound; undefined within both. */
  private busy(): TallyError | undefined {
    const { inFlightMax, routerInFlightMax, units, routerCount } = this.kind;
    const streamFull = this.inFlight.size >= inFlightMax;
    if (!streamFull && routerCount.inFlight < routerInFlightMax) return undefined;
    const which = streamFull
      ? `${inFlightMax} ${units} in flight on this stream`
      : `${routerInFlightMax} stream ${units} in flight on this router`;
    return new TallyError(ErrorCode.resourceExhausted, `server busy: ${which}; send it again after the retry delay`, undefined, {
      reason: ErrorReason.notApplied,
      retryAfterMs: busyRetryDelayMs,
    });
  }

  // The slot frees once the answer is handed to HTTP/2.
  private answer(response: Answer, sequence: Uint64Value): void {
    if (this.finished || this.call.cancelled) {
      this.release(sequence);
      return;
    }
    this.flushing.add(sequence);
    this.send(response, () => this.release(sequence));
  }

  // Answers the client does not read are not piled up: past the stream's
  // buffer, no further unit is read until it drains (HTTP/2 flow control
  // then holds the client back).
  private send(response: Answer, written?: () => void): void {
    if (this.call.write(response, written)) return;
    this.call.pause();
    this.call.once('drain', () => this.call.resume());
  }

  private release(sequence: Uint64Value): void {
    if (!this.inFlight.delete(sequence)) return;
    this.flushing.delete(sequence);
    this.kind.routerCount.inFlight--;
    this.kind.onInFlight(this.kind.routerCount.inFlight);
    this.finishIfDone();
  }

  private finishIfDone(): void {
    if (this.finished || !this.inputEnded || this.inFlight.size > 0) return;
    this.finished = true;
    this.call.end();
  }

  // The whole stream fails (answers already written go out first); the kind says what the unanswered units' outcome is.
  private failStream(error: TallyError): void {
    if (this.finished) return;
    this.finished = true;
    this.call.emit('error', this.kind.streamFailure(error, this.inFlight.size - this.flushing.size));
  }

  private closed(): void {
    this.finished = true;
    // A unit still being worked on releases its slot when its work ends.
    for (const sequence of [...this.flushing]) this.release(sequence);
  }
}
