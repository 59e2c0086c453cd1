// One handler per unary method, served by every transport: the gRPC port
// wraps each in `unary` (common/server.ts), the Connect port (router/http)
// calls the same function with a request decoded by the same codec. The
// handler sees only what both transports can give it.
import type { handleUnaryCall } from '@grpc/grpc-js';
import { unary } from '../../common/index.ts';

/** What a handler may ask of its call, whichever transport carries it. */
export interface CallState {
  /** The caller went away, or the call's deadline passed: stop work that checks for it. */
  readonly cancelled: boolean;
  /** The caller's deadline (a Date, or ms since the epoch; Infinity without one). */
  getDeadline(): Date | number;
}

export interface UnaryHandler<Request, Response> {
  handle(request: Request, call: CallState): Promise<Response> | Response;
  /** A read: whatever fails, nothing was applied (NOT_APPLIED). */
  changesNothing: boolean;
}

export function handler<Request, Response>(
  handle: UnaryHandler<Request, Response>['handle'],
  changesNothing = false,
): UnaryHandler<Request, Response> {
  return { handle, changesNothing };
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a service's methods each have their own message types
export type UnaryHandlers = Record<string, UnaryHandler<any, any>>;

/** The handlers as grpc-js unary methods, for Server#addService. */
export function grpcMethodsOf(handlers: UnaryHandlers): Record<string, handleUnaryCall<unknown, unknown>> {
  const methods: Record<string, handleUnaryCall<unknown, unknown>> = {};
  for (const [name, { handle, changesNothing }] of Object.entries(handlers)) methods[name] = unary(handle, changesNothing);
  return methods;
}
