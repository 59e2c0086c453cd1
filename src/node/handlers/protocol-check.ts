// The wire-version gate in front of every method of the node's service: a
// caller whose shard protocol this node cannot serve is refused
// FAILED_PRECONDITION naming both versions, before the call does anything.
import type { handleUnaryCall } from '@grpc/grpc-js';
import { ErrorCode, TallyError, toServiceError } from '../../wire/index.ts';
import { peerProtocolOf, shardProtocolRefusal } from '../../wire/internal/index.ts';
import type { shardV1 } from '../../common/index.ts';

type Versioned = { protocol?: shardV1.ProtocolVersion__Output | null } | null;

/** Why this node cannot serve a request of method (its sender's wire version is out of range), or undefined. */
export function protocolRefusalOf(method: string, request: Versioned): string | undefined {
  return shardProtocolRefusal(peerProtocolOf(request?.protocol), `the caller of ${method}`);
}

/**
 * Every unary method refuses a caller whose wire version this node cannot
 * serve (shard-protocol.ts). A request without a version is from a router
 * or node of wire version 1, which this release still serves.
 */
export function checkProtocol<Handlers extends object>(handlers: Handlers): Handlers {
  const checked: Record<string, handleUnaryCall<unknown, unknown>> = {};
  for (const [method, handler] of Object.entries(handlers) as [string, handleUnaryCall<unknown, unknown>][]) {
    checked[method] = (call, callback) => {
      const refusal = protocolRefusalOf(method, call.request as Versioned);
      if (refusal !== undefined) {
        callback(toServiceError(new TallyError(ErrorCode.failedPrecondition, refusal)));
        return;
      }
      handler(call, callback);
    };
  }
  return checked as Handlers;
}
