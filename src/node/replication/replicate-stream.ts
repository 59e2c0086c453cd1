// The primary's end of one ReplicateStream: frames out with a seq each,
// answers in by seq, in order (the follower handles frames as they arrive).
// It keeps no replication state: the replicator decides what a frame holds
// and what an answer means. An answer that is not for the oldest frame in
// flight (out of order, answered twice, made up) breaks the stream: nothing
// more on it can be trusted to line up.
import { status, type ClientDuplexStream, type ServiceError } from '@grpc/grpc-js';
import { frameSeqMax, serviceErrorOfFrame } from '../../wire/internal/index.ts';
import { type shardV1 } from '../../common/index.ts';

export interface FrameInFlight {
  seq: number;
  /** The last lsn the frame carries (its prev_lsn for a probe). */
  lastLsn: bigint;
  sizeBytes: number;
  sentMs: number;
  truncate: boolean;
}

export interface ReplicateStreamEvents {
  onAnswer(frame: FrameInFlight, answer: { response: shardV1.AppendEntriesResponse__Output } | { error: ServiceError }): void;
  /** The stream ended or broke; every frame in flight is left without an answer. */
  onBroken(error: ServiceError): void;
}

export class ReplicationStream {
  private readonly frames: FrameInFlight[] = [];
  private head = 0;
  private nextSeq = 1;
  private bytes = 0;
  private broken = false;

  constructor(
    private readonly call: ClientDuplexStream<shardV1.ReplicateFrame, shardV1.ReplicateAnswer__Output>,
    private readonly events: ReplicateStreamEvents,
  ) {
    call.on('data', (answer: shardV1.ReplicateAnswer__Output) => this.onData(answer));
    call.on('error', (error: ServiceError) => this.break(error));
    call.on('end', () => this.break(brokenError(status.UNAVAILABLE, 'the follower ended the replication stream')));
  }

  get framesInFlight(): number {
    return this.frames.length - this.head;
  }

  get bytesInFlight(): number {
    return this.bytes;
  }

  /** The oldest frame still unanswered. */
  oldest(): FrameInFlight | undefined {
    return this.frames[this.head];
  }

  /** The newest frame still unanswered. */
  newest(): FrameInFlight | undefined {
    return this.framesInFlight > 0 ? this.frames[this.frames.length - 1] : undefined;
  }

  /** False once the stream broke, or when its seqs are spent: open another. */
  get usable(): boolean {
    return !this.broken && this.nextSeq < frameSeqMax;
  }

  send(request: shardV1.AppendEntriesRequest, frame: Omit<FrameInFlight, 'seq'>): void {
    const seq = this.nextSeq++;
    this.frames.push({ ...frame, seq });
    this.bytes += frame.sizeBytes;
    this.call.write({ seq, request });
  }

  /** Abandons the stream (a stalled frame, a new session): its frames in flight stay unanswered. */
  cancel(): void {
    if (this.broken) return;
    this.broken = true;
    this.call.cancel();
  }

  private onData(answer: shardV1.ReplicateAnswer__Output): void {
    if (this.broken) return;
    const frame = this.frames[this.head];
    if (frame === undefined || answer.seq !== frame.seq) {
      this.fail(
        brokenError(status.INTERNAL, `replication answer for frame ${answer.seq} when frame ${frame?.seq ?? 'none'} is the oldest`),
      );
      return;
    }
    this.frames[this.head] = undefined as never;
    this.head++;
    this.bytes -= frame.sizeBytes;
    if (this.head > 256 && 2 * this.head > this.frames.length) {
      this.frames.splice(0, this.head);
      this.head = 0;
    }
    if (answer.error !== null && answer.error !== undefined) this.events.onAnswer(frame, { error: serviceErrorOfFrame(answer.error) });
    else if (answer.response !== null && answer.response !== undefined) this.events.onAnswer(frame, { response: answer.response });
    else this.fail(brokenError(status.INTERNAL, `replication answer ${answer.seq} carries neither a response nor an error`));
  }

  private fail(error: ServiceError): void {
    this.cancel();
    this.events.onBroken(error);
  }

  private break(error: ServiceError): void {
    if (this.broken) return;
    this.broken = true;
    this.events.onBroken(error);
  }
}

function brokenError(code: status, details: string): ServiceError {
  return Object.assign(new Error(`${code} ${status[code]}: ${details}`), { code, details, metadata: undefined as never });
}
