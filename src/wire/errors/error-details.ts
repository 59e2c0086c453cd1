// google.rpc error details in a failed call's `grpc-status-details-bin`
// trailer: a serialized google.rpc.Status carrying an ErrorInfo (reason,
// domain) and, where waiting helps, a RetryInfo. Encoding and decoding only:
// which reason an error gets is decided in errors.ts.
import protobuf from 'protobufjs';

/** The trailer gRPC libraries of every language read a google.rpc.Status from. */
export const statusDetailsKey = 'grpc-status-details-bin';

/** ErrorInfo.domain of every error a Tally process sends. */
export const errorDomain = 'tally.counter.v1';

/**
 * ErrorInfo.reason of every failed call (docs/clients.md, "Errors"): whether
 * the call certainly changed nothing, so that even an increment without an
 * idempotency key may be sent again without counting twice, or may have
 * changed something (resend a write only with the same key).
 */
export const ErrorReason = {
  /** Refused before any node applied it (validation, credentials, admission, no such counter, a node that refused it whole): nothing changed. */
  notApplied: 'NOT_APPLIED',
  /** The call may have been applied, in part or whole (a node timed out or went away mid-call): resend only with the same idempotency key. */
  outcomeUnknown: 'OUTCOME_UNKNOWN',
} as const;
export type ErrorReason = (typeof ErrorReason)[keyof typeof ErrorReason];

/**
 * ErrorInfo.metadata keys beside the reason. `cap`: the call was refused by a
 * directory cap (CapName), which waiting does not lift, unlike a busy
 * RESOURCE_EXHAUSTED (load shed, a full disk) that carries no cap and is
 * worth retrying; a batch so refused may pass when split.
 */
export const ErrorMetadataKey = { cap: 'cap' } as const;

/** The caps a RESOURCE_EXHAUSTED names in ErrorInfo.metadata.cap. */
export const CapName = {
  /** The directory's counters (--counters-max). */
  countersMax: 'counters_max',
  /** Shards over all counters (--shards-total-max). */
  shardsTotalMax: 'shards_total_max',
  /** New counters one call may create (newCountersPerCallMax): split the call. */
  newCountersPerCall: 'new_counters_per_call',
} as const;
export type CapName = (typeof CapName)[keyof typeof CapName];

/** The details of a refusal by a cap: certainly not applied, and which cap. */
export function capRefusalDetails(cap: CapName): { reason: ErrorReason; metadata: Record<string, string> } {
  return { reason: ErrorReason.notApplied, metadata: { [ErrorMetadataKey.cap]: cap } };
}

const errorInfoTypeUrl = 'type.googleapis.com/google.rpc.ErrorInfo';
const retryInfoTypeUrl = 'type.googleapis.com/google.rpc.RetryInfo';

// The messages of proto/google/rpc/{status,error_details}.proto and the two
// well-known types they use, by field number (a unit test encodes with both
// and compares the bytes). Defined here, not loaded from files, so the client
// package needs no proto files for them.
const root = protobuf.Root.fromJSON({
  // (The map field's keyType is not in protobufjs's INamespace typing, hence the cast below.)
  nested: {
    google: {
      nested: {
        protobuf: {
          nested: {
            Any: { fields: { typeUrl: { type: 'string', id: 1 }, value: { type: 'bytes', id: 2 } } },
            Duration: { fields: { seconds: { type: 'int64', id: 1 }, nanos: { type: 'int32', id: 2 } } },
          },
        },
        rpc: {
          nested: {
            Status: {
              fields: {
                code: { type: 'int32', id: 1 },
                message: { type: 'string', id: 2 },
                details: { rule: 'repeated', type: 'google.protobuf.Any', id: 3 },
              },
            },
            ErrorInfo: {
              fields: {
                reason: { type: 'string', id: 1 },
                domain: { type: 'string', id: 2 },
                metadata: { keyType: 'string', type: 'string', id: 3 },
              },
            },
            RetryInfo: { fields: { retryDelay: { type: 'google.protobuf.Duration', id: 1 } } },
          },
        },
      },
    },
  },
} as protobuf.INamespace);
const StatusType = root.lookupType('google.rpc.Status');
const ErrorInfoType = root.lookupType('google.rpc.ErrorInfo');
const RetryInfoType = root.lookupType('google.rpc.RetryInfo');

/** What a failed call says beyond its code and message. */
export interface StatusDetails {
  reason?: string;
  domain?: string;
  metadata?: Record<string, string>;
  /** RetryInfo.retry_delay, in whole milliseconds. */
  retryAfterMs?: number;
}

/** A serialized google.rpc.Status with an ErrorInfo (when reason is set) and a RetryInfo (when retryAfterMs is). */
export function encodeStatusDetails(code: number, message: string, details: StatusDetails): Buffer {
  const anys: { typeUrl: string; value: Uint8Array }[] = [];
  if (details.reason !== undefined) {
    const info = ErrorInfoType.create({ reason: details.reason, domain: details.domain ?? errorDomain, metadata: details.metadata ?? {} });
    anys.push({ typeUrl: errorInfoTypeUrl, value: ErrorInfoType.encode(info).finish() });
  }
  if (details.retryAfterMs !== undefined) {
    const delayMs = Math.max(0, Math.ceil(details.retryAfterMs));
    const retryDelay = { seconds: Math.floor(delayMs / 1000), nanos: (delayMs % 1000) * 1_000_000 };
    anys.push({ typeUrl: retryInfoTypeUrl, value: RetryInfoType.encode(RetryInfoType.create({ retryDelay })).finish() });
  }
  return Buffer.from(StatusType.encode(StatusType.create({ code, message, details: anys })).finish());
}

interface DecodedAny {
  typeUrl: string;
  value: Uint8Array;
}

/**
 * The ErrorInfo and RetryInfo of a serialized google.rpc.Status; undefined
 * for bytes that are not one (a client must not fail on a server's odd
 * trailer: the status code is still the answer). Other details are skipped.
 */
export function decodeStatusDetails(bytes: Uint8Array): StatusDetails | undefined {
  try {
    const decoded = StatusType.decode(bytes) as unknown as { details: DecodedAny[] };
    const result: StatusDetails = {};
    for (const any of decoded.details) {
      if (any.typeUrl === errorInfoTypeUrl) {
        const info = ErrorInfoType.decode(any.value) as unknown as { reason: string; domain: string; metadata: Record<string, string> };
        result.reason = info.reason;
        result.domain = info.domain;
        result.metadata = { ...info.metadata };
      } else if (any.typeUrl === retryInfoTypeUrl) {
        const info = RetryInfoType.decode(any.value) as unknown as {
          retryDelay?: { seconds: number | { toNumber(): number }; nanos: number };
        };
        if (info.retryDelay === undefined) continue;
        const seconds = typeof info.retryDelay.seconds === 'number' ? info.retryDelay.seconds : info.retryDelay.seconds.toNumber();
        result.retryAfterMs = seconds * 1000 + Math.round(info.retryDelay.nanos / 1_000_000);
      }
    }
    return result;
  } catch {
    return undefined;
  }
}
