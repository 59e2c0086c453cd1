// ReadStream: pages of reads on one bidi stream, each answered by its
// sequence number with what ReadMany would have answered. Only the stream's
// bookkeeping lives here (sequence numbers, bounds, how it ends);
// validation, consistency, the read and its metrics are ReadMany's own
// (readPage). A read changes nothing: every failure is NOT_APPLIED.
import type { ServerDuplexStream } from '@grpc/grpc-js';
import {
  ErrorCode,
  TallyError,
  toServiceError,
  toStatusParts,
  type LeanReadManyRequest,
  type LeanReadStreamRequest,
  type ReadManyResponseInput,
  type ReadStreamResponseInput,
  type Uint64Value,
  ErrorReason,
} from '../../wire/index.ts';
import { busyRetryDelayMs, malformedRefusalOf } from '../../common/index.ts';

/** ReadMany's handler body: validates, reads, counts; throws the error the unary call fails with. */
export type ReadPage = (request: LeanReadManyRequest, call: { readonly cancelled: boolean }) => Promise<ReadManyResponseInput>;

export interface ReadStreamLimits {
  /** Pages of one stream worked on at once (readStreamPagesInFlightMax). */
  pagesInFlightMax: number;
  /** Stream pages worked on at once over all streams (routerReadStreamPagesInFlightMax). */
  routerPagesInFlightMax: number;
}

type StreamCall = ServerDuplexStream<LeanReadStreamRequest, ReadStreamResponseInput>;

/** The pages in flight over every ReadStream of one router. */
interface RouterCount {
  pages: number;
}

/** The handler of every ReadStream of one router; the router-wide bound is shared by its streams. */
export function createReadStreamHandler(readPage: ReadPage, limits: ReadStreamLimits, onInFlight: (pages: number) => void = () => {}) {
  const routerCount: RouterCount = { pages: 0 };
  return (call: StreamCall): void => {
    new ReadStreamSession(call, readPage, limits, onInFlight, routerCount).start();
  };
}

/** One stream: its pages in flight by sequence number, and how it ends. */
class ReadStreamSession {
  // Sequence numbers of pages worked on, or answered but not yet flushed;
  // a number past 2^53 is a bigint (never equal to a number: the decoder is canonical).
  private readonly inFlight = new Set<Uint64Value>();
  // Of those, answered and waiting for HTTP/2 to take the answer: released by the write's callback, or when the stream closes.
  private readonly flushing = new Set<Uint64Value>();
  private inputEnded = false;
  private finished = false;

  constructor(
    private readonly call: StreamCall,
    private readonly readPage: ReadPage,
    private readonly limits: ReadStreamLimits,
    private readonly onInFlight: (pages: number) => void,
    private readonly routerCount: RouterCount,
  ) {}

  start(): void {
    this.call.on('data', (request: LeanReadStreamRequest) => this.received(request));
    this.call.on('end', () => {
      this.inputEnded = true;
      this.finishIfDone();
    });
    // A cancelled stream (the client went away, its deadline passed): pages in flight see call.cancelled.
    const closed = (): void => this.closed();
    this.call.on('cancelled', closed);
    this.call.on('error', closed);
    this.call.on('close', closed);
  }

  private received(request: LeanReadStreamRequest): void {
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
      if (!this.call.cancelled) this.send({ sequence, error: pageErrorOf(busy) });
      return;
    }
    this.inFlight.add(sequence);
    this.routerCount.pages++;
    this.onInFlight(this.routerCount.pages);
    let answer: Promise<ReadManyResponseInput>;
    try {
      answer = this.readPage(request, this.call);
    } catch (error) {
      answer = Promise.reject(error as Error);
    }
    answer.then(
      (response) => this.answer({ values: response.values, sequence }, sequence),
      (error: unknown) => this.answer({ sequence, error: pageErrorOf(error) }, sequence),
    );
  }

  /** The refusal of a page past the stream's or the router's bound; undefined within both. */
  private busy(): TallyError | undefined {
    const { pagesInFlightMax, routerPagesInFlightMax } = this.limits;
    const streamFull = this.inFlight.size >= pagesInFlightMax;
    if (!streamFull && this.routerCount.pages < routerPagesInFlightMax) return undefined;
    const which = streamFull
      ? `${pagesInFlightMax} pages in flight on this stream`
      : `${routerPagesInFlightMax} stream pages in flight on this router`;
    return new TallyError(ErrorCode.resourceExhausted, `server busy: ${which}; send it again after the retry delay`, undefined, {
      reason: ErrorReason.notApplied,
      retryAfterMs: busyRetryDelayMs,
    });
  }

  // The slot frees once the answer is handed to HTTP/2.
  private answer(response: ReadStreamResponseInput, sequence: Uint64Value): void {
    if (this.finished || this.call.cancelled) {
      this.release(sequence);
      return;
    }
    this.flushing.add(sequence);
    this.send(response, () => this.release(sequence));
  }

  // Answers the client does not read are not piled up: past the stream's
  // buffer, no further page is read until it drains (HTTP/2 flow control
  // then holds the client back).
  private send(response: ReadStreamResponseInput, written?: () => void): void {
    if (this.call.write(response, written)) return;
    this.call.pause();
    this.call.once('drain', () => this.call.resume());
  }

  private release(sequence: Uint64Value): void {
    if (!this.inFlight.delete(sequence)) return;
    this.flushing.delete(sequence);
    this.routerCount.pages--;
    this.onInFlight(this.routerCount.pages);
    this.finishIfDone();
  }

  private finishIfDone(): void {
    if (this.finished || !this.inputEnded || this.inFlight.size > 0) return;
    this.finished = true;
    this.call.end();
  }

  // The whole stream fails; a read changes nothing, so every page still unanswered may be sent again.
  private failStream(error: TallyError): void {
    if (this.finished) return;
    this.finished = true;
    this.call.emit('error', toServiceError(error, true));
  }

  private closed(): void {
    this.finished = true;
    // A page still being read releases its slot when its read ends.
    for (const sequence of [...this.flushing]) this.release(sequence);
  }
}

function pageErrorOf(error: unknown): ReadStreamResponseInput['error'] {
  const { code, details, reason, statusDetails } = toStatusParts(error, true);
  return { code, message: details, reason, statusDetails };
}
