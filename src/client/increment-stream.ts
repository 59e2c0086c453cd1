// One IncrementStream to one router, for the coalescer: each batch is a
// message with a sequence number, answered by that number in any order. It
// decides nothing about resending: a batch settles with the error a unary
// IncrementBatch would have failed with, and a stream that fails leaves each
// of its unanswered batches of unknown outcome (unless the router said it
// read nothing), for the coalescer's resend rule.
import { status, type ClientDuplexStream } from '@grpc/grpc-js';
import {
  monotonicNowMs,
  ErrorCode,
  TallyError,
  errorCodeOfGrpcStatus,
  fromServiceError,
  ErrorReason,
  decodeStatusDetails,
  incrementStreamLifetimeMs,
  streamBatchesInFlightMax,
} from '../wire/index.ts';
import type {
  IncrementStreamRequestInput,
  LeanIncrementStreamError,
  LeanIncrementStreamResponse,
  LeanIncrementResponse,
} from '../wire/index.ts';
import type { CoalescedItem } from './increment-coalescer.ts';

export type IncrementStreamCall = ClientDuplexStream<IncrementStreamRequestInput, LeanIncrementStreamResponse>;

/** Opens an IncrementStream that the server ends by deadline (monotonic ms) at the latest. */
export type OpenIncrementStream = (deadline: number) => IncrementStreamCall;

/** A stream is opened to outlive its batches' deadlines by this much: a batch times out on its own timer, not with the stream. */
const streamDeadlineMarginMs = 1_000;

/** Thrown by send() when the router does not serve IncrementStream (UNIMPLEMENTED): nothing was read, so nothing applied. */
export class StreamUnsupported extends Error {
  constructor(readonly failure: TallyError) {
    super(`IncrementStream is not served: ${failure.message}`);
  }
}

interface Pending {
  resolve: (results: LeanIncrementResponse[]) => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout;
}

/** One open stream: its sequence numbers, its batches awaiting answers, and how it ends. */
class OpenStream {
  private readonly pending = new Map<number, Pending>();
  private nextSequence = 1;
  private answered = false;
  /** No new batch goes on it: it has failed, or is finishing what it carries. */
  retired = false;

  constructor(
    private readonly call: IncrementStreamCall,
    readonly openedAt: number,
    readonly deadline: number,
    private readonly onClosed: (stream: OpenStream) => void,
  ) {
    call.on('data', (response: LeanIncrementStreamResponse) => this.answer(response));
    call.on('error', (error: unknown) => this.failAll(fromServiceError(error)));
    // Ended with OK: only after the client half-closed; a batch still unanswered then is unknown.
    call.on('end', () =>
      this.failAll(
        new TallyError(ErrorCode.unavailable, 'the IncrementStream ended before answering this batch', status.UNAVAILABLE, {
          reason: ErrorReason.outcomeUnknown,
        }),
      ),
    );
  }

  get inFlight(): number {
    return this.pending.size;
  }

  /** Sends one batch; settles with its results, its error, or the stream's. */
  send(items: CoalescedItem[], deadline: number): Promise<LeanIncrementResponse[]> {
    const sequence = this.nextSequence++;
    return new Promise((resolve, reject) => {
      // The batch's own deadline: its outcome is unknown then, as a unary call's would be.
      const timer = setTimeout(
        () => {
          if (!this.pending.delete(sequence)) return;
          reject(
            new TallyError(
              ErrorCode.deadlineExceeded,
              'deadline exceeded waiting for the IncrementStream to answer this batch',
              undefined,
              {
                reason: ErrorReason.outcomeUnknown,
              },
            ),
          );
          this.closeIfIdle();
        },
        Math.max(0, deadline - monotonicNowMs()),
      );
      this.pending.set(sequence, { resolve, reject, timer });
      this.call.write({ items, sequence });
    });
  }

  /** No new batches; the router ends the stream once it has answered the ones in flight. */
  retire(): void {
    if (this.retired) return;
    this.retired = true;
    this.closeIfIdle();
  }

  private closeIfIdle(): void {
    if (this.retired && this.pending.size === 0) {
      this.call.end();
      // The router answers end with OK at once; a stuck one is cut at the stream's deadline.
    }
  }

  private answer(response: LeanIncrementStreamResponse): void {
    this.answered = true;
    const sequence = Number(response.sequence);
    const pending = this.pending.get(sequence);
    // Answered after its deadline (already settled unknown), or a sequence this side never sent: nothing waits for it.
    if (pending === undefined) return;
    this.pending.delete(sequence);
    clearTimeout(pending.timer);
    if (response.error === null) pending.resolve(response.results);
    else pending.reject(batchError(response.error));
    this.closeIfIdle();
  }

  private failAll(failure: TallyError): void {
    this.retired = true;
    // Nothing was ever answered and the method is unknown: the router predates IncrementStream.
    const unsupported = failure.grpcCode === status.UNIMPLEMENTED && !this.answered;
    // The stream's status speaks for the batches in it only when the router
    // read none of them (refused on its headers: NOT_APPLIED); otherwise each
    // unanswered batch may have been applied.
    const error =
      unsupported || failure.certainlyNotApplied
        ? failure
        : new TallyError(failure.code, `the IncrementStream failed with this batch unanswered: ${failure.message}`, failure.grpcCode, {
            reason: ErrorReason.outcomeUnknown,
          });
    for (const [sequence, pending] of this.pending) {
      this.pending.delete(sequence);
      clearTimeout(pending.timer);
      pending.reject(unsupported ? new StreamUnsupported(failure) : error);
    }
    this.onClosed(this);
  }
}

/** A batch's error, as the unary IncrementBatch would have failed. */
function batchError(error: LeanIncrementStreamError): TallyError {
  const details = error.statusDetails.length > 0 ? decodeStatusDetails(error.statusDetails) : undefined;
  const reason = error.reason !== '' ? error.reason : details?.reason;
  return new TallyError(errorCodeOfGrpcStatus(error.code), error.message, error.code, {
    ...(reason === undefined ? {} : { reason }),
    ...(details?.retryAfterMs === undefined ? {} : { retryAfterMs: details.retryAfterMs }),
  });
}

interface Waiting {
  items: CoalescedItem[];
  deadline: number;
  resolve: (results: LeanIncrementResponse[]) => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout;
}

/**
 * The IncrementStream to one router: opened on first use, replaced after
 * incrementStreamLifetimeMs (the old one finishes its batches and closes),
 * and replaced when it fails. Batches go on the current stream, at most
 * streamBatchesInFlightMax at once (the router refuses more); the rest wait
 * here, in order, until a slot frees or their deadline passes (never sent).
 */
export class IncrementStreamSender {
  private current: OpenStream | undefined;
  private readonly waiting: Waiting[] = [];

  constructor(private readonly open: OpenIncrementStream) {}

  /** Batches in flight on the current stream. */
  get inFlight(): number {
    return this.current?.inFlight ?? 0;
  }

  send(items: CoalescedItem[], deadline: number): Promise<LeanIncrementResponse[]> {
    return new Promise((resolve, reject) => {
      const waiting: Waiting = {
        items,
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
                'deadline exceeded while the batch waited for a slot on the IncrementStream; it was not sent',
                undefined,
                {
                  reason: ErrorReason.notApplied,
                },
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
      if (stream.inFlight >= streamBatchesInFlightMax) return;
      const next = this.waiting.shift()!;
      clearTimeout(next.timer);
      stream
        .send(next.items, next.deadline)
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
      nowMs - current.openedAt < incrementStreamLifetimeMs &&
      deadline + streamDeadlineMarginMs <= current.deadline
    )
      return current;
    current?.retire();
    const streamDeadline = Math.max(nowMs + incrementStreamLifetimeMs, deadline) + streamDeadlineMarginMs;
    const opened = new OpenStream(this.open(streamDeadline), nowMs, streamDeadline, (stream) => {
      if (this.current === stream) this.current = undefined;
    });
    this.current = opened;
    return opened;
  }
}
