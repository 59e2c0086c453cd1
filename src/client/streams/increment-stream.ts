// One IncrementStream to one router, for the coalescer (a StreamSender): a
// batch settles with the error a unary IncrementBatch would have failed
// with, and a stream that fails leaves each of its unanswered batches of
// unknown outcome (unless the router said it read nothing), for the
// coalescer's resend rule.
import { status, type ClientDuplexStream } from '@grpc/grpc-js';
import { ErrorCode, TallyError, ErrorReason, incrementStreamLifetimeMs, streamBatchesInFlightMax } from '../../wire/index.ts';
import type { IncrementStreamRequestInput, LeanIncrementStreamResponse, LeanIncrementResponse } from '../../wire/index.ts';
import type { CoalescedItem } from './increment-coalescer.ts';
import { StreamSender, type ClientStreamKind } from './stream-sender.ts';

export type IncrementStreamCall = ClientDuplexStream<IncrementStreamRequestInput, LeanIncrementStreamResponse>;

/** Opens an IncrementStream that the server ends by deadline (monotonic ms) at the latest. */
export type OpenIncrementStream = (deadline: number) => IncrementStreamCall;

/** Thrown by send() when the router does not serve IncrementStream (UNIMPLEMENTED): nothing was read, so nothing applied. */
export class StreamUnsupported extends Error {
  constructor(readonly failure: TallyError) {
    super(`IncrementStream is not served: ${failure.message}`);
  }
}

const outcomeUnknown = { reason: ErrorReason.outcomeUnknown };

const incrementStreamKind: ClientStreamKind<
  CoalescedItem[],
  LeanIncrementResponse[],
  IncrementStreamRequestInput,
  LeanIncrementStreamResponse
> = {
  name: 'IncrementStream',
  unit: 'batch',
  lifetimeMs: incrementStreamLifetimeMs,
  inFlightMax: streamBatchesInFlightMax,
  requestOf: (items, sequence) => ({ items, sequence }),
  resultOf: (answer) => answer.results,
  // A batch still unanswered when the stream ends is unknown.
  endedError: (message) => new TallyError(ErrorCode.unavailable, message, status.UNAVAILABLE, outcomeUnknown),
  answerTimeoutError: (message) => new TallyError(ErrorCode.deadlineExceeded, message, undefined, outcomeUnknown),
  slotTimeoutError: (message) => new TallyError(ErrorCode.deadlineExceeded, message, undefined, { reason: ErrorReason.notApplied }),
  // The stream's status speaks for the batches in it only when the router
  // read none of them (refused on its headers: NOT_APPLIED); otherwise each
  // unanswered batch may have been applied.
  unansweredError: (failure, message) =>
    failure.certainlyNotApplied ? failure : new TallyError(failure.code, message, failure.grpcCode, outcomeUnknown),
  unsupported: (failure) => new StreamUnsupported(failure),
};

/**
 * The IncrementStream to one router: opened on first use, replaced after
 * incrementStreamLifetimeMs and when it fails; at most
 * streamBatchesInFlightMax batches on it, the rest waiting in order.
 */
export class IncrementStreamSender extends StreamSender<
  CoalescedItem[],
  LeanIncrementResponse[],
  IncrementStreamRequestInput,
  LeanIncrementStreamResponse
> {
  constructor(open: OpenIncrementStream) {
    super(open, incrementStreamKind);
  }
}
