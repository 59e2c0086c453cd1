// One ReadStream to one router, for readMany() calls that overlap (a
// StreamSender): a page settles with the error a unary ReadMany would have
// failed with, or with the stream's. A read changes nothing, so a page left
// unanswered by a failed stream is simply not read (NOT_APPLIED), for the
// caller's resend rule.
import type { ClientDuplexStream } from '@grpc/grpc-js';
import { ErrorCode, TallyError, ErrorReason, readStreamLifetimeMs, readStreamPagesInFlightMax } from '../../wire/index.ts';
import type { LeanReadResponse, LeanReadStreamResponse, ReadStreamRequestInput } from '../../wire/index.ts';
import { StreamSender, type ClientStreamKind } from './stream-sender.ts';

export type ReadStreamCall = ClientDuplexStream<ReadStreamRequestInput, LeanReadStreamResponse>;

/** Opens a ReadStream that the server ends by deadline (monotonic ms) at the latest. */
export type OpenReadStream = (deadline: number) => ReadStreamCall;

/** A page to read: ReadMany's request. */
export interface ReadPageRequest {
  counters: string[];
  consistency: 'EXACT' | 'CACHED';
  scope?: 'SCOPE_GLOBAL';
}

/** Thrown by send() when the router does not serve ReadStream (UNIMPLEMENTED): the caller reads with unary ReadMany. */
export class ReadStreamUnsupported extends Error {
  constructor(readonly failure: TallyError) {
    super(`ReadStream is not served: ${failure.message}`);
  }
}

const readStreamKind: ClientStreamKind<ReadPageRequest, LeanReadResponse[], ReadStreamRequestInput, LeanReadStreamResponse> = {
  name: 'ReadStream',
  unit: 'page',
  lifetimeMs: readStreamLifetimeMs,
  inFlightMax: readStreamPagesInFlightMax,
  requestOf: (page, sequence) => ({ counters: page.counters, consistency: page.consistency, sequence }),
  resultOf: (answer) => answer.values,
  endedError: (message) => new TallyError(ErrorCode.unavailable, message),
  answerTimeoutError: (message) => new TallyError(ErrorCode.deadlineExceeded, message),
  slotTimeoutError: (message) => new TallyError(ErrorCode.deadlineExceeded, message),
  unansweredError: (failure, message) => new TallyError(failure.code, message, failure.grpcCode, { reason: ErrorReason.notApplied }),
  unsupported: (failure) => new ReadStreamUnsupported(failure),
};

/**
 * The ReadStream to one router: opened on first use, replaced after
 * readStreamLifetimeMs and when it fails; at most readStreamPagesInFlightMax
 * pages on it, the rest waiting in order until a slot frees or their deadline passes.
 */
export class ReadStreamSender extends StreamSender<ReadPageRequest, LeanReadResponse[], ReadStreamRequestInput, LeanReadStreamResponse> {
  constructor(open: OpenReadStream) {
    super(open, readStreamKind);
  }
}
