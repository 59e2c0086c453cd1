// The one operating-error type and its mapping to gRPC status codes.
// Callers match on `code`, never on message text.
import { status, type ServiceError, Metadata } from '@grpc/grpc-js';

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

export class TallyError extends Error {
  readonly code: ErrorCode;
  /** The gRPC status code on the wire (kept as received on the client side). */
  readonly grpcCode: number;
  constructor(code: ErrorCode, message: string, grpcCode?: number) {
    super(message);
    this.name = 'TallyError';
    this.code = code;
    this.grpcCode = grpcCode ?? grpcStatusByCode[code];
  }
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
 * 'SQLITE_IOERR_FSYNC', ...), recognised by its shape: common must not load
 * the native module, since the client imports common.
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

/** Server side: any thrown value becomes a ServiceError with the right status. */
export function toServiceError(thrown: unknown): Partial<ServiceError> {
  // A storage error no writer mapped still gets its status, if not its owner.
  const error = storageError(thrown, "this server's");
  if (error instanceof TallyError) {
    return { code: grpcStatusOf(error.code), details: error.message, metadata: new Metadata() };
  }
  if (isServiceError(error)) {
    return { code: error.code, details: error.details, metadata: new Metadata() };
  }
  const message = error instanceof Error ? error.message : String(error);
  return { code: status.INTERNAL, details: `internal error: ${message}`, metadata: new Metadata() };
}

/** A gRPC error as received from a call (it carries a numeric code). */
export function isServiceError(error: unknown): error is ServiceError {
  return typeof error === 'object' && error !== null && typeof (error as ServiceError).code === 'number' && 'details' in error;
}

/** Client side: a failed call becomes a TallyError, keeping the server's words. */
export function fromServiceError(error: unknown): TallyError {
  if (error instanceof TallyError) return error;
  if (isServiceError(error)) {
    return new TallyError(errorCodeOfGrpcStatus(error.code), error.details || error.message, error.code);
  }
  return new TallyError(ErrorCode.internal, error instanceof Error ? error.message : String(error));
}
