// Encoding of the lean codecs (counter-codec.ts): sizes first, then one Buffer
// written front to back, with no Long, Writer operation or message object per
// item. Empty fields (proto3 defaults) are left out, so the bytes may differ
// from protobufjs's while every decoder reads the same message. This file
// holds the writer and what servers write per call (the Increment family and
// ReadMany's and ReadStream's answers), so that those writes call the writer
// within one module; counter-codec-write-read-many.ts (ReadMany's and
// ReadStream's requests, a client's) and src/wire/internal/read-shards-messages.ts
// (shard.proto's ReadShards answer) write with the primitives exported here.
// One message is written at a time, between startWriting and finishWriting.
import assert from 'node:assert';
import type {
  IncrementBatchRequestInput,
  IncrementBatchResponseInput,
  IncrementRequestInput,
  IncrementResponseInput,
  IncrementStreamErrorInput,
  IncrementStreamRequestInput,
  IncrementStreamResponseInput,
  Int64Input,
  Uint64Value,
  ReadManyResponseInput,
  ReadStreamResponseInput,
  ReadResponseInput,
} from './counter-codec-types.ts';

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

/** Per item of the message being encoded: the amount's halves and the name's UTF-8 size. */
let itemLows = new Uint32Array(128);
let itemHighs = new Uint32Array(128);
let itemNameBytes = new Int32Array(128);

function reserveItems(count: number): void {
  if (count <= itemLows.length) return;
  const capacity = Math.max(count, itemLows.length * 2);
  itemLows = new Uint32Array(capacity);
  itemHighs = new Uint32Array(capacity);
  itemNameBytes = new Int32Array(capacity);
}

export function keyBytesOf(key: IncrementRequestInput['idempotencyKey']): Uint8Array {
  if (key === undefined || key === null) return noBytes;
  // proto-loader's serializer reads a string key as base64.
  return typeof key === 'string' ? Buffer.from(key, 'base64') : key;
}

function nameOf(item: IncrementRequestInput): string {
  const counter = item.counter;
  return counter === undefined || counter === null ? '' : typeof counter === 'string' ? counter : String(counter);
}

/** An IncrementRequest's size without its framing; its halves and name size kept at slot `index`. */
function incrementRequestSize(item: IncrementRequestInput, index: number): number {
  const nameBytes = utf8Size(nameOf(item));
  setInt64Halves(item.amount);
  itemNameBytes[index] = nameBytes;
  itemLows[index] = varintLow;
  itemHighs[index] = varintHigh;
  const keyBytes = keyBytesOf(item.idempotencyKey).length;
  let sizeBytes = 0;
  if (nameBytes > 0) sizeBytes += 1 + varint32Size(nameBytes) + nameBytes;
  if ((varintLow | varintHigh) !== 0) sizeBytes += 1 + varint64Size(varintLow, varintHigh);
  if (keyBytes > 0) sizeBytes += 1 + varint32Size(keyBytes) + keyBytes;
  if (item.returnTotal === true) sizeBytes += 2;
  return sizeBytes;
}

function writeIncrementRequest(item: IncrementRequestInput, index: number): void {
  const nameBytes = itemNameBytes[index]!;
  if (nameBytes > 0) {
    out[outPos++] = 0x0a; // field 1, length-delimited
    writeVarint32(nameBytes);
    writeName(nameOf(item), nameBytes);
  }
  const low = itemLows[index]!;
  const high = itemHighs[index]!;
  if ((low | high) !== 0) {
    out[outPos++] = 0x10; // field 2, varint
    writeVarint64(low, high);
  }
  const key = keyBytesOf(item.idempotencyKey);
  if (key.length > 0) {
    out[outPos++] = 0x1a; // field 3, length-delimited
    writeVarint32(key.length);
    writeBytes(key);
  }
  if (item.returnTotal === true) {
    out[outPos++] = 0x20; // field 4, varint
    out[outPos++] = 1;
  }
}

export function encodeIncrementRequest(request: IncrementRequestInput): Buffer {
  const sizeBytes = incrementRequestSize(request, 0);
  out = Buffer.allocUnsafe(sizeBytes);
  outPos = 0;
  writeIncrementRequest(request, 0);
  return finishWriting(sizeBytes);
}

export function encodeIncrementBatchRequest(request: IncrementBatchRequestInput): Buffer {
  return encodeItems(request, undefined);
}

/** An IncrementBatchRequest's bytes followed by field 2, the sequence number. */
export function encodeIncrementStreamRequest(request: IncrementStreamRequestInput): Buffer {
  return encodeItems(request, request.sequence);
}

/** The halves of a sequence number (uint64), into varintLow/varintHigh; the size of its field (0 when it is 0, left out). */
export function sequenceFieldSize(sequence: Uint64Value | null | undefined): number {
  if (sequence === undefined || sequence === null || sequence === 0 || sequence === 0n) return 0;
  setUint64Halves(typeof sequence === 'bigint' ? sequence : BigInt(sequence));
  return 1 + varint64Size(varintLow, varintHigh);
}

export function writeSequenceField(): void {
  out[outPos++] = 0x10; // field 2, varint
  writeVarint64(varintLow, varintHigh);
}

function encodeItems(request: IncrementBatchRequestInput, sequence: Uint64Value | null | undefined): Buffer {
  const items = request.items ?? [];
  const count = items.length;
  reserveItems(count);
  let sizeBytes = 0;
  const itemSizes = new Array<number>(count);
  for (let index = 0; index < count; index++) {
    const itemBytes = incrementRequestSize(items[index]!, index);
    itemSizes[index] = itemBytes;
    sizeBytes += 1 + varint32Size(itemBytes) + itemBytes;
  }
  // Last: setInt64Halves (the items' sizes) shares varintLow/varintHigh.
  const sequenceBytes = sequenceFieldSize(sequence);
  sizeBytes += sequenceBytes;
  out = Buffer.allocUnsafe(sizeBytes);
  outPos = 0;
  for (let index = 0; index < count; index++) {
    out[outPos++] = 0x0a; // field 1, length-delimited
    writeVarint32(itemSizes[index]!);
    writeIncrementRequest(items[index]!, index);
  }
  if (sequenceBytes > 0) writeSequenceField();
  return finishWriting(sizeBytes);
}

function incrementResponseSize(response: IncrementResponseInput): number {
  const shard = (response.shard ?? 0) >>> 0;
  let sizeBytes = (response.applied ? 2 : 0) + (shard !== 0 ? 1 + varint32Size(shard) : 0);
  if (response.total !== undefined && response.total !== null) {
    setInt64Halves(response.total);
    sizeBytes += 1 + varint64Size(varintLow, varintHigh);
  }
  return sizeBytes;
}

function writeIncrementResponse(response: IncrementResponseInput): void {
  if (response.applied) {
    out[outPos++] = 0x08; // field 1, varint
    out[outPos++] = 1;
  }
  const shard = (response.shard ?? 0) >>> 0;
  if (shard !== 0) {
    out[outPos++] = 0x10; // field 2, varint
    writeVarint32(shard);
  }
  // In a oneof (presence): written when set, 0 too. Its halves again: sizing the other results reused them.
  if (response.total !== undefined && response.total !== null) {
    setInt64Halves(response.total);
    out[outPos++] = 0x18; // field 3, varint
    writeVarint64(varintLow, varintHigh);
  }
}

export function encodeIncrementResponse(response: IncrementResponseInput): Buffer {
  const sizeBytes = incrementResponseSize(response);
  out = Buffer.allocUnsafe(sizeBytes);
  outPos = 0;
  writeIncrementResponse(response);
  return finishWriting(sizeBytes);
}

export function encodeIncrementBatchResponse(response: IncrementBatchResponseInput): Buffer {
  return encodeResults(response, undefined, undefined);
}

/** An IncrementBatchResponse's bytes followed by field 2, the sequence number, and field 3, the error. */
export function encodeIncrementStreamResponse(response: IncrementStreamResponseInput): Buffer {
  return encodeResults(response, response.sequence, response.error);
}

export function streamErrorSize(error: IncrementStreamErrorInput, messageBytes: number, reasonBytes: number): number {
  const code = error.code | 0;
  return (
    (code !== 0 ? 1 + (code < 0 ? 10 : varint32Size(code)) : 0) +
    (messageBytes > 0 ? 1 + varint32Size(messageBytes) + messageBytes : 0) +
    (reasonBytes > 0 ? 1 + varint32Size(reasonBytes) + reasonBytes : 0) +
    (error.statusDetails.length > 0 ? 1 + varint32Size(error.statusDetails.length) + error.statusDetails.length : 0)
  );
}

export function writeStreamError(error: IncrementStreamErrorInput, messageBytes: number, reasonBytes: number): void {
  const code = error.code | 0;
  if (code !== 0) {
    out[outPos++] = 0x08; // field 1, varint
    if (code < 0) writeVarint64(code >>> 0, 0xffffffff);
    else writeVarint32(code);
  }
  if (messageBytes > 0) {
    out[outPos++] = 0x12; // field 2, length-delimited
    writeVarint32(messageBytes);
    outPos += out.write(error.message, outPos, messageBytes, 'utf8');
  }
  if (reasonBytes > 0) {
    out[outPos++] = 0x1a; // field 3, length-delimited
    writeVarint32(reasonBytes);
    outPos += out.write(error.reason, outPos, reasonBytes, 'utf8');
  }
  if (error.statusDetails.length > 0) {
    out[outPos++] = 0x22; // field 4, length-delimited
    writeVarint32(error.statusDetails.length);
    writeBytes(error.statusDetails);
  }
}

function encodeResults(
  response: IncrementBatchResponseInput,
  sequence: Uint64Value | null | undefined,
  error: IncrementStreamErrorInput | null | undefined,
): Buffer {
  const results = response.results ?? [];
  let sizeBytes = 0;
  for (const result of results) {
    const resultBytes = incrementResponseSize(result);
    sizeBytes += 1 + varint32Size(resultBytes) + resultBytes;
  }
  const sequenceBytes = sequenceFieldSize(sequence);
  sizeBytes += sequenceBytes;
  let errorBytes = 0;
  let messageBytes = 0;
  let reasonBytes = 0;
  if (error !== undefined && error !== null) {
    messageBytes = Buffer.byteLength(error.message, 'utf8');
    reasonBytes = Buffer.byteLength(error.reason, 'utf8');
    errorBytes = streamErrorSize(error, messageBytes, reasonBytes);
    sizeBytes += 1 + varint32Size(errorBytes) + errorBytes;
  }
  out = Buffer.allocUnsafe(sizeBytes);
  outPos = 0;
  for (const result of results) {
    out[outPos++] = 0x0a; // field 1, length-delimited
    writeVarint32(incrementResponseSize(result));
    writeIncrementResponse(result);
  }
  // Its halves again: a result's total reused them.
  if (sequenceBytes > 0) {
    sequenceFieldSize(sequence);
    writeSequenceField();
  }
  if (error !== undefined && error !== null) {
    out[outPos++] = 0x1a; // field 3, length-delimited
    writeVarint32(errorBytes);
    writeStreamError(error, messageBytes, reasonBytes);
  }
  return finishWriting(sizeBytes);
}

// ReadMany. Per value of the response being encoded: the name's UTF-8 size and
// the halves of its three int64s (total, as_of_unix_ms, staleness_ms).
export let valueNameBytes = new Int32Array(64);
let valueSizes = new Int32Array(64);
let valueLows = new Uint32Array(64 * 3);
let valueHighs = new Uint32Array(64 * 3);

export function reserveValues(count: number): void {
  if (count <= valueNameBytes.length) return;
  const capacity = Math.max(count, valueNameBytes.length * 2);
  valueNameBytes = new Int32Array(capacity);
  valueSizes = new Int32Array(capacity);
  valueLows = new Uint32Array(capacity * 3);
  valueHighs = new Uint32Array(capacity * 3);
}

export function textOf(text: string | null | undefined): string {
  return text === undefined || text === null ? '' : typeof text === 'string' ? text : String(text);
}

/** Size of a varint field (tag included) holding the int64 at slot `slot`, 0 when it is 0 (left out). */
function int64FieldSize(value: Int64Input | null | undefined, slot: number): number {
  setInt64Halves(value);
  valueLows[slot] = varintLow;
  valueHighs[slot] = varintHigh;
  return (varintLow | varintHigh) === 0 ? 0 : 1 + varint64Size(varintLow, varintHigh);
}

/** A ReadResponse's size without its framing; its name size and int64 halves kept at slot `index`. */
function readResponseSize(value: ReadResponseInput, index: number): number {
  const nameBytes = utf8Size(textOf(value.counter));
  valueNameBytes[index] = nameBytes;
  let sizeBytes = nameBytes > 0 ? 1 + varint32Size(nameBytes) + nameBytes : 0;
  sizeBytes += int64FieldSize(value.total, index * 3);
  if (value.exact) sizeBytes += 2;
  sizeBytes += int64FieldSize(value.asOfUnixMs, index * 3 + 1);
  sizeBytes += int64FieldSize(value.stalenessMs, index * 3 + 2);
  const shards = (value.shards ?? 0) >>> 0;
  if (shards !== 0) sizeBytes += 1 + varint32Size(shards);
  for (const part of value.regionParts ?? []) sizeBytes += 1 + varint32Size(part.length) + part.length;
  return sizeBytes;
}

function writeInt64Field(tag: number, slot: number): void {
  const low = valueLows[slot]!;
  const high = valueHighs[slot]!;
  if ((low | high) === 0) return;
  out[outPos++] = tag;
  writeVarint64(low, high);
}

function writeReadResponse(value: ReadResponseInput, index: number): void {
  const nameBytes = valueNameBytes[index]!;
  if (nameBytes > 0) {
    out[outPos++] = 0x0a; // field 1, length-delimited
    writeVarint32(nameBytes);
    writeName(textOf(value.counter), nameBytes);
  }
  writeInt64Field(0x10, index * 3); // field 2, varint
  if (value.exact) {
    out[outPos++] = 0x18; // field 3, varint
    out[outPos++] = 1;
  }
  writeInt64Field(0x20, index * 3 + 1); // field 4, varint
  writeInt64Field(0x28, index * 3 + 2); // field 5, varint
  const shards = (value.shards ?? 0) >>> 0;
  if (shards !== 0) {
    out[outPos++] = 0x30; // field 6, varint
    writeVarint32(shards);
  }
  for (const part of value.regionParts ?? []) {
    out[outPos++] = 0x3a; // field 7, length-delimited
    writeVarint32(part.length);
    out.set(part, outPos);
    outPos += part.length;
  }
}

export function encodeReadManyResponse(response: ReadManyResponseInput): Buffer {
  return encodeValues(response, undefined, undefined);
}

/** A ReadManyResponse's bytes followed by field 15, the sequence number, and field 14, the error. */
export function encodeReadStreamResponse(response: ReadStreamResponseInput): Buffer {
  return encodeValues(response, response.sequence, response.error);
}

/** Field 15 (a ReadStream's sequence number), varint: its tag takes one byte. */
export const readStreamSequenceTag = 0x78;
/** Field 14 (a ReadStream page's error), length-delimited. */
const readStreamErrorTag = 0x72;

function encodeValues(
  response: ReadManyResponseInput,
  sequence: Uint64Value | null | undefined,
  error: IncrementStreamErrorInput | null | undefined,
): Buffer {
  const values = response.values ?? [];
  const count = values.length;
  reserveValues(count);
  let sizeBytes = 0;
  for (let index = 0; index < count; index++) {
    const valueBytes = readResponseSize(values[index]!, index);
    valueSizes[index] = valueBytes;
    sizeBytes += 1 + varint32Size(valueBytes) + valueBytes;
  }
  const sequenceBytes = sequenceFieldSize(sequence);
  sizeBytes += sequenceBytes;
  let errorBytes = 0;
  let messageBytes = 0;
  let reasonBytes = 0;
  if (error !== undefined && error !== null) {
    messageBytes = Buffer.byteLength(error.message, 'utf8');
    reasonBytes = Buffer.byteLength(error.reason, 'utf8');
    errorBytes = streamErrorSize(error, messageBytes, reasonBytes);
    sizeBytes += 1 + varint32Size(errorBytes) + errorBytes;
  }
  out = Buffer.allocUnsafe(sizeBytes);
  outPos = 0;
  for (let index = 0; index < count; index++) {
    out[outPos++] = 0x0a; // field 1, length-delimited
    writeVarint32(valueSizes[index]!);
    writeReadResponse(values[index]!, index);
  }
  if (sequenceBytes > 0) {
    sequenceFieldSize(sequence);
    out[outPos++] = readStreamSequenceTag;
    writeVarint64(varintLow, varintHigh);
  }
  if (error !== undefined && error !== null) {
    out[outPos++] = readStreamErrorTag;
    writeVarint32(errorBytes);
    writeStreamError(error, messageBytes, reasonBytes);
  }
  return finishWriting(sizeBytes);
}
