// Serves ShardNode's streams (ApplyStream, ReadShardsStream): each frame is
// checked, handed to the very function the unary RPC calls, and answered by
// its seq once that settles, in whatever order. A frame is never acted on
// unless it can be answered, and never answered twice.
import type { ServerDuplexStream, handleBidiStreamingCall } from '@grpc/grpc-js';
import { ErrorCode, ErrorReason, TallyError, toServiceError } from '../../wire/index.ts';
import { busyRetryDelayMs, malformedRefusalOf, nodeStreamFramesInProgressMax, type shardV1 } from '../../common/index.ts';
import { checkFrame, frameErrorOf, type DecodedFrame } from '../../wire/internal/index.ts';

export interface FrameAnswer<Response> {
  seq: number;
  response?: Response;
  error?: shardV1.FrameError;
}

/** The streams a node serves, so a shutdown can end them (a long-lived stream would otherwise hold the server open). */
export class FrameStreams {
  private readonly closers = new Set<() => void>();
  private closing = false;

  add(close: () => void): void {
    if (this.closing) close();
    else this.closers.add(close);
  }

  delete(close: () => void): void {
    this.closers.delete(close);
  }

  /** Every stream answers the frames it has begun, refuses the rest (NOT_APPLIED), and ends. */
  closeAll(): void {
    this.closing = true;
    for (const close of this.closers) close();
    this.closers.clear();
  }
}

export interface FrameHandlerOptions<Request, Response> {
  method: string;
  /** The unary RPC's body: the same validation, checks, commit and waiting. */
  handle: (request: Request) => Promise<Response> | Response;
  /** Why a frame's request cannot be served (its wire version), or undefined. */
  refusalOf: (request: Request) => string | undefined;
  streams: FrameStreams;
  /** Told the status code of every frame answered (0: a response). */
  onAnswered?: (code: number) => void;
}

/**
 * A bidi handler. A frame that fails to decode, or carries no seq, cannot be
 * answered: the stream then ends INVALID_ARGUMENT once the frames it has
 * begun are answered, and that frame applies nothing. A frame beyond
 * nodeStreamFramesInProgressMax is refused RESOURCE_EXHAUSTED, nothing applied.
 */
export function serveFrames<Request, Response>(
  options: FrameHandlerOptions<Request, Response>,
): handleBidiStreamingCall<DecodedFrame<Request>, FrameAnswer<Response>> {
  const { handle, refusalOf, streams } = options;
  return (call: ServerDuplexStream<DecodedFrame<Request>, FrameAnswer<Response>>) => {
    let inProgress = 0;
    let peerDone = false;
    let closing = false;
    let failure: TallyError | undefined;
    let finished = false;
    const finish = (): void => {
      if (finished || inProgress > 0 || !(peerDone || closing || failure !== undefined)) return;
      finished = true;
      streams.delete(close);
      if (call.cancelled) return;
      if (failure !== undefined) call.emit('error', toServiceError(failure));
      else if (closing && !peerDone)
        call.emit('error', toServiceError(new TallyError(ErrorCode.unavailable, 'node is shutting down: its streams end')));
      else call.end();
    };
    const close = (): void => {
      closing = true;
      finish();
    };
    streams.add(close);
    const answer = (seq: number, result: { response: Response } | { error: shardV1.FrameError }): void => {
      options.onAnswered?.('error' in result ? result.error.code! : 0);
      if (!call.cancelled && !finished) call.write({ seq, ...result });
    };
    const refuse = (seq: number, error: TallyError): void => answer(seq, { error: frameErrorOf(error) });
    call.on('data', (frame: DecodedFrame<Request>) => {
      if (finished || failure !== undefined) return;
      const malformed = malformedRefusalOf(frame);
      const checked = malformed === undefined ? checkFrame(frame) : { seq: 0, refusal: malformed };
      if (checked.refusal !== undefined) {
        if (checked.seq === 0) {
          failure = new TallyError(ErrorCode.invalidArgument, `${options.method}: ${checked.refusal.message}; the stream ends`);
          finish();
        } else refuse(checked.seq, checked.refusal);
        return;
      }
      const { seq, request } = checked;
      if (closing) {
        refuse(seq, new TallyError(ErrorCode.unavailable, 'node is shutting down', undefined, { reason: ErrorReason.notApplied }));
        return;
      }
      if (inProgress >= nodeStreamFramesInProgressMax) {
        refuse(
          seq,
          new TallyError(ErrorCode.resourceExhausted, `${inProgress} frames in progress on this stream; retry`, undefined, {
            reason: ErrorReason.notApplied,
            retryAfterMs: busyRetryDelayMs,
          }),
        );
        return;
      }
      const protocolRefusal = refusalOf(request);
      if (protocolRefusal !== undefined) {
        refuse(seq, new TallyError(ErrorCode.failedPrecondition, protocolRefusal));
        return;
      }
      inProgress++;
      let result: Promise<Response> | Response;
      try {
        result = handle(request);
      } catch (error) {
        result = Promise.reject(error);
      }
      Promise.resolve(result)
        .then(
          (response) => answer(seq, { response }),
          (error: unknown) => answer(seq, { error: frameErrorOf(error) }),
        )
        .finally(() => {
          inProgress--;
          finish();
        });
    });
    call.on('end', () => {
      peerDone = true;
      finish();
    });
    call.on('cancelled', () => {
      peerDone = true;
      streams.delete(close);
    });
  };
}
