// Who waits for the follower to confirm an lsn: group commit before it
// answers, reads before they answer, SetRole before it reports sync. Each
// waiter is resolved once the follower holds its lsn, or rejected on its
// timeout or when the primary can no longer promise it (deposed, stopping).
import { ErrorCode, TallyError } from '../../wire/index.ts';

interface Waiter {
  lsn: bigint;
  resolve: () => void;
  reject: (error: TallyError) => void;
  timer: NodeJS.Timeout;
}

export class AckWaiters {
  /** A Set, not an array: a waiter that times out leaves in O(1) (a silent follower times them all out at once). */
  private waiters = new Set<Waiter>();

  /** Resolves once resolveUpTo reaches lsn; rejects UNAVAILABLE after timeoutMs, naming why (lastError) when there is a why. */
  wait(lsn: bigint, timeoutMs: number, lastError: () => string): Promise<void> {
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        lsn,
        resolve,
        reject,
        timer: setTimeout(() => {
          this.waiters.delete(waiter);
          const why = lastError();
          reject(
            new TallyError(ErrorCode.unavailable, `follower did not confirm lsn ${lsn} within ${timeoutMs} ms${why ? ` (${why})` : ''}`),
          );
        }, timeoutMs),
      };
      this.waiters.add(waiter);
    });
  }

  rejectAll(error: TallyError): void {
    const waiters = this.waiters;
    this.waiters = new Set();
    for (const waiter of waiters) {
      clearTimeout(waiter.timer);
      waiter.reject(error);
    }
  }

  resolveUpTo(lsn: bigint): void {
    // Waiters are not in lsn order: a flush of duplicates waits on an older original.
    for (const waiter of this.waiters) {
      if (waiter.lsn > lsn) continue;
      // Deleting the entry just visited is safe in a Set's for-of.
      this.waiters.delete(waiter);
      clearTimeout(waiter.timer);
      waiter.resolve();
    }
  }
}
