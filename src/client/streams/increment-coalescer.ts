// Coalescing of concurrent increment calls: while coalescedCallsInFlightMax
// batches are in flight (on the router's IncrementStream, or as IncrementBatch
// calls: the transport's choice), later calls queue and leave together in the
// next one (like the router's node sender), each caller answered on its own.
// Every caller keeps the unary path's deadline, retry and error behaviour;
// this file must never retry what the unary path would not, and never sends
// an unkeyed item again unless the router said NOT_APPLIED.
import { status } from '@grpc/grpc-js';
import {
  monotonicNowMs,
  ErrorCode,
  TallyError,
  fromServiceError,
  ErrorReason,
  batchItemsMax,
  coalescedCallsInFlightMax,
  coalescedQueueItemsMax,
  newCountersPerCallMax,
} from '../../wire/index.ts';
import type { counterV1 } from '../counter-proto.ts';

/** One caller's increment, validated and in wire form. */
export interface CoalescedItem {
  counter: string;
  amount: string | number;
  idempotencyKey: Buffer;
}

export interface CoalescedResult {
  applied: boolean;
  shard: number;
}

/** How a batch (a stream message or an IncrementBatch call) and a lone increment reach the router; each settles with the unary call's TallyError. */
export interface CoalescerTransport {
  incrementBatch(items: CoalescedItem[], deadline: number): Promise<counterV1.IncrementBatchResponse__Output>;
  increment(item: CoalescedItem, deadline: number): Promise<counterV1.IncrementResponse__Output>;
}

/** The unary path's retry rule, shared so both paths decide alike. */
export interface RetryPolicy {
  attemptsMax: number;
  attemptTimeoutMs: number;
  /** Whether a keyed call that failed with failure on attempt (1-based) is tried again, and after how long; undefined: not. */
  /** The backoff before the next attempt of a failed item, or undefined when it is not retried (resend-rule). */
  retryAfterMs(failure: TallyError, attempt: number, deadline: number, keyed: boolean): number | undefined;
}

interface Entry {
  item: CoalescedItem;
  keyed: boolean;
  /** The caller's deadline (monotonic ms): the entry is answered by then. */
  deadline: number;
  /** Attempts made so far. */
  attempts: number;
  /** Set once a batch refused for some item's sake: this entry is sent on its own from then on. */
  alone: boolean;
  settled: boolean;
  resolve: (result: CoalescedResult) => void;
  reject: (error: TallyError) => void;
}

// Failures every caller of the client would get alike (its token): no item
// caused them and nothing was applied, so a batch is not taken apart.
const sharedFailures = new Set<number>([status.UNAUTHENTICATED, status.PERMISSION_DENIED, status.CANCELLED]);
const retryableStatuses = new Set<number>([status.UNAVAILABLE, status.DEADLINE_EXCEEDED]);

export class IncrementCoalescer {
  private queue: Entry[] = [];
  private inFlight = 0;
  private pumpScheduled = false;
  private closed = false;
  /** Fires at or before the earliest deadline of a queued entry. */
  private expiryTimer: NodeJS.Timeout | undefined;
  private expiryAt = Infinity;

  constructor(
    private readonly transport: CoalescerTransport,
    private readonly retry: RetryPolicy,
  ) {}

  /** Queues one increment; it leaves with the next batch. */
  add(item: CoalescedItem, deadline: number): Promise<CoalescedResult> {
    if (this.closed) return Promise.reject(new TallyError(ErrorCode.unavailable, 'the client is closed'));
    if (this.queue.length >= coalescedQueueItemsMax)
      return Promise.reject(
        new TallyError(ErrorCode.resourceExhausted, `${this.queue.length} increments are queued in this client; try again`, undefined, {
          reason: ErrorReason.notApplied,
        }),
      );
    return new Promise((resolve, reject) => {
      this.enqueue({
        item,
        keyed: item.idempotencyKey.length > 0,
        deadline,
        attempts: 0,
        alone: false,
        settled: false,
        resolve,
        reject,
      });
    });
  }

  /** Sends whatever is queued now (the in-flight bound aside); later adds are refused. */
  close(): void {
    this.closed = true;
    while (this.queue.length > 0) this.sendNext();
    clearTimeout(this.expiryTimer);
  }

  private enqueue(entry: Entry): void {
    if (entry.alone) {
      this.send([entry]);
      return;
    }
    this.queue.push(entry);
    if (entry.deadline < this.expiryAt) this.armExpiry(entry.deadline);
    this.schedulePump();
  }

  // One turn of the event loop first: callers answered by the last batch,
  // and calls made in the same tick, join the next batch instead of each
  // leaving alone.
  private schedulePump(): void {
    if (this.pumpScheduled) return;
    this.pumpScheduled = true;
    setImmediate(() => {
      this.pumpScheduled = false;
      while (this.inFlight < coalescedCallsInFlightMax && this.queue.length > 0) this.sendNext();
    });
  }

  private sendNext(): void {
    // At most newCountersPerCallMax names per batch: the router refuses a
    // call creating more counters, and only it knows which names are new.
    const limit = Math.min(this.queue.length, batchItemsMax);
    const names = new Set<string>();
    let previous: string | undefined;
    let count = 0;
    for (; count < limit; count++) {
      const name = this.queue[count]!.item.counter;
      if (name === previous) continue;
      previous = name;
      if (names.has(name)) continue;
      if (names.size === newCountersPerCallMax) break;
      names.add(name);
    }
    this.send(this.queue.splice(0, count));
  }

  private send(queued: Entry[]): void {
    const nowMs = monotonicNowMs();
    // One caller already past its deadline would fail the whole batch at once.
    const entries = queued.filter((entry) => {
      if (entry.deadline > nowMs) return true;
      this.fail(entry, deadlinePassed());
      return false;
    });
    if (entries.length === 0) return;
    // The batch's deadline is the earliest its items' attempts would have had
    // as unary calls: no caller waits past its own.
    let deadline = Infinity;
    for (const entry of entries) {
      entry.attempts++;
      const attemptDeadline =
        entry.keyed && entry.attempts < this.retry.attemptsMax
          ? Math.min(entry.deadline, nowMs + this.retry.attemptTimeoutMs)
          : entry.deadline;
      if (attemptDeadline < deadline) deadline = attemptDeadline;
    }
    this.inFlight++;
    if (entries.length === 1) {
      // A lone item goes as the unary call it is: the same RPC, the same answer.
      const entry = entries[0]!;
      this.transport.increment(entry.item, deadline).then(
        (response) => this.answered(entries, [response]),
        (error: unknown) => this.failed(entries, fromServiceError(error)),
      );
      return;
    }
    this.transport
      .incrementBatch(
        entries.map((entry) => entry.item),
        deadline,
      )
      .then(
        (response) => {
          if (response.results.length !== entries.length)
            this.failed(
              entries,
              new TallyError(ErrorCode.internal, `router answered ${response.results.length} of ${entries.length} items`),
            );
          else this.answered(entries, response.results);
        },
        (error: unknown) => this.failed(entries, fromServiceError(error)),
      );
  }

  private answered(entries: Entry[], results: counterV1.IncrementResponse__Output[]): void {
    this.inFlight--;
    entries.forEach((entry, index) => this.succeed(entry, { applied: results[index]!.applied, shard: results[index]!.shard }));
    this.schedulePump();
  }

  private failed(entries: Entry[], failure: TallyError): void {
    this.inFlight--;
    const several = entries.length > 1;
    // The router's ErrorInfo reason says whether any item was applied: a
    // batch spanning pairs may fail with any status after one pair applied
    // its group (OUTCOME_UNKNOWN). Only NOT_APPLIED lets an unkeyed item go
    // again; no reason (an older server, a failure that never reached one)
    // counts as unknown.
    const notApplied = failure.certainlyNotApplied;
    // An overloaded node (queue full, disk full) refuses its own group only:
    // a batch spanning pairs may be applied in part, so to each of its items
    // the outcome is unknown, which the unary rule below handles (keyed items
    // back off and go again with their key; unkeyed ones fail).
    const error =
      several && failure.grpcCode === status.RESOURCE_EXHAUSTED && !notApplied
        ? new TallyError(ErrorCode.unavailable, `outcome unknown: the IncrementBatch was refused in part (${failure.message})`, undefined, {
            reason: ErrorReason.outcomeUnknown,
          })
        : failure;
    for (const entry of entries) {
      if (entry.settled) continue;
      if (retryableStatuses.has(error.grpcCode) || (notApplied && error.retryAfterMs !== undefined)) {
        // Outcome unknown, or refused whole with a retry delay (busy): the
        // unary rule decides (keyed items again with their key, unkeyed only
        // when the router applied nothing), and the batch stays together.
        const backoffMs = this.retry.retryAfterMs(error, entry.attempts, entry.deadline, entry.keyed);
        if (backoffMs === undefined) this.fail(entry, error);
        else setTimeout(() => this.requeue(entry), backoffMs);
      } else if (!several || sharedFailures.has(error.grpcCode)) {
        this.fail(entry, error);
      } else if (entry.keyed || notApplied) {
        // Maybe another item's doing: this one alone learns its own outcome
        // (a keyed item the batch had applied answers applied=false). The
        // refused batch does not count against its attempts: a unary call
        // would not have made it.
        entry.alone = true;
        entry.attempts--;
        this.requeue(entry);
      } else {
        // An unkeyed item of a batch that spanned several nodes may have
        // been applied by one of them: sending it again could count it twice.
        this.fail(
          entry,
          new TallyError(
            ErrorCode.unavailable,
            `outcome unknown: the IncrementBatch this unkeyed increment was coalesced into failed (${error.code}: ${error.message})`,
            undefined,
            { reason: ErrorReason.outcomeUnknown },
          ),
        );
      }
    }
    this.schedulePump();
  }

  private requeue(entry: Entry): void {
    if (entry.settled) return;
    if (monotonicNowMs() >= entry.deadline) {
      this.fail(entry, deadlinePassed());
      return;
    }
    this.enqueue(entry);
  }

  private succeed(entry: Entry, result: CoalescedResult): void {
    if (entry.settled) return;
    entry.settled = true;
    entry.resolve(result);
  }

  private fail(entry: Entry, error: TallyError): void {
    if (entry.settled) return;
    entry.settled = true;
    entry.reject(error);
  }

  private armExpiry(at: number): void {
    clearTimeout(this.expiryTimer);
    this.expiryAt = at;
    // setTimeout fires at once past 2^31 - 1 ms: a far deadline is looked at again then.
    this.expiryTimer = setTimeout(() => this.expire(), Math.min(timerDelayMsMax, Math.max(0, at - monotonicNowMs())));
    this.expiryTimer.unref();
  }

  /** Answers DEADLINE_EXCEEDED to queued entries whose deadline passed (never sent), and re-arms for the next. */
  private expire(): void {
    this.expiryTimer = undefined;
    this.expiryAt = Infinity;
    const nowMs = monotonicNowMs();
    let next = Infinity;
    this.queue = this.queue.filter((entry) => {
      if (entry.deadline <= nowMs) {
        this.fail(entry, deadlinePassed());
        return false;
      }
      if (entry.deadline < next) next = entry.deadline;
      return true;
    });
    if (next < Infinity) this.armExpiry(next);
  }
}

const timerDelayMsMax = 2 ** 31 - 1;

function deadlinePassed(): TallyError {
  return new TallyError(ErrorCode.deadlineExceeded, 'deadline exceeded while the increment waited to be sent; it was not sent', undefined, {
    reason: ErrorReason.notApplied,
  });
}
