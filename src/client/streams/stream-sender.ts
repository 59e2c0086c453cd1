// One kind of sequenced stream to one router (IncrementStream's batches,
// ReadStream's pages): each unit is a message with a sequence number,
// answered by that number in any order. The sender opens the stream on first
// use, replaces it after its lifetime or when it fails, keeps at most
// inFlightMax units on it and queues the rest until a slot frees or their
// deadline passes (never sent). It decides nothing about resending: what a
// unit's failure means is its kind's (ClientStreamKind).
import { status, type ClientDuplexStream } from '@grpc/grpc-js';
import { monotonicNowMs, TallyError, errorCodeOfGrpcStatus, fromServiceError, decodeStatusDetails } from '../../wire/index.ts';
import type { LeanIncrementStreamError } from '../../wire/index.ts';

/** A stream's answer to one unit: its sequence number, and its results or its error. */
export interface StreamAnswer {
  sequence: number | bigint | string;
  error: LeanIncrementStreamError | null;
}

/** What one kind of stream sends, reads back, and makes of failures. */
export interface ClientStreamKind<Unit, Result, Request, Answer extends StreamAnswer> {
  /** The method's name and its unit's, in messages: 'IncrementStream' and 'batch'. */
  readonly name: string;
  readonly unit: string;
  readonly lifetimeMs: number;
  /** Units in flight on one stream (the router refuses more). */
  readonly inFlightMax: number;
  requestOf(unit: Unit, sequence: number): Request;
  resultOf(answer: Answer): Result;
  /** The error of a unit the stream ended without answering (ended OK after the client half-closed). */
  endedError(message: string): TallyError;
  /** The error of a unit whose deadline passed waiting for its answer. */
  answerTimeoutError(message: string): TallyError;
  /** The error of a unit whose deadline passed waiting for a slot (never sent). */
  slotTimeoutError(message: string): TallyError;
  /** The error of each unit unanswered when the stream failed with `failure`. */
  unansweredError(failure: TallyError, message: string): TallyError;
  /** Thrown by send() when the router does not serve the method (UNIMPLEMENTED, nothing ever answered). */
  unsupported(failure: TallyError): Error;
}

/** A stream is opened to outlive its units' deadlines by this much: a unit times out on its own timer, not with the stream. */
const streamDeadlineMarginMs = 1_000;

interface Pending<Result> {
  resolve: (result: Result) => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout;
}

/** One open stream: its sequence numbers, its units awaiting answers, and how it ends. */
class OpenStream<Unit, Result, Request, Answer extends StreamAnswer> {
  private readonly pending = new Map<number, Pending<Result>>();
  private nextSequence = 1;
  private answered = false;
  /** No new unit goes on it: it has failed, or is finishing what it carries. */
  retired = false;

  constructor(
    private readonly kind: ClientStreamKind<Unit, Result, Request, Answer>,
    private readonly call: ClientDuplexStream<Request, Answer>,
    readonly openedAt: number,
    readonly deadline: number,
    private readonly onClosed: (stream: OpenStream<Unit, Result, Request, Answer>) => void,
  ) {
    call.on('data', (answer: Answer) => this.answer(answer));
    call.on('error', (error: unknown) => this.failAll(fromServiceError(error)));
    // Ended with OK: only after the client half-closed.
    call.on('end', () => this.failAll(kind.endedError(`the ${kind.name} ended before answering this ${kind.unit}`)));
  }

  get inFlight(): number {
    return this.pending.size;
  }

  /** Sends one unit; settles with its result, its error, or the stream's. */
  send(unit: Unit, deadline: number): Promise<Result> {
    const sequence = this.nextSequence++;
    return new Promise((resolve, reject) => {
      // The unit's own deadline, as a unary call's would be.
      const timer = setTimeout(
        () => {
          if (!this.pending.delete(sequence)) return;
          reject(this.kind.answerTimeoutError(`deadline exceeded waiting for the ${this.kind.name} to answer this ${this.kind.unit}`));
          this.closeIfIdle();
        },
        Math.max(0, deadline - monotonicNowMs()),
      );
      this.pending.set(sequence, { resolve, reject, timer });
      this.call.write(this.kind.requestOf(unit, sequence));
    });
  }

  /** No new units; the router ends the stream once it has answered the ones in flight. */
  retire(): void {
    if (this.retired) return;
    this.retired = true;
    this.closeIfIdle();
  }

  // The router answers end with OK at once; a stuck one is cut at the stream's deadline.
  private closeIfIdle(): void {
    if (this.retired && this.pending.size === 0) this.call.end();
  }

  private answer(answer: Answer): void {
    this.answered = true;
    const sequence = Number(answer.sequence);
    const pending = this.pending.get(sequence);
    // Answered after its deadline (already settled), or a sequence this side never sent: nothing waits for it.
    if (pending === undefined) return;
    this.pending.delete(sequence);
    clearTimeout(pending.timer);
    if (answer.error === null) pending.resolve(this.kind.resultOf(answer));
    else pending.reject(unitError(answer.error));
    this.closeIfIdle();
  }

  private failAll(failure: TallyError): void {
    this.retired = true;
    // Nothing was ever answered and the method is unknown: the router predates it.
    const unsupported = failure.grpcCode === status.UNIMPLEMENTED && !this.answered;
    const message = `the ${this.kind.name} failed with this ${this.kind.unit} unanswered: ${failure.message}`;
    const error = this.kind.unansweredError(failure, message);
    for (const [sequence, pending] of this.pending) {
      this.pending.delete(sequence);
      clearTimeout(pending.timer);
      pending.reject(unsupported ? this.kind.unsupported(failure) : error);
    }
    this.onClosed(this);
  }
}

/** A unit's error, as the unary call it repeats would have failed. */
function unitError(error: LeanIncrementStreamError): TallyError {
  const details = error.statusDetails.length > 0 ? decodeStatusDetails(error.statusDetails) : undefined;
  const reason = error.reason !== '' ? error.reason : details?.reason;
  return new TallyError(errorCodeOfGrpcStatus(error.code), error.message, error.code, {
    ...(reason === undefined ? {} : { reason }),
    ...(details?.retryAfterMs === undefined ? {} : { retryAfterMs: details.retryAfterMs }),
  });
}

interface Waiting<Unit, Result> {
  unit: Unit;
  deadline: number;
  resolve: (result: Result) => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout;
}

/**
 * The stream of one kind to one router: opened on first use, replaced after
 * the kind's lifetime (the old one finishes its units and closes) and when
 * it fails. Units go on the current stream, at most inFlightMax at once; the
 * rest wait here, in order, until a slot frees or their deadline passes.
 */
export class StreamSender<Unit, Result, Request, Answer extends StreamAnswer> {
  private current: OpenStream<Unit, Result, Request, Answer> | undefined;
  private readonly waiting: Waiting<Unit, Result>[] = [];

  constructor(
    private readonly open: (deadline: number) => ClientDuplexStream<Request, Answer>,
    private readonly kind: ClientStreamKind<Unit, Result, Request, Answer>,
  ) {}

  /** Units in flight on the current stream. */
  get inFlight(): number {
    return this.current?.inFlight ?? 0;
  }

  send(unit: Unit, deadline: number): Promise<Result> {
    return new Promise((resolve, reject) => {
      const waiting: Waiting<Unit, Result> = {
        unit,
        deadline,
        resolve,
        reject,
        timer: setTimeout(
          () => {
            const index = this.waiting.indexOf(waiting);
            if (index < 0) return;
            this.waiting.splice(index, 1);
            const { name, unit: unitName } = this.kind;
            reject(this.kind.slotTimeoutError(`deadline exceeded while the ${unitName} waited for a slot on the ${name}; it was not sent`));
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
      if (stream.inFlight >= this.kind.inFlightMax) return;
      const next = this.waiting.shift()!;
      clearTimeout(next.timer);
      stream
        .send(next.unit, next.deadline)
        .then(next.resolve, next.reject)
        .finally(() => this.pump());
    }
  }

  private streamFor(deadline: number): OpenStream<Unit, Result, Request, Answer> {
    const nowMs = monotonicNowMs();
    const current = this.current;
    const { lifetimeMs } = this.kind;
    if (
      current !== undefined &&
      !current.retired &&
      nowMs - current.openedAt < lifetimeMs &&
      deadline + streamDeadlineMarginMs <= current.deadline
    )
      return current;
    current?.retire();
    const streamDeadline = Math.max(nowMs + lifetimeMs, deadline) + streamDeadlineMarginMs;
    const opened = new OpenStream(this.kind, this.open(streamDeadline), nowMs, streamDeadline, (stream) => {
      if (this.current === stream) this.current = undefined;
    });
    this.current = opened;
    return opened;
  }
}
