// Server interceptors that refuse a call on its metadata, before its message
// is read or decoded: a refused call costs a header parse, not a 4 MiB
// decode. grpc-js keeps a call's stream paused until the handler asks to
// read; a call ended here never asks, and its data frames are discarded.
import {
  ServerInterceptingCall,
  ServerListenerBuilder,
  ResponderBuilder,
  status,
  type Metadata,
  type ServerInterceptor,
  type ServerInterceptingCallInterface,
} from '@grpc/grpc-js';

/** What a refusal looks like; the check decides from the method path and metadata. */
export interface Refusal {
  code: status;
  details: string;
}

/**
 * Runs `check` on each call's metadata; a refusal ends the call at once with
 * its status, and the message is never read.
 */
export function refuseOnMetadata(check: (path: string, metadata: Metadata) => Refusal | undefined): ServerInterceptor {
  return (method, call) => {
    const listener = new ServerListenerBuilder()
      .withOnReceiveMetadata((metadata, next) => {
        const refusal = check(method.path, metadata);
        if (refusal === undefined) next(metadata);
        else call.sendStatus({ code: refusal.code, details: refusal.details });
      })
      .build();
    return new ServerInterceptingCall(call, new ResponderBuilder().withStart((next) => next(listener)).build());
  };
}

/** Calls once each ends, however it ends (status sent, or cancelled by the peer or a deadline). */
function onCallEnd(call: ServerInterceptingCallInterface, builder: ServerListenerBuilder, end: () => void): ServerInterceptingCall {
  let ended = false;
  const endOnce = (): void => {
    if (ended) return;
    ended = true;
    end();
  };
  const listener = builder.withOnCancel(endOnce).build();
  const responder = new ResponderBuilder()
    .withStart((next) => next(listener))
    .withSendStatus((callStatus, next) => {
      endOnce();
      next(callStatus);
    })
    .build();
  return new ServerInterceptingCall(call, responder);
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
}

/**
 * A cap on calls in flight: beyond it a call is refused RESOURCE_EXHAUSTED on
 * its metadata, so a flood costs each refused call nothing but its headers,
 * and what the server holds in memory is bounded by the caps times the
 * largest message.
 */
export function limitInFlight(limits: InFlightLimits): ServerInterceptor {
  let calls = 0;
  let largeCalls = 0;
  return (method, call) => {
    const large = limits.isLarge(method.path);
    let counted = false;
    const builder = new ServerListenerBuilder().withOnReceiveMetadata((metadata, next) => {
      if (calls >= limits.callsMax || (large && largeCalls >= limits.largeCallsMax)) {
        limits.onRefused?.(method.path);
        const which = large && largeCalls >= limits.largeCallsMax ? `${limits.largeCallsMax} large calls` : `${limits.callsMax} calls`;
        call.sendStatus({ code: status.RESOURCE_EXHAUSTED, details: `server busy: ${which} in flight; retry with backoff` });
        return;
      }
      counted = true;
      calls++;
      if (large) largeCalls++;
      limits.onInFlight?.(calls);
      next(metadata);
    });
    return onCallEnd(call, builder, () => {
      if (!counted) return;
      calls--;
      if (large) largeCalls--;
      limits.onInFlight?.(calls);
    });
  };
}

/**
 * A ceiling on every call's deadline: a call without one, or with a later
 * one, ends DEADLINE_EXCEEDED after deadlineMaxMs. The handler sees the call
 * cancelled (call.cancelled) and stops work it checks for.
 */
export function deadlineCeiling(deadlineMaxMs: number): ServerInterceptor {
  return (_method, call) => {
    let timer: NodeJS.Timeout | undefined;
    const builder = new ServerListenerBuilder().withOnReceiveMetadata((metadata, next) => {
      const deadline = call.getDeadline();
      const deadlineMs = deadline instanceof Date ? deadline.getTime() : deadline;
      if (!(deadlineMs - Date.now() <= deadlineMaxMs)) {
        timer = setTimeout(() => {
          call.sendStatus({
            code: status.DEADLINE_EXCEEDED,
            details: `the server ends any call after ${deadlineMaxMs} ms; give a shorter deadline`,
          });
        }, deadlineMaxMs);
        timer.unref();
      }
      next(metadata);
    });
    return onCallEnd(call, builder, () => clearTimeout(timer));
  };
}
