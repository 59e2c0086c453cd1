// ReadStream: pages of reads on one bidi stream, each answered by its
// sequence number with what ReadMany would have answered. Only the stream's
// bookkeeping is the StreamSession's (sequence numbers, bounds, how it ends);
// validation, consistency, the read and its metrics are ReadMany's own
// (readPage). A read changes nothing: every failure is NOT_APPLIED.
import type { ServerDuplexStream } from '@grpc/grpc-js';
import { StreamSession, type StreamKind } from './stream-session.ts';
import {
  toServiceError,
  toStatusParts,
  type LeanReadManyRequest,
  type LeanReadStreamRequest,
  type ReadManyResponseInput,
  type ReadStreamResponseInput,
} from '../../../wire/index.ts';

/** ReadMany's handler body: validates, reads, counts; throws the error the unary call fails with. */
export type ReadPage = (request: LeanReadManyRequest, call: { readonly cancelled: boolean }) => Promise<ReadManyResponseInput>;

export interface ReadStreamLimits {
  /** Pages of one stream worked on at once (readStreamPagesInFlightMax). */
  pagesInFlightMax: number;
  /** Stream pages worked on at once over all streams (routerReadStreamPagesInFlightMax). */
  routerPagesInFlightMax: number;
}

type StreamCall = ServerDuplexStream<LeanReadStreamRequest, ReadStreamResponseInput>;

/** The handler of every ReadStream of one router; the router-wide bound is shared by its streams. */
export function createReadStreamHandler(readPage: ReadPage, limits: ReadStreamLimits, onInFlight: (pages: number) => void = () => {}) {
  const kind: StreamKind<LeanReadStreamRequest, ReadManyResponseInput, ReadStreamResponseInput> = {
    units: 'pages',
    inFlightMax: limits.pagesInFlightMax,
    routerInFlightMax: limits.routerPagesInFlightMax,
    routerCount: { inFlight: 0 },
    work: readPage,
    answerOf: (sequence, response) => ({ values: response.values, sequence }),
    refusalOf: (sequence, error) => ({ sequence, error: pageErrorOf(error) }),
    onRefused: () => {},
    onInFlight,
    // A read changes nothing, so every page still unanswered may be sent again.
    streamFailure: (error) => toServiceError(error, true),
  };
  return (call: StreamCall): void => {
    new StreamSession(call, kind).start();
  };
}

function pageErrorOf(error: unknown): ReadStreamResponseInput['error'] {
  const { code, details, reason, statusDetails } = toStatusParts(error, true);
  return { code, message: details, reason, statusDetails };
}
