// The one operating-error type and its mapping to gRPC status codes and
// google.rpc details (ErrorInfo reason, RetryInfo). Callers match on `code`
// and `reason`, never on message text.
import { status, type ServiceError, Metadata } from '@grpc/grpc-js';
import { ErrorReason, decodeStatusDetails, encodeStatusDetails, statusDetailsKey, type StatusDetails } from './error-details.ts';

export const ErrorCode = {
  invalidArgument: 'invalid_argument',
  outOfRange: 'out_of_range',
  notFound: 'not_found',
  failedPrecondition: 'failed_precondition',
  unavailable: 'unavailable',
  resourceExhausted: 'resource_exhausted',
  deadlineExceeded: 'deadline_exceeded',
  unauthenticated: 'unauthenticated',
  permissionDenied: 'permission_denied',
  internal: 'internal',
  /** The caller gave up (an AbortSignal fired): a write's outcome is unknown. Never sent by a server. */
  cancelled: 'cancelled',
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

/** What an error says beyond its code: its google.rpc ErrorInfo reason and RetryInfo delay. */
export interface TallyErrorDetails {
  /**
   * ErrorInfo.reason: 'NOT_APPLIED' (the call certainly changed nothing) or
   * 'OUTCOME_UNKNOWN' (it may have); see ErrorReason. A server that leaves
   * it out decides it from the code (reasonOf).
   */
  reason?: string;
  /** RetryInfo.retry_delay: how long to wait before sending the call again. */
  retryAfterMs?: number;
  /** ErrorInfo.metadata: what else a caller may match on (ErrorMetadataKey: cap). */
  metadata?: Readonly<Record<string, string>>;
  /** The failure underneath, as received (a grpc-js ServiceError, a socket error): Error.cause. */
  cause?: unknown;
}

export class TallyError extends Error {
  readonly code: ErrorCode;
  /** The gRPC status code on the wire (kept as received on the client side). */
  readonly grpcCode: number;
  /**
   * The google.rpc.ErrorInfo reason (domain 'tally.counter.v1'): 'NOT_APPLIED'
   * or 'OUTCOME_UNKNOWN' (docs/clients.md). Client side: as received;
   * undefined when the failure never reached a Tally server (a local
   * deadline, a refused connection) or the server sent no details.
   */
  readonly reason: string | undefined;
  /** The google.rpc.RetryInfo delay the server asked for, in milliseconds; undefined when it asked for none. */
  readonly retryAfterMs: number | undefined;
  /**
   * The ErrorInfo metadata: { cap: 'counters_max' | 'shards_total_max' |
   * 'new_counters_per_call' } on a refusal by a directory cap, which waiting
   * does not lift (ErrorMetadataKey, CapName). Empty when none was sent.
   */
  readonly metadata: Readonly<Record<string, string>>;
  constructor(code: ErrorCode, message: string, grpcCode?: number, details: TallyErrorDetails = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = 'TallyError';
    this.code = code;
    this.grpcCode = grpcCode ?? grpcStatusByCode[code];
    this.reason = details.reason;
    this.retryAfterMs = details.retryAfterMs;
    this.metadata = details.metadata ?? {};
  }

  /**
   * True when the server said the call changed nothing (reason NOT_APPLIED):
   * even an increment without an idempotency key may then be sent again
   * without counting twice. False means unknown, not applied.
   */
  get certainlyNotApplied(): boolean {
    return this.reason === ErrorReason.notApplied;
  }
}

/** The same error with its reason (and any retry delay) set: for a path that knows whether it applied anything. */
export function withReason(error: TallyError, reason: ErrorReason, retryAfterMs = error.retryAfterMs): TallyError {
  return new TallyError(error.code, error.message, error.grpcCode, { reason, retryAfterMs, metadata: error.metadata, cause: error.cause });
}

const grpcStatusByCode: Record<ErrorCode, status> = {
  invalid_argument: status.INVALID_ARGUMENT,
  out_of_range: status.OUT_OF_RANGE,
  not_found: status.NOT_FOUND,
  failed_precondition: status.FAILED_PRECONDITION,
  unavailable: status.UNAVAILABLE,
  resource_exhausted: status.RESOURCE_EXHAUSTED,
  deadline_exceeded: status.DEADLINE_EXCEEDED,
  unauthenticated: status.UNAUTHENTICATED,
  permission_denied: status.PERMISSION_DENIED,
  internal: status.INTERNAL,
  cancelled: status.CANCELLED,
};

const codeByGrpcStatus = new Map<number, ErrorCode>(
  Object.entries(grpcStatusByCode).map(([code, grpcStatus]) => [grpcStatus, code as ErrorCode]),
);

export function grpcStatusOf(code: ErrorCode): status {
  return grpcStatusByCode[code];
}

export function errorCodeOfGrpcStatus(grpcStatus: number): ErrorCode {
  return codeByGrpcStatus.get(grpcStatus) ?? ErrorCode.internal;
}

/**
 * The SQLite result code of a better-sqlite3 SqliteError ('SQLITE_FULL',
 * 'SQLITE_IOERR_FSYNC', ...), recognised by its shape: wire must not load
 * the native module, since the client imports wire.
 */
function sqliteCodeOf(error: unknown): string | undefined {
  if (!(error instanceof Error) || error.name !== 'SqliteError') return undefined;
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && code.startsWith('SQLITE_') ? code : undefined;
}

/**
 * A failed SQLite call on a data directory, as the operating error it is;
 * `owner` names whose directory ('router', 'node n1'). Every writer of a
 * data directory (a node's log, the router's directory) passes its errors here:
 *   SQLITE_FULL (no room on the disk, or the file's page cap)
 *     -> RESOURCE_EXHAUSTED: the transaction rolled back, nothing was written,
 *        and the same call succeeds once there is room;
 *   SQLITE_IOERR*, SQLITE_READONLY*, SQLITE_CANTOPEN*
 *     -> UNAVAILABLE: the disk failed under the write, whose outcome is unknown
 *        (a commit whose fsync failed may still be found at the next start).
 * Anything else (a constraint, a corrupt file, a bug) is returned unchanged.
 * Messages name no path: they reach clients.
 */
export function storageError(error: unknown, owner: string): unknown {
  const code = sqliteCodeOf(error);
  if (code === undefined) return error;
  if (code === 'SQLITE_FULL')
    return new TallyError(ErrorCode.resourceExhausted, `${owner} data directory is full: nothing was written (${code})`);
  if (/^SQLITE_(IOERR|READONLY|CANTOPEN)/.test(code))
    return new TallyError(ErrorCode.unavailable, `${owner} data directory failed: ${(error as Error).message} (${code})`);
  return error;
}

// Statuses that, by G7 and the write path's rules, answer a call that
// changed nothing: bad input, missing counters or credentials, a refusal at
// admission or by a node before it applied anything. A path where one of
// these can follow a partial write (a batch over several nodes) sets the
// reason itself.
const notAppliedStatuses = new Set<number>([
  status.INVALID_ARGUMENT,
  status.OUT_OF_RANGE,
  status.NOT_FOUND,
  status.ALREADY_EXISTS,
  status.FAILED_PRECONDITION,
  status.RESOURCE_EXHAUSTED,
  status.UNAUTHENTICATED,
  status.PERMISSION_DENIED,
  status.UNIMPLEMENTED,
]);

/** The ErrorInfo reason of a status whose sender did not set one: UNAVAILABLE, DEADLINE_EXCEEDED, INTERNAL and the rest may have applied. */
export function reasonOf(grpcStatus: number): ErrorReason {
  return notAppliedStatuses.has(grpcStatus) ? ErrorReason.notApplied : ErrorReason.outcomeUnknown;
}

/** Trailers carrying a google.rpc.Status with the reason (and a RetryInfo when retryAfterMs is set). */
export function statusMetadata(grpcStatus: number, message: string, details: StatusDetails = {}): Metadata {
  const metadata = new Metadata();
  metadata.set(statusDetailsKey, encodeStatusDetails(grpcStatus, message, { ...details, reason: details.reason ?? reasonOf(grpcStatus) }));
  return metadata;
}

/** A failure as a status: code, message, and the google.rpc.Status bytes of its trailer with its ErrorInfo reason. */
export interface StatusParts {
  code: number;
  details: string;
  reason: string;
  statusDetails: Buffer;
}

/**
 * Server side: any thrown value as the status it is answered with (for a
 * failure answered inside a stream's message rather than as the call's
 * status). changesNothing: as for toServiceError.
 */
export function toStatusParts(thrown: unknown, changesNothing = false): StatusParts {
  const { code, details, reason, retryAfterMs, metadata } = statusOf(thrown, changesNothing);
  return { code, details, reason, statusDetails: encodeStatusDetails(code, details, { reason, retryAfterMs, metadata }) };
}

function statusOf(
  thrown: unknown,
  changesNothing: boolean,
): { code: number; details: string; reason: string; retryAfterMs?: number; metadata?: Record<string, string> } {
  // A storage error no writer mapped still gets its status, if not its owner.
  const error = storageError(thrown, "this server's");
  let code: number;
  let details: string;
  let reason: string | undefined;
  let retryAfterMs: number | undefined;
  let metadata: Record<string, string> | undefined;
  if (error instanceof TallyError) {
    code = grpcStatusOf(error.code);
    details = error.message;
    reason = error.reason;
    retryAfterMs = error.retryAfterMs;
    metadata = error.metadata;
  } else if (isServiceError(error)) {
    code = error.code;
    details = error.details;
  } else {
    code = status.INTERNAL;
    details = `internal error: ${error instanceof Error ? error.message : String(error)}`;
  }
  if (changesNothing) reason = ErrorReason.notApplied;
  return {
    code,
    details,
    reason: reason ?? reasonOf(code),
    ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
    ...(metadata === undefined ? {} : { metadata }),
  };
}

/**
 * Server side: any thrown value becomes a ServiceError with the right status
 * and its details. changesNothing: the call is a read, so whatever failed,
 * nothing was applied.
 */
export function toServiceError(thrown: unknown, changesNothing = false): Partial<ServiceError> {
  const { code, details, reason, retryAfterMs, metadata } = statusOf(thrown, changesNothing);
  return { code, details, metadata: statusMetadata(code, details, { reason, retryAfterMs, metadata }) };
}

/** A gRPC error as received from a call (it carries a numeric code). */
export function isServiceError(error: unknown): error is ServiceError {
  return typeof error === 'object' && error !== null && typeof (error as ServiceError).code === 'number' && 'details' in error;
}

/** Client side: a failed call becomes a TallyError, keeping the server's words. */
export function fromServiceError(error: unknown): TallyError {
  if (error instanceof TallyError) return error;
  if (isServiceError(error)) {
    const bytes = error.metadata?.get(statusDetailsKey)[0];
    const details = Buffer.isBuffer(bytes) ? decodeStatusDetails(bytes) : undefined;
    return new TallyError(errorCodeOfGrpcStatus(error.code), error.details || error.message, error.code, {
      reason: details?.reason,
      retryAfterMs: details?.retryAfterMs,
      metadata: details?.metadata,
      cause: error,
    });
  }
  return new TallyError(ErrorCode.internal, error instanceof Error ? error.message : String(error), undefined, { cause: error });
}
