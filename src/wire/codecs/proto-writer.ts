// The writing half of the lean codecs (counter-codec-write.ts, and
// shard.proto's ReadShards answer in src/wire/internal/read-shards-messages.ts):
// sizes are computed first, then one Buffer is written front to back. One
// message is written at a time: the buffer being written is this module's
// state, between startWriting and finishWriting.
import assert from 'node:assert';
import type { Int64Input } from './counter-codec.ts';

/** A placeholder for the buffer being written between messages. */
export const noBytes: Buffer = Buffer.alloc(0);
export const twoTo32 = 4294967296;

export function varint32Size(value: number): number {
  return value < 128 ? 1 : value < 16384 ? 2 : value < 2097152 ? 3 : value < 268435456 ? 4 : 5;
}

/** protobufjs LongBits#length. */
export function varint64Size(low: number, high: number): number {
  if (high === 0) return varint32Size(low);
  const part1 = ((low >>> 28) | (high << 4)) >>> 0;
  const part2 = high >>> 24;
  if (part2 !== 0) return part2 < 128 ? 9 : 10;
  return part1 < 16384 ? (part1 < 128 ? 5 : 6) : part1 < 2097152 ? 7 : 8;
}

/** UTF-8 size of a name; ASCII is counted here, anything else by Node. */
export function utf8Size(text: string): number {
  const length = text.length;
  if (length > 64) return Buffer.byteLength(text, 'utf8');
  for (let index = 0; index < length; index++) if (text.charCodeAt(index) >= 0x80) return Buffer.byteLength(text, 'utf8');
  return length;
}

let out: Buffer = noBytes;
let outPos = 0;

export function writeVarint32(value: number): void {
  while (value > 127) {
    out[outPos++] = (value & 127) | 128;
    value >>>= 7;
  }
  out[outPos++] = value;
}

export function writeVarint64(low: number, high: number): void {
  while (high !== 0) {
    out[outPos++] = (low & 127) | 128;
    low = ((low >>> 7) | (high << 25)) >>> 0;
    high >>>= 7;
  }
  writeVarint32(low);
}

export function writeName(text: string, sizeBytes: number): void {
  if (sizeBytes === text.length && sizeBytes <= 64) {
    for (let index = 0; index < sizeBytes; index++) out[outPos++] = text.charCodeAt(index);
    return;
  }
  outPos += out.write(text, outPos, sizeBytes, 'utf8');
}

export function writeBytes(bytes: Uint8Array): void {
  out.set(bytes, outPos);
  outPos += bytes.length;
}

export function finishWriting(sizeBytes: number): Buffer {
  assert.equal(outPos, sizeBytes, 'counter codec: bytes written differ from the size computed');
  const written = out;
  out = noBytes;
  return written;
}

/** Starts writing a message of exactly sizeBytes. */
export function startWriting(sizeBytes: number): void {
  out = Buffer.allocUnsafe(sizeBytes);
  outPos = 0;
}

/** One byte: a tag, or a bool's value. */
export function writeByte(value: number): void {
  out[outPos++] = value;
}

/** Text of sizeBytes UTF-8 bytes, written by Node. */
export function writeUtf8(text: string, sizeBytes: number): void {
  outPos += out.write(text, outPos, sizeBytes, 'utf8');
}

/** The halves of the int64 setInt64Halves last converted. */
export let varintLow = 0;
export let varintHigh = 0;

const safeMax = BigInt(Number.MAX_SAFE_INTEGER);

/** The halves (two's complement) of an int64 given as the encoders take it, into varintLow/varintHigh. */
export function setInt64Halves(amount: Int64Input | null | undefined): void {
  // A total is a bigint, nearly always small: as a number it costs no bigint arithmetic.
  if (typeof amount === 'bigint' && amount <= safeMax && amount >= -safeMax) amount = Number(amount);
  if (amount === undefined || amount === null) {
    varintLow = 0;
    varintHigh = 0;
  } else if (typeof amount === 'number' && Number.isSafeInteger(amount)) {
    const negative = amount < 0;
    const magnitude = negative ? -amount : amount;
    let low = magnitude >>> 0;
    let high = ((magnitude - low) / twoTo32) >>> 0;
    if (negative) {
      high = ~high >>> 0;
      low = ~low >>> 0;
      if (++low > 0xffffffff) {
        low = 0;
        high = (high + 1) >>> 0;
      }
    }
    varintLow = low;
    varintHigh = high;
  } else if (typeof amount === 'object') {
    varintLow = amount.low >>> 0;
    varintHigh = amount.high >>> 0;
  } else {
    const bits = BigInt.asUintN(64, int64BigintOf(amount));
    varintLow = Number(bits & 0xffffffffn);
    varintHigh = Number(bits >> 32n);
  }
}

function int64BigintOf(amount: number | bigint | string): bigint {
  if (typeof amount === 'bigint') return amount;
  if (typeof amount === 'string' && /^[+-]?\d{1,20}$/.test(amount)) return BigInt(amount);
  if (typeof amount === 'number' && Number.isInteger(amount) && Math.abs(amount) < 2 ** 63) return BigInt(amount);
  throw new TypeError(`int64 expected, got ${typeof amount} ${String(amount).slice(0, 40)}`);
}

/** |value| below this zigzags to a safe integer (2|n| + 1 <= 2^53 - 1). */
const zigzagSafeMax = 2n ** 52n - 1n;
const uint64Max = 2n ** 64n - 1n;

/** The halves of a uint64 given as a bigint, into varintLow/varintHigh. */
export function setUint64Halves(value: bigint): void {
  assert(value >= 0n && value <= uint64Max, `uint64 out of range: ${value}`);
  if (value <= safeMax) {
    const small = Number(value);
    varintLow = small >>> 0;
    varintHigh = (small - varintLow) / twoTo32;
    return;
  }
  varintLow = Number(value & 0xffffffffn);
  varintHigh = Number(value >> 32n);
}

/** The halves of a sint64's zigzag form, into varintLow/varintHigh. */
export function setSint64Halves(value: bigint): void {
  if (value <= zigzagSafeMax && value >= -zigzagSafeMax) {
    const small = Number(value);
    const zigzag = small >= 0 ? small * 2 : -small * 2 - 1;
    varintLow = zigzag >>> 0;
    varintHigh = (zigzag - varintLow) / twoTo32;
    return;
  }
  setUint64Halves(BigInt.asUintN(64, (value << 1n) ^ (value >> 63n)));
}
