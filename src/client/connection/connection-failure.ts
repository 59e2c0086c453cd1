// A call that failed because no connection to a router could be made, told
// as one actionable line ("cannot reach a router at 127.0.0.1:50051:
// connection refused (is the cluster running? ...)") instead of grpc-js's
// "No connection established. Last error: ... Resolution note: ". The code,
// gRPC status and reason stay as received; grpc-js's error is the cause.
import { ErrorCode, TallyError } from '../../wire/index.ts';

/** What grpc-js says when a call found no connection to send on, or no address to connect to. */
const noConnection = /No connection established|Failed to connect|Name resolution failed|DNS resolution failed|connect E[A-Z]+/;

/** The socket or TLS failure under grpc-js's text, in words, with what to check. */
const causes: readonly { pattern: RegExp; reason: string; hint: string }[] = [
  { pattern: /ECONNREFUSED/, reason: 'connection refused', hint: 'is the cluster running? --router / TALLY_ROUTER' },
  {
    pattern: /ENOTFOUND|EAI_AGAIN|Name resolution failed|DNS resolution failed/,
    reason: 'the name does not resolve',
    hint: 'is the address right? --router / TALLY_ROUTER',
  },
  {
    pattern: /EHOSTUNREACH|ENETUNREACH/,
    reason: 'no route to the host',
    hint: 'is the address right and the network up? --router / TALLY_ROUTER',
  },
  { pattern: /ETIMEDOUT|timed out/i, reason: 'the connection timed out', hint: 'is a firewall in the way? --router / TALLY_ROUTER' },
  {
    pattern: /ECONNRESET|socket hang up|Connection dropped/,
    reason: 'the connection was reset',
    hint: 'is it a gRPC port, and plaintext or TLS as the router expects?',
  },
  {
    pattern: /certificate|SSL|TLS|handshake|self[- ]signed|altnames/i,
    reason: 'the TLS handshake failed',
    hint: 'check the CA and name: --tls-ca / TALLY_TLS_CA, or the router runs plaintext',
  },
];

/** The actionable form of a failure to reach `address`, or undefined when the failure is something else. */
export function connectionFailure(address: string, failure: TallyError): TallyError | undefined {
  if (failure.code !== ErrorCode.unavailable || !noConnection.test(failure.message)) return undefined;
  const known = causes.find((candidate) => candidate.pattern.test(failure.message));
  const reason = known?.reason ?? 'no connection';
  const hint = known?.hint ?? 'is the cluster running? --router / TALLY_ROUTER';
  return new TallyError(failure.code, `cannot reach a router at ${address}: ${reason} (${hint})`, failure.grpcCode, {
    reason: failure.reason,
    retryAfterMs: failure.retryAfterMs,
    metadata: failure.metadata,
    cause: failure.cause ?? failure,
  });
}
