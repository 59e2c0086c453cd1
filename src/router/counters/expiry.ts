// Time to live: which TTL a counter has, and the background sweeper that
// deletes counters idle for longer than theirs. The sweeper only finds them
// and paces them: it walks the directory a slice at a time (no slice holds
// the event loop for long) and hands a bounded batch per slice to a
// CounterDeleter. It never deletes anything itself.
import assert from 'node:assert';
import { IntervalTask, type Logger } from '../../common/index.ts';
import { monotonicNowMs, type MonotonicClock } from '../../wire/index.ts';
import type { CounterInfo, ExpiryDirectory } from '../directory/index.ts';

/** Where a counter's TTL comes from (CounterConfig.ttl_from). */
export type TtlSource = 'counter' | 'default' | 'never' | 'none';

/** The TTL in force for a counter's own setting under the router default (0: none); 0 means it never expires. */
export function ttlInForce(ownTtlMs: number | null, defaultTtlMs: number): { ttlMs: number; from: TtlSource } {
  if (ownTtlMs === null) return defaultTtlMs > 0 ? { ttlMs: defaultTtlMs, from: 'default' } : { ttlMs: 0, from: 'none' };
  return ownTtlMs > 0 ? { ttlMs: ownTtlMs, from: 'counter' } : { ttlMs: 0, from: 'never' };
}

/**
 * Deletes counters for the sweeper: the delete path of AdminService.DeleteCounter,
 * given cause 'ttl'. The contract the sweeper relies on:
 * - it removes a counter only if stillExpired(name) is true at its cut
 *   point (the moment from which a write can no longer resolve the old
 *   counter), synchronously with that cut, so a write that arrived while
 *   the batch waited keeps its counter;
 * - a name that no longer exists (deleted meanwhile) is skipped, not an error;
 * - it resolves with the names it deleted; it does not count them in
 *   tally_counters_deleted_total (the sweeper does, as cause="ttl");
 * - the batch is small (expiryDeletesPerSecondMax / sweeps per second) and
 *   may be made one directory transaction.
 */
export interface CounterDeleter {
  deleteCounters(names: readonly string[], cause: 'ttl', stillExpired: (name: string) => boolean): Promise<readonly string[]>;
}

export interface ExpirySettings {
  /** The router default TTL (--counter-ttl-ms); 0: none. */
  defaultTtlMs: number;
  sweepIntervalMs: number;
  /** Counters checked per slice. */
  checksPerSweep: number;
  /** Names handed to the deleter per slice at most. */
  deletesPerSweep: number;
}

export interface ExpiryObserver {
  /** Counters the deleter reported deleted. */
  onExpired(count: number): void;
}

export class CounterExpiry {
  private cursor: IterableIterator<CounterInfo> | undefined;
  private passStartedMs = 0;
  private lastPassMs = 0;
  private readonly task: IntervalTask;

  constructor(
    private readonly directory: ExpiryDirectory,
    private readonly deleter: CounterDeleter,
    private readonly settings: ExpirySettings,
    private readonly observer: ExpiryObserver,
    logger: Logger,
    /** Idle time is measured on it, against CounterInfo.lastWriteMonotonicMs: never the wall clock (G11). */
    private readonly now: MonotonicClock = monotonicNowMs,
  ) {
    assert(settings.checksPerSweep > 0 && settings.deletesPerSweep > 0, 'expiry slices must check and delete something');
    this.task = new IntervalTask({ name: 'counter expiry', intervalMs: settings.sweepIntervalMs, logger }, () => this.sweep());
  }

  start(): void {
    this.task.start();
  }

  /** No slice starts after this; one under way finishes its batch. */
  stop(): void {
    this.task.stop();
  }

  /**
   * How long a pass over the directory takes: the last full pass, or the
   * one under way once it has run longer (a mass expiry slows the pass
   * that meets it, and that must show before the pass ends). It bounds how
   * late past its TTL an idle counter is found.
   */
  passDurationMs(nowMs: number = this.now()): number {
    return Math.max(this.lastPassMs, this.cursor === undefined ? 0 : nowMs - this.passStartedMs);
  }

  /**
   * Whether the counter has been idle for its whole TTL at nowMs (monotonic).
   * A wall-clock step, forward or back, changes no idle time; a router
   * restart starts every counter's idle time afresh (expire late, never early).
   */
  isExpired(counter: CounterInfo, nowMs: number): boolean {
    const ownTtlMs = counter.ttlMs;
    const ttlMs = ownTtlMs === null ? this.settings.defaultTtlMs : ownTtlMs;
    return ttlMs > 0 && nowMs - counter.lastWriteMonotonicMs >= ttlMs;
  }

  /**
   * One slice: checks up to checksPerSweep counters from where the last
   * slice stopped, stopping early once deletesPerSweep are found (the rest
   * wait for the next slice: the pace holds however many expire at once),
   * then hands them to the deleter as one batch. Runs by the interval task;
   * exposed for tests.
   */
  async sweep(): Promise<void> {
    const nowMs = this.now();
    const expired: string[] = [];
    const { checksPerSweep, deletesPerSweep } = this.settings;
    for (let checkCount = 0; checkCount < checksPerSweep && expired.length < deletesPerSweep; checkCount++) {
      if (this.cursor === undefined) {
        this.cursor = this.directory.liveCounters({ reuseHandle: true });
        this.passStartedMs = nowMs;
      }
      const next = this.cursor.next();
      if (next.done === true) {
        this.cursor = undefined;
        this.lastPassMs = nowMs - this.passStartedMs;
        // A new pass starts with the next slice: a small directory is not checked twice in one slice.
        break;
      }
      if (this.isExpired(next.value, nowMs)) expired.push(next.value.name);
    }
    if (expired.length === 0) return;
    // Checked again at the deleter's cut, with the clock then: a write since this slice keeps its counter.
    const stillExpired = (name: string): boolean => {
      const counter = this.directory.get(name);
      return counter !== undefined && this.isExpired(counter, this.now());
    };
    const deleted = await this.deleter.deleteCounters(expired, 'ttl', stillExpired);
    if (deleted.length > 0) this.observer.onExpired(deleted.length);
  }
}
