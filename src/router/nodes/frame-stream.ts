// One long-lived stream to one node (ApplyStream or ReadShardsStream):
// opened lazily, reused by every frame, replaced when it breaks or stalls.
// Flow control by frames and bytes in flight; a deadline per frame. Must
// never report a frame as not applied once it was written: a broken or
// abandoned stream fails its frames in flight with an unknown outcome.
import { Metadata, status, type ServiceError, type StatusObject } from '@grpc/grpc-js';
import { ErrorCode, TallyError, ErrorReason } from '../../wire/index.ts';
import { Fifo, busyRetryDelayMs, nodeStreamFrameDeadlineMsMax, type shardV1 } from '../../common/index.ts';
import { serviceErrorOfFrame } from '../../wire/internal/index.ts';
import { SequenceTable } from './sequence-table.ts';

/** An answer as proto-loader decodes it: exactly one of response and error. */
export interface DecodedAnswer<Response> {
  seq: number;
  response: Response | null;
  error: shardV1.FrameError__Output | null;
}

/** What the stream needs of a grpc-js bidi call (a fake in tests). */
export interface FrameCall<Request> {
  write(frame: { seq: number; request: Request }): void;
  /** Abandons the call: the node sees it cancelled. */
  cancel(): void;
}

export interface FrameCallHandlers<Response> {
  onAnswer(answer: DecodedAnswer<Response>): void;
  /** The call ended, with its status (OK too: a node that ended the stream). */
  onEnd(ended: { code: number; details: string; metadata?: Metadata }): void;
}

export interface FrameStreamLimits {
  framesInFlightMax: number;
  bytesInFlightMax: number;
  queuedFramesMax: number;
}

export interface FrameStreamObserver {
  /** An answer that matched no frame in flight: ignored. */
  onStrayAnswer?(address: string): void;
  /** The stream was replaced: 'deadline' (a frame stalled), 'broken' (it ended). */
  onAbandoned?(address: string, why: 'deadline' | 'broken'): void;
}

/** The node does not serve this stream (an older node): nothing of the frames was applied; send them unary. */
export class StreamUnsupportedError extends TallyError {
  constructor(address: string) {
    super(ErrorCode.unavailable, `node ${address} serves no stream`, undefined, { reason: ErrorReason.notApplied });
  }
}

interface Pending<Request, Response> {
  request: Request;
  sizeBytes: number;
  deadlineMs: number;
  resolve: (response: Response) => void;
  reject: (error: ServiceError | TallyError) => void;
  timer?: NodeJS.Timeout;
}

/** A failure that the caller maps as a unary call's (nodeCallError): an unknown outcome unless the code says otherwise. */
function streamFailure(code: status, details: string): ServiceError {
  return Object.assign(new Error(`${code} ${status[code]}: ${details}`), { code, details, metadata: new Metadata() });
}

interface OpenCall<Request, Response> {
  call: FrameCall<Request>;
  table: SequenceTable<Pending<Request, Response>>;
}

export class FrameStream<Request, Response> {
  private current: OpenCall<Request, Response> | undefined;
  /** The last call was abandoned for a stalled frame: the next one goes on a new connection. */
  private stalled = false;
  private readonly queue = new Fifo<Pending<Request, Response>>();
  private bytesInFlight = 0;
  /** Set when the node answered UNIMPLEMENTED: callers go unary. */
  unsupported = false;

  constructor(
    readonly address: string,
    /**
     * Opens a call. fresh: the last one was abandoned because a frame
     * stalled, so its connection may be stalled too (a blackhole keeps a
     * TCP connection looking alive until keepalive gives up on it): open
     * the next call on a new connection.
     */
    private readonly open: (handlers: FrameCallHandlers<Response>, fresh: boolean) => FrameCall<Request>,
    private readonly limits: FrameStreamLimits,
    private readonly observer: FrameStreamObserver = {},
  ) {}

  get framesInFlight(): number {
    return this.current?.table.size ?? 0;
  }

  /**
   * Sends one frame; resolves with the node's response, or rejects with the
   * ServiceError a unary call would have failed with (a frame error, a
   * DEADLINE_EXCEEDED, a broken stream as UNAVAILABLE: outcome unknown),
   * a StreamUnsupportedError, or a TallyError when the queue is full
   * (nothing sent).
   */
  send(request: Request, sizeBytes: number, deadlineMs: number): Promise<Response> {
    if (this.unsupported) return Promise.reject(new StreamUnsupportedError(this.address));
    if (this.queue.length >= this.limits.queuedFramesMax)
      return Promise.reject(
        new TallyError(ErrorCode.resourceExhausted, `node ${this.address} has ${this.queue.length} frames queued; try again`, undefined, {
          reason: ErrorReason.notApplied,
          retryAfterMs: busyRetryDelayMs,
        }),
      );
    return new Promise((resolve, reject) => {
      this.queue.push({ request, sizeBytes, deadlineMs: Math.min(deadlineMs, nodeStreamFrameDeadlineMsMax), resolve, reject });
      this.pump();
    });
  }

  /** Abandons the stream: frames in flight fail (outcome unknown), queued ones are refused (nothing sent). */
  close(): void {
    this.abandon(streamFailure(status.UNAVAILABLE, `stream to node ${this.address} closed`));
    for (let waiting = this.queue.shift(); waiting !== undefined; waiting = this.queue.shift())
      waiting.reject(
        new TallyError(ErrorCode.unavailable, `node ${this.address}: router closing`, undefined, { reason: ErrorReason.notApplied }),
      );
  }

  private pump(): void {
    while (this.queue.length > 0) {
      const next = this.queue.peek()!;
      const inFlight = this.framesInFlight;
      if (inFlight >= this.limits.framesInFlightMax) return;
      // A frame larger than the byte budget still goes alone.
      if (inFlight > 0 && this.bytesInFlight + next.sizeBytes > this.limits.bytesInFlightMax) return;
      if (this.current !== undefined && !this.current.table.hasRoom) {
        // Every seq of this stream used: replace it once its frames are settled.
        if (inFlight > 0) return;
        this.current.call.cancel();
        this.current = undefined;
      }
      this.queue.shift();
      this.write(this.current ?? this.openCall(), next);
    }
  }

  private openCall(): OpenCall<Request, Response> {
    // The handlers name the call they belong to: events of a replaced call are told apart from the current one's.
    const handlers: FrameCallHandlers<Response> = {
      onAnswer: (answer) => this.onAnswer(opened, answer),
      onEnd: (ended) => this.onEnd(opened, ended),
    };
    const opened: OpenCall<Request, Response> = { table: new SequenceTable(), call: this.open(handlers, this.stalled) };
    this.stalled = false;
    this.current = opened;
    return opened;
  }

  private write(opened: OpenCall<Request, Response>, pending: Pending<Request, Response>): void {
    const seq = opened.table.add(pending);
    this.bytesInFlight += pending.sizeBytes;
    pending.timer = setTimeout(() => this.onDeadline(opened, seq), pending.deadlineMs);
    opened.call.write({ seq, request: pending.request });
  }

  private settle(pending: Pending<Request, Response>): void {
    clearTimeout(pending.timer);
    this.bytesInFlight -= pending.sizeBytes;
  }

  private onAnswer(opened: OpenCall<Request, Response>, answer: DecodedAnswer<Response>): void {
    // An answer on a stream already replaced matches nothing in flight.
    const pending = opened === this.current ? opened.table.take(answer.seq) : undefined;
    if (pending === undefined) {
      this.observer.onStrayAnswer?.(this.address);
      return;
    }
    this.settle(pending);
    if (answer.error !== null && answer.error !== undefined) pending.reject(serviceErrorOfFrame(answer.error));
    else if (answer.response === null || answer.response === undefined)
      pending.reject(streamFailure(status.INTERNAL, `node ${this.address} answered frame ${answer.seq} with neither response nor error`));
    else pending.resolve(answer.response);
    this.pump();
  }

  private onDeadline(opened: OpenCall<Request, Response>, seq: number): void {
    if (opened !== this.current) return;
    const late = opened.table.forget(seq);
    if (late === undefined) return;
    this.settle(late);
    // As a unary call's timeout: the frame may have been applied.
    late.reject(streamFailure(status.DEADLINE_EXCEEDED, `frame ${seq} not answered in ${late.deadlineMs} ms`));
    // A stalled stream is not waited on (keepalive would take seconds): replace it.
    this.observer.onAbandoned?.(this.address, 'deadline');
    this.stalled = true;
    // Its other frames were not answered in time either: the same status as a unary timeout (no failover nudge).
    this.abandon(streamFailure(status.DEADLINE_EXCEEDED, `stream to node ${this.address} abandoned: frame ${seq} stalled`));
    this.pump();
  }

  private onEnd(opened: OpenCall<Request, Response>, ended: { code: number; details: string }): void {
    if (opened !== this.current) return;
    if (ended.code === status.UNIMPLEMENTED) {
      // The node has no such method: it refused the stream before reading a frame.
      this.unsupported = true;
      this.current = undefined;
      for (const pending of opened.table.takeAll()) {
        this.settle(pending);
        pending.reject(new StreamUnsupportedError(this.address));
      }
      for (let waiting = this.queue.shift(); waiting !== undefined; waiting = this.queue.shift())
        waiting.reject(new StreamUnsupportedError(this.address));
      return;
    }
    if (opened.table.size > 0) this.observer.onAbandoned?.(this.address, 'broken');
    // grpc-js found no connection for the stream: no frame left this process. Its words
    // are kept, so nodeCallError reads them as a unary call's: not applied.
    const neverConnected = ended.code === status.UNAVAILABLE && ended.details.startsWith('No connection established');
    this.abandon(
      streamFailure(
        status.UNAVAILABLE,
        neverConnected ? ended.details : `stream to node ${this.address} broke (${status[ended.code] ?? ended.code}: ${ended.details})`,
      ),
    );
    this.pump();
  }

  /** Drops the current call; every frame in flight fails with failure (UNAVAILABLE or DEADLINE_EXCEEDED: outcome unknown either way). */
  private abandon(failure: ServiceError): void {
    const opened = this.current;
    if (opened === undefined) return;
    this.current = undefined;
    opened.call.cancel();
    for (const pending of opened.table.takeAll()) {
      this.settle(pending);
      pending.reject(failure);
    }
  }
}

/** The handlers wired to a grpc-js bidi call: answers, and the one status it ends with. */
export function frameCallOf<Request, Response>(
  call: {
    write(frame: unknown): boolean;
    cancel(): void;
    on(event: 'data', listener: (answer: DecodedAnswer<Response>) => void): unknown;
    on(event: 'status', listener: (ended: StatusObject) => void): unknown;
    on(event: 'error', listener: (error: Error) => void): unknown;
  },
  handlers: FrameCallHandlers<Response>,
): FrameCall<Request> {
  call.on('data', (answer) => handlers.onAnswer(answer));
  // The status event follows it with the same code: handled there, once.
  call.on('error', () => undefined);
  call.on('status', (ended) => handlers.onEnd(ended));
  return {
    write: (frame) => void call.write(frame),
    cancel: () => call.cancel(),
  };
}
