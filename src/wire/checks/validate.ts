// Input validation shared by the router and the client: names, keys, amounts,
// node addresses.
// Every failure is a TallyError with the code docs/guarantees.md names (G7).
import { ErrorCode, TallyError } from '../errors/errors.ts';
import {
  counterNameBytesMax,
  idempotencyKeyBytesMax,
  nodeAddressBytesMax,
  regionNameBytesMax,
  INT64_MAX,
  INT64_MIN,
  UINT64_MAX,
} from './client-limits.ts';
import { splitHostPort } from './address.ts';

// C0 and C1 control characters and DEL: matching them is the point.
// eslint-disable-next-line no-control-regex
const controlCharacter = /[\u0000-\u001f\u007f-\u009f]/;
const loneSurrogate = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

export function validateCounterName(name: unknown): string {
  if (typeof name !== 'string' || name.length === 0) {
    throw new TallyError(ErrorCode.invalidArgument, 'counter name is empty');
  }
  return checkNameText(name, 'counter name');
}

/** A ListCounters prefix: empty (every counter) or text a counter name could start with. */
export function validateCounterPrefix(prefix: unknown): string {
  if (typeof prefix !== 'string') throw new TallyError(ErrorCode.invalidArgument, 'prefix is not a string');
  return prefix === '' ? prefix : checkNameText(prefix, 'prefix');
}

/** The rules of a counter name's text, failures naming `what`. */
function checkNameText(text: string, what: string): string {
  const sizeBytes = Buffer.byteLength(text, 'utf8');
  if (sizeBytes > counterNameBytesMax) {
    throw new TallyError(ErrorCode.invalidArgument, `${what} is ${sizeBytes} bytes; the limit is ${counterNameBytesMax}`);
  }
  if (controlCharacter.test(text)) {
    throw new TallyError(ErrorCode.invalidArgument, `${what} contains a control character`);
  }
  // A lone surrogate has no UTF-8 form; the wire would silently turn it into U+FFFD.
  if (loneSurrogate.test(text)) {
    throw new TallyError(ErrorCode.invalidArgument, `${what} is not valid UTF-8`);
  }
  return text;
}

export function validateIdempotencyKey(key: Buffer | Uint8Array | undefined | null): Buffer {
  if (key === undefined || key === null) return Buffer.alloc(0);
  const buffer = Buffer.isBuffer(key) ? key : Buffer.from(key);
  if (buffer.length > idempotencyKeyBytesMax) {
    throw new TallyError(ErrorCode.invalidArgument, `idempotency key is ${buffer.length} bytes; the limit is ${idempotencyKeyBytesMax}`);
  }
  return buffer;
}

/** Parses a decimal int64 (as decoded from the wire or typed by a user). */
export function parseInt64(value: unknown, what: string): bigint {
  let parsed: bigint;
  if (typeof value === 'bigint') {
    parsed = value;
  } else if (typeof value === 'number' && Number.isSafeInteger(value)) {
    parsed = BigInt(value);
  } else if (typeof value === 'number' && Number.isInteger(value) && Math.abs(value) >= 2 ** 63) {
    throw new TallyError(ErrorCode.outOfRange, `${what} ${value} is beyond int64`);
  } else if (typeof value === 'string' && /^[+-]?\d{1,400}$/.test(value)) {
    parsed = BigInt(value);
  } else {
    throw new TallyError(ErrorCode.invalidArgument, `${what} is not an integer: ${String(value).slice(0, 40)}`);
  }
  if (parsed > INT64_MAX || parsed < INT64_MIN) {
    throw new TallyError(ErrorCode.outOfRange, `${what} ${parsed} is beyond int64`);
  }
  return parsed;
}

export function validateAmount(value: unknown): bigint {
  const amount = parseInt64(value, 'amount');
  if (amount === 0n) throw new TallyError(ErrorCode.invalidArgument, 'amount is 0; it must be non-zero');
  return amount;
}

const safeIntegerMax = BigInt(Number.MAX_SAFE_INTEGER);

/** A plain decimal of at most 15 digits, no leading zero, not 0: always a safe integer. */
const shortAmount = /^-?[1-9]\d{0,14}$/;

/**
 * validateAmount for the hot path: the same checks and errors, but the
 * amount is a number when it is exact as one (|amount| < 2^53), so callers
 * need no bigint arithmetic for everyday amounts; a bigint otherwise.
 */
export function validateAmountNumber(value: unknown): number | bigint {
  if (typeof value === 'string' && shortAmount.test(value)) return Number(value);
  if (typeof value === 'number' && Number.isSafeInteger(value) && value !== 0) return value;
  const amount = validateAmount(value);
  return amount <= safeIntegerMax && amount >= -safeIntegerMax ? Number(amount) : amount;
}

export function isInt64(value: bigint): boolean {
  return value <= INT64_MAX && value >= INT64_MIN;
}

/**
 * An int64 for a message being sent: a number when it is exact as one
 * (protobufjs encodes that without parsing a decimal string), else the
 * decimal string. Received int64s are always strings.
 */
export function toWireInt64(value: bigint): number | string {
  return value <= safeIntegerMax && value >= -safeIntegerMax ? Number(value) : value.toString();
}

/**
 * A membership member id: an unsigned 64-bit decimal integer (a bigint, a
 * safe-integer number or a string of digits). Throws INVALID_ARGUMENT
 * naming `what` otherwise.
 */
export function parseMemberId(value: unknown, what = 'member'): bigint {
  const text = typeof value === 'number' && !Number.isSafeInteger(value) ? '' : String(value);
  if (!/^\d{1,20}$/.test(text) || BigInt(text) > UINT64_MAX) {
    throw new TallyError(
      ErrorCode.invalidArgument,
      `${what} must be an unsigned 64-bit integer (0..${UINT64_MAX}), got ${JSON.stringify(String(value))}`,
    );
  }
  return BigInt(text);
}

/** A node address from a request: host:port, a host present, no more than a DNS name needs. */
export function validateNodeAddress(value: string, field: string): string {
  if (value.length === 0 || value.length > nodeAddressBytesMax)
    throw new TallyError(ErrorCode.invalidArgument, `${field} must be host:port (1-${nodeAddressBytesMax} bytes)`);
  const host = splitHostPort(value)?.host;
  if (host === undefined) throw new TallyError(ErrorCode.invalidArgument, `${field} must be host:port, got "${value}"`);
  if (host === '' || /[\s/]/.test(host)) throw new TallyError(ErrorCode.invalidArgument, `${field} must name a host, got "${value}"`);
  return value;
}

/** Lower-case letters, digits and '-', starting with a letter: safe in metric labels, hostnames and file names. */
const regionPattern = /^[a-z][a-z0-9-]*$/;

/** Whether `name` can name a region. */
export function isRegionName(name: string): boolean {
  return name.length >= 1 && name.length <= regionNameBytesMax && regionPattern.test(name);
}
