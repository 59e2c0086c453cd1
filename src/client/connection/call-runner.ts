// How the client makes one call: attempts on the routers until one answers,
// the call fails for good, or its deadline passes. Whether a failed attempt
// goes again, and where, is resend-rule.ts's decision; this loop only keeps
// the deadline, the attempt bound and the backoff between keyed retries.
import { monotonicNowMs } from '../../wire/index.ts';
import type { TallyError, LeanReadManyResponse } from '../../wire/index.ts';
import type { ReadPageRequest } from '../streams/index.ts';
import type { CallSettings } from '../types.ts';
import { resendAfter, type CallClass } from './resend-rule.ts';
import { aborted, throwIfAborted, type RouterSet, type Rpc } from './router-set.ts';

const backoffBaseMs = 100;
const backoffMaxMs = 1_000;

export function classOfWrite(keyed: boolean): CallClass {
  return keyed ? 'keyed' : 'unkeyed';
}

/** A client's call bounds: the default deadline, one keyed attempt's timeout, attempts per write. */
export interface CallBounds {
  readonly deadlineMs: number;
  readonly attemptTimeoutMs: number;
  readonly attemptsMax: number;
}

export class CallRunner implements CallBounds {
  readonly deadlineMs: number;
  readonly attemptTimeoutMs: number;
  readonly attemptsMax: number;

  constructor(
    private readonly routers: RouterSet,
    bounds: CallBounds,
  ) {
    this.deadlineMs = bounds.deadlineMs;
    this.attemptTimeoutMs = bounds.attemptTimeoutMs;
    this.attemptsMax = bounds.attemptsMax;
  }

  /** A read: asked of each router at most once while the outcome is unknown (resend-rule), within the deadline. */
  async read<Request, Response>(
    method: Rpc<Request, Response>['method'],
    request: NoInfer<Request>,
    settings?: CallSettings,
  ): Promise<Response> {
    return this.untilAnswered('read', { service: 'counter', method }, request, settings);
  }

  /** read's loop for a page on a ReadStream: the same resend rule as a unary ReadMany. */
  async streamRead(page: ReadPageRequest, settings?: CallSettings): Promise<LeanReadManyResponse> {
    const deadline = monotonicNowMs() + (settings?.deadlineMs ?? this.deadlineMs);
    const tried = new Set<number>();
    for (;;) {
      try {
        return await this.routers.attemptStreamRead(page, deadline, tried, settings?.signal);
      } catch (error) {
        const failure = error as TallyError;
        const resend = resendAfter('read', { sent: true, grpcCode: failure.grpcCode });
        if (resend !== 'anotherRouter' || !this.routers.untried(tried) || monotonicNowMs() >= deadline) throw error;
      }
    }
  }

  /** An AdminService call: moves to another router only when it was not sent at all. */
  async admin<Request, Response>(
    method: Rpc<Request, Response>['method'],
    request: NoInfer<Request>,
    settings?: CallSettings,
  ): Promise<Response> {
    return this.untilAnswered('admin', { service: 'admin', method }, request, settings);
  }

  private async untilAnswered<Request, Response>(
    callClass: CallClass,
    rpc: Rpc<Request, Response>,
    request: Request,
    settings?: CallSettings,
  ): Promise<Response> {
    const deadline = monotonicNowMs() + (settings?.deadlineMs ?? this.deadlineMs);
    const tried = new Set<number>();
    for (;;) {
      try {
        return await this.routers.attempt(callClass, rpc, request, deadline, tried, settings?.signal);
      } catch (error) {
        const failure = error as TallyError;
        const resend = resendAfter(callClass, { sent: true, grpcCode: failure.grpcCode });
        if (resend !== 'anotherRouter' || !this.routers.untried(tried) || monotonicNowMs() >= deadline) throw error;
      }
    }
  }

  /**
   * A write on CounterService: calls until an attempt succeeds, fails for
   * good, or the deadline passes. Only requests whose every increment is
   * keyed are sent again after a failure that may have applied: the key
   * makes a repeat harmless, through any router; without it a repeat could
   * count twice (resend-rule).
   */
  async write<Request, Response>(
    method: Rpc<Request, Response>['method'],
    request: NoInfer<Request>,
    keyed: boolean,
    settings?: CallSettings,
  ): Promise<Response> {
    const callClass = classOfWrite(keyed);
    return this.untilWritten(keyed, settings, (attemptDeadline) =>
      this.routers.attempt(callClass, { service: 'counter', method }, request, attemptDeadline, new Set(), settings?.signal),
    );
  }

  /** write's loop of attempts, whatever carries each attempt (a unary call, a batch on an IncrementStream). */
  async untilWritten<Response>(
    keyed: boolean,
    settings: CallSettings | undefined,
    attemptOnce: (attemptDeadline: number) => Promise<Response>,
  ): Promise<Response> {
    const deadline = monotonicNowMs() + (settings?.deadlineMs ?? this.deadlineMs);
    for (let attempt = 1; ; attempt++) {
      const remainingMs = deadline - monotonicNowMs();
      const attemptDeadline =
        keyed && attempt < this.attemptsMax ? monotonicNowMs() + Math.min(remainingMs, this.attemptTimeoutMs) : deadline;
      try {
        throwIfAborted(settings?.signal);
        return await attemptOnce(attemptDeadline);
      } catch (error) {
        const backoffMs = this.retryAfterMs(error as TallyError, attempt, deadline, keyed);
        if (backoffMs === undefined) throw error;
        await backOff(backoffMs, settings?.signal);
      }
    }
  }

  /**
   * The backoff before attempt + 1 of a write that failed, or undefined when
   * it is not retried (resend-rule: keyed writes after an unknown outcome,
   * any write the router certainly did not apply). At least the router's
   * RetryInfo delay when it gave one.
   */
  retryAfterMs(failure: TallyError, attempt: number, deadline: number, keyed = true): number | undefined {
    // Full jitter: a crowd of clients retrying after one failover does not return in step.
    const jitterMs = Math.random() * Math.min(backoffMaxMs, backoffBaseMs * 2 ** (attempt - 1));
    const backoffMs = Math.max(jitterMs, failure.retryAfterMs ?? 0);
    const retry =
      resendAfter(classOfWrite(keyed), {
        sent: true,
        grpcCode: failure.grpcCode,
        notApplied: failure.certainlyNotApplied,
        retryAfterMs: failure.retryAfterMs,
      }) === 'again' &&
      attempt < this.attemptsMax &&
      monotonicNowMs() + backoffMs < deadline - 10;
    return retry ? backoffMs : undefined;
  }
}

/** The pause before a keyed retry; an abort ends it at once. */
function backOff(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted === true) {
      reject(aborted(signal));
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(aborted(signal!));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
