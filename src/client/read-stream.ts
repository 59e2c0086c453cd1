// One ReadStream to one router, for readMany() calls that overlap: each page
// is a message with a sequence number, answered by that number in any order.
// It decides nothing about sending again: a page settles with the error a
// unary ReadMany would have failed with, or with the stream's. A read
// changes nothing, so a page left unanswered by a failed stream is simply
// not read (NOT_APPLIED), for the caller's resend rule.
import { status, type ClientDuplexStream } from '@grpc/grpc-js';
import {
  monotonicNowMs,
  ErrorCode,
  TallyError,
  errorCodeOfGrpcStatus,
  fromServiceError,
  ErrorReason,
  decodeStatusDetails,
  readStreamLifetimeMs,
  readStreamPagesInFlightMax,
} from '../wire/index.ts';
import type { LeanIncrementStreamError, LeanReadResponse, LeanReadStreamResponse, ReadStreamRequestInput } from '../wire/index.ts';

export type ReadStreamCall = ClientDuplexStream<ReadStreamRequestInput, LeanReadStreamResponse>;

/** Opens a ReadStream that the server ends by deadline (monotonic ms) at the latest. */
export type OpenReadStream = (deadline: number) => ReadStreamCall;

/** A page to read: ReadMany's request. */
export interface ReadPageRequest {
  counters: string[];
  consistency: 'EXACT' | 'CACHED';
  scope?: 'SCOPE_GLOBAL';
}

/** A stream is opened to outlive its pages' deadlines by this much: a page times out on its own timer, not with the stream. */
const streamDeadlineMarginMs = 1_000;

/** Thrown by send() when the router does not serve ReadStream (UNIMPLEMENTED): the caller reads with unary ReadMany. */
export class ReadStreamUnsupported extends Error {
  constructor(readonly failure: TallyError) {
    super(`ReadStream is not served: ${failure.message}`);
  }
}

interface Pending {
  resolve: (values: LeanReadResponse[]) => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout;
}

/** One open stream: its sequence numbers, its pages awaiting answers, and how it ends. */
class OpenStream {
  private readonly pending = new Map<number, Pending>();
  private nextSequence = 1;
  private answered = false;
  /** No new page goes on it: it has failed, or is finishing what it carries. */
  retired = false;

  constructor(
    private readonly call: ReadStreamCall,
    readonly openedAt: number,
    readonly deadline: number,
    private readonly onClosed: (stream: OpenStream) => void,
  ) {
    call.on('data', (response: LeanReadStreamResponse) => this.answer(response));
    call.on('error', (error: unknown) => this.failAll(fromServiceError(error)));
    call.on('end', () => this.failAll(new TallyError(ErrorCode.unavailable, 'the ReadStream ended before answering this page')));
  }

  get inFlight(): number {
    return this.pending.size;
  }

  send(page: ReadPageRequest, deadline: number): Promise<LeanReadResponse[]> {
    const sequence = this.nextSequence++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => {
          if (!this.pending.delete(sequence)) return;
          reject(new TallyError(ErrorCode.deadlineExceeded, 'deadline exceeded waiting for the ReadStream to answer this page'));
          this.closeIfIdle();
        },
        Math.max(0, deadline - monotonicNowMs()),
      );
      this.pending.set(sequence, { resolve, reject, timer });
      this.call.write({ counters: page.counters, consistency: page.consistency, sequence });
    });
  }

  /** No new pages; the router ends the stream once it has answered the ones in flight. */
  retire(): void {
    if (this.retired) return;
    this.retired = true;
    this.closeIfIdle();
  }

  private closeIfIdle(): void {
    if (this.retired && this.pending.size === 0) this.call.end();
  }

  private answer(response: LeanReadStreamResponse): void {
    this.answered = true;
    const sequence = Number(response.sequence);
    const pending = this.pending.get(sequence);
    // Answered after its deadline (already settled), or a sequence this side never sent: nothing waits for it.
    if (pending === undefined) return;
    this.pending.delete(sequence);
    clearTimeout(pending.timer);
    if (response.error === null) pending.resolve(response.values);
    else pending.reject(pageError(response.error));
    this.closeIfIdle();
  }

  private failAll(failure: TallyError): void {
    this.retired = true;
    // Nothing was ever answered and the method is unknown: the router predates ReadStream.
    const unsupported = failure.grpcCode === status.UNIMPLEMENTED && !this.answered;
    const error = new TallyError(failure.code, `the ReadStream failed with this page unanswered: ${failure.message}`, failure.grpcCode, {
      reason: ErrorReason.notApplied,
    });
    for (const [sequence, pending] of this.pending) {
      this.pending.delete(sequence);
      clearTimeout(pending.timer);
      pending.reject(unsupported ? new ReadStreamUnsupported(failure) : error);
    }
    this.onClosed(this);
  }
}

/** A page's error, as the unary ReadMany would have failed. */
function pageError(error: LeanIncrementStreamError): TallyError {
  const details = error.statusDetails.length > 0 ? decodeStatusDetails(error.statusDetails) : undefined;
  const reason = error.reason !== '' ? error.reason : details?.reason;
  return new TallyError(errorCodeOfGrpcStatus(error.code), error.message, error.code, {
    ...(reason === undefined ? {} : { reason }),
    ...(details?.retryAfterMs === undefined ? {} : { retryAfterMs: details.retryAfterMs }),
  });
}

interface Waiting {
  page: ReadPageRequest;
  deadline: number;
  resolve: (values: LeanReadResponse[]) => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout;
}

/**
 * The ReadStream to one router: opened on first use, replaced after
 * readStreamLifetimeMs (the old one finishes its pages and closes) and
 * when it fails. Pages go on the current stream, at most
 * readStreamPagesInFlightMax at once (the router refuses more); the rest
 * wait here, in order, until a slot frees or their deadline passes.
 */
export class ReadStreamSender {
  private current: OpenStream | undefined;
  private readonly waiting: Waiting[] = [];

  constructor(private readonly open: OpenReadStream) {}

  /** Pages in flight on the current stream. */
  get inFlight(): number {
    return this.current?.inFlight ?? 0;
  }

  send(page: ReadPageRequest, deadline: number): Promise<LeanReadResponse[]> {
    return new Promise((resolve, reject) => {
      const waiting: Waiting = {
        page,
        deadline,
        resolve,
        reject,
        timer: setTimeout(
          () => {
            const index = this.waiting.indexOf(waiting);
            if (index < 0) return;
            this.waiting.splice(index, 1);
            reject(
              new TallyError(
                ErrorCode.deadlineExceeded,
                'deadline exceeded while the page waited for a slot on the ReadStream; it was not sent',
              ),
            );
          },
          Math.max(0, deadline - monotonicNowMs()),
        ),
      };
      this.waiting.push(waiting);
      this.pump();
    });
  }

  close(): void {
    this.current?.retire();
    this.current = undefined;
  }

  private pump(): void {
    while (this.waiting.length > 0) {
      const stream = this.streamFor(this.waiting[0]!.deadline);
      if (stream.inFlight >= readStreamPagesInFlightMax) return;
      const next = this.waiting.shift()!;
      clearTimeout(next.timer);
      stream
        .send(next.page, next.deadline)
        .then(next.resolve, next.reject)
        .finally(() => this.pump());
    }
  }

  private streamFor(deadline: number): OpenStream {
    const nowMs = monotonicNowMs();
    const current = this.current;
    if (
      current !== undefined &&
      !current.retired &&
      nowMs - current.openedAt < readStreamLifetimeMs &&
      deadline + streamDeadlineMarginMs <= current.deadline
    )
      return current;
    current?.retire();
    const streamDeadline = Math.max(nowMs + readStreamLifetimeMs, deadline) + streamDeadlineMarginMs;
    const opened = new OpenStream(this.open(streamDeadline), nowMs, streamDeadline, (stream) => {
      if (this.current === stream) this.current = undefined;
    });
    this.current = opened;
    return opened;
  }
}
