// Which failed calls the client may send again, and where (G1/G2: an
// increment is never counted twice). Pure: the client, the router set and the
// coalescer all ask this one function, and it must never allow a resend that
// could apply an unkeyed write twice.
import { status } from '@grpc/grpc-js';

/**
 * What a call may be resent as.
 * - read: changes nothing (Read, ReadMany, ReadWindow, CountDistinct, IsMember).
 * - keyed: a write whose every item carries an idempotency key, or that is
 *   idempotent by itself (AddDistinct, SetMember): a repeat through any
 *   router applies nothing more, since the routers share one directory.
 * - unkeyed: a write with an item without a key: a repeat could count twice.
 * - admin: AdminService calls (status, describe, configure, delete, ...).
 */
export type CallClass = 'read' | 'keyed' | 'unkeyed' | 'admin';

/**
 * - 'anotherRouter': at once, to a router this call has not tried yet.
 * - 'again': after a back-off, to whichever router comes next (the same one
 *   when there is only one), within the keyed retry budget.
 * - 'no': the error is the call's answer.
 */
export type Resend = 'anotherRouter' | 'again' | 'no';

export interface FailedAttempt {
  /**
   * False only when the client never handed the call to grpc-js: the router's
   * channel was not READY (refused, unreachable, TLS failing) or did not
   * become so in time. Any failure after the handover counts as sent, even
   * grpc-js's own "No connection established": its state may have changed
   * between our look and its pick, and UNAVAILABLE is also what a call gets
   * when its connection drops after the request went out.
   */
  sent: boolean;
  grpcCode: number;
  /**
   * The router said the call changed nothing (ErrorInfo reason NOT_APPLIED,
   * TallyError.certainlyNotApplied): sending it again cannot count twice.
   */
  notApplied?: boolean;
  /** The router said a retry after this long helps (RetryInfo). */
  retryAfterMs?: number | undefined;
}

// The two outcomes that leave a write unknown: it may or may not have applied.
const outcomeUnknown = new Set<number>([status.UNAVAILABLE, status.DEADLINE_EXCEEDED]);

export function resendAfter(callClass: CallClass, failure: FailedAttempt): Resend {
  // Nothing left this process: no router can have applied it, whatever the call.
  if (!failure.sent) return 'anotherRouter';
  // A write the router certainly did not apply, refused as unavailable or busy
  // with a retry hint: a repeat cannot count twice, keyed or not.
  if (
    (callClass === 'keyed' || callClass === 'unkeyed') &&
    failure.notApplied === true &&
    (outcomeUnknown.has(failure.grpcCode) || failure.retryAfterMs !== undefined)
  )
    return 'again';
  // Any other status is a router's answer: asking another gets the same one.
  if (!outcomeUnknown.has(failure.grpcCode)) return 'no';
  if (callClass === 'keyed') return 'again';
  // A read is asked once of each router, without back-off: one that failed is
  // not asked again, so a single router keeps today's one attempt.
  if (callClass === 'read') return 'anotherRouter';
  // unkeyed may have applied; admin calls change the directory (delete,
  // configure, set-shards, replace) or are cheap to rerun by hand.
  return 'no';
}
