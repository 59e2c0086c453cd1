// The deadline of the oldest replication frame in flight: no answer within
// callTimeoutMs of its turn, and the replicator abandons the stream (and its
// connection) rather than wait on keepalive. It only watches: the
// replicator decides what a stalled stream means.
import type { MonotonicClock } from '../../wire/index.ts';
import type { FrameInFlight } from './replicate-stream.ts';

export class FrameDeadline {
  private timer: NodeJS.Timeout | undefined;
  /** When the stream last answered a frame (monotonic). */
  private lastAnswerMs = 0;

  constructor(
    private readonly callTimeoutMs: number,
    private readonly now: MonotonicClock,
    /** The oldest frame in flight, if any. */
    private readonly oldest: () => FrameInFlight | undefined,
    /** The oldest frame went unanswered past its deadline. */
    private readonly onStalled: () => void,
  ) {}

  /** A frame was answered: the next one's turn begins now. */
  answered(): void {
    this.lastAnswerMs = this.now();
    this.arm();
  }

  /** Watches the oldest frame in flight (no-op while a watch is armed or nothing is in flight). */
  arm(): void {
    if (this.timer !== undefined) return;
    const oldest = this.oldest();
    if (oldest === undefined) return;
    const remainingMs = Math.max(1, this.waitingSinceMs(oldest) + this.callTimeoutMs - this.now());
    this.timer = setTimeout(() => setImmediate(() => this.check()), remainingMs);
    this.timer.unref();
  }

  clear(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  /**
   * When the oldest frame in flight began to wait: when it was sent, or when
   * the frame ahead of it was answered (the follower handles them one by
   * one, so a frame queued behind others is not late for having waited).
   */
  private waitingSinceMs(oldest: FrameInFlight): number {
    return Math.max(oldest.sentMs, this.lastAnswerMs);
  }

  /**
   * Run after the event loop's poll phase (setImmediate), not in its timers
   * phase: when this process was busy past the deadline (a checkpoint round,
   * a long commit), answers that arrived meanwhile are read first, so a
   * frame is abandoned only when the follower truly has not answered.
   */
  private check(): void {
    this.timer = undefined;
    const stalled = this.oldest();
    if (stalled === undefined) return;
    if (this.now() - this.waitingSinceMs(stalled) < this.callTimeoutMs) {
      this.arm();
      return;
    }
    this.onStalled();
  }
}
