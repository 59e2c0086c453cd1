// Server interceptors that refuse a call on its metadata, before its message
// is read or decoded: a refused call costs a header parse, not a 4 MiB
// decode. grpc-js keeps a call's stream paused until the handler asks to
// read; a call ended here never asks, and its data frames are discarded.
import { statusMetadata } from '../../wire/index.ts';
import { busyRetryDelayMs } from '../limits.ts';
import {
  ServerInterceptingCall,
  ServerListenerBuilder,
  ResponderBuilder,
  status,
  type Metadata,
  type ServerInterceptor,
} from '@grpc/grpc-js';

/** What a refusal looks like; the check decides from the method path and metadata. Nothing of a refused call is applied. */
export interface Refusal {
  code: status;
  details: string;
  /** Sent as a google.rpc.RetryInfo: when a retry may succeed. */
  retryAfterMs?: number;
}

/** A refusal as sent: its trailers say NOT_APPLIED (the message was never read) and, when set, the retry delay. */
function refusalStatus(refusal: Refusal): { code: status; details: string; metadata: Metadata } {
  const { code, details, retryAfterMs } = refusal;
  return { code, details, metadata: statusMetadata(code, details, { retryAfterMs }) };
}

/** Calls in flight; one object may be shared by every port of a process, so the caps bound them together. */
export interface InFlightCount {
  calls: number;
  largeCalls: number;
}

export interface InFlightLimits {
  /** Calls being served at once, of every method. */
  callsMax: number;
  /** Of those, calls of the methods whose messages may be megabytes (each may hold its whole message in memory). */
  largeCallsMax: number;
  isLarge: (path: string) => boolean;
  /** Told of every change, for a gauge. */
  onInFlight?: (calls: number) => void;
  onRefused?: (path: string) => void;
  /** Where the calls are counted: given, shared with another port's guard; else this guard's own. */
  count?: InFlightCount;
}

export interface CallGuards {
  /** Checked first, on the call's path and metadata: a refusal ends the call with its status. */
  refuse?: (path: string, metadata: Metadata) => Refusal | undefined;
  /**
   * A cap on calls in flight: beyond it a call is refused RESOURCE_EXHAUSTED
   * on its metadata, so a flood costs each refused call nothing but its
   * headers, and what the server holds in memory is bounded by the caps
   * times the largest message.
   */
  inFlight?: InFlightLimits;
  /**
   * A ceiling on every call's deadline: a call without one, or with a later
   * one, ends DEADLINE_EXCEEDED after this. The handler sees the call
   * cancelled (call.cancelled) and stops work it checks for.
   */
  deadlineMaxMs: number;
  /**
   * Methods exempt from deadlineMaxMs: long-lived streams whose frames carry
   * their own deadlines (kept by the caller, which abandons a stalled stream).
   */
  isLongLived?: (path: string) => boolean;
  /** Told of every call's end once: the status it was answered with, CANCELLED when it ended without one (tally_rpc_total). */
  onStatus?: (path: string, code: status) => void;
}

/** RESOURCE_EXHAUSTED when one more call (large: of a large method) would pass the caps; undefined when it may start. */
export function busyRefusal(limits: InFlightLimits, count: InFlightCount, large: boolean): Refusal | undefined {
  const largeFull = large && count.largeCalls >= limits.largeCallsMax;
  if (count.calls < limits.callsMax && !largeFull) return undefined;
  const which = largeFull ? `${limits.largeCallsMax} large calls` : `${limits.callsMax} calls`;
  return {
    code: status.RESOURCE_EXHAUSTED,
    details: `server busy: ${which} in flight; retry with backoff`,
    retryAfterMs: busyRetryDelayMs,
  };
}

/**
 * The guards as one interceptor: one intercepting call (listener, responder,
 * closures) per call, not one per guard. Router CPU per unary increment,
 * bench/cpu-split.sh, medians of 3 on a noisy 2-core machine: 292 us with
 * three interceptors, 283 us with none, 250 us with this one.
 */
export function guardCalls(guards: CallGuards): ServerInterceptor {
  const { refuse, inFlight, deadlineMaxMs, onStatus, isLongLived } = guards;
  const count: InFlightCount = inFlight?.count ?? { calls: 0, largeCalls: 0 };
  const busy = (large: boolean): Refusal | undefined => (inFlight === undefined ? undefined : busyRefusal(inFlight, count, large));
  return (method, call) => {
    const large = inFlight?.isLarge(method.path) ?? false;
    let counted = false;
    let ended = false;
    let timer: NodeJS.Timeout | undefined;
    // Once, however the call ends: status sent, or cancelled by the peer or a deadline.
    let reported = false;
    // Once per call, with the status the caller gets first.
    const report = (code: status): void => {
      if (reported) return;
      reported = true;
      onStatus?.(method.path, code);
    };
    const end = (): void => {
      if (ended) return;
      ended = true;
      clearTimeout(timer);
      if (!counted) return;
      count.calls--;
      if (large) count.largeCalls--;
      inFlight?.onInFlight?.(count.calls);
    };
    const listener = new ServerListenerBuilder()
      .withOnReceiveMetadata((metadata, next) => {
        const refusal = refuse?.(method.path, metadata);
        if (refusal !== undefined) {
          report(refusal.code);
          call.sendStatus(refusalStatus(refusal));
          return;
        }
        const full = busy(large);
        if (full !== undefined) {
          inFlight?.onRefused?.(method.path);
          report(full.code);
          call.sendStatus(refusalStatus(full));
          return;
        }
        if (inFlight !== undefined) {
          counted = true;
          count.calls++;
          if (large) count.largeCalls++;
          inFlight.onInFlight?.(count.calls);
        }
        const deadline = call.getDeadline();
        const deadlineMs = deadline instanceof Date ? deadline.getTime() : deadline;
        // eslint-disable-next-line no-restricted-properties -- a call's deadline arrives as a wall-clock time (gRPC API): compared at once
        if (!(deadlineMs - Date.now() <= deadlineMaxMs) && isLongLived?.(method.path) !== true) {
          timer = setTimeout(() => {
            const details = `the server ends any call after ${deadlineMaxMs} ms; give a shorter deadline`;
            // The handler may have sent work on: what it applied is unknown.
            report(status.DEADLINE_EXCEEDED);
            call.sendStatus({ code: status.DEADLINE_EXCEEDED, details, metadata: statusMetadata(status.DEADLINE_EXCEEDED, details) });
          }, deadlineMaxMs);
          timer.unref();
        }
        next(metadata);
      })
      .withOnCancel(() => {
        report(status.CANCELLED);
        end();
      })
      .build();
    const responder = new ResponderBuilder()
      .withStart((next) => next(listener))
      .withSendStatus((callStatus, next) => {
        report(callStatus.code);
        end();
        next(callStatus);
      })
      .build();
    return new ServerInterceptingCall(call, responder);
  };
}
