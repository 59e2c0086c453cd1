// Lean codecs for the public hot path: Increment and IncrementBatch requests
// and responses, wire bytes straight to and from plain objects, with an int64
// as a number when exact as one (a bigint past 2^53) instead of a decimal
// string, and one shared empty Buffer for every absent key. Reading follows
// protobufjs 7.6 (what proto-loader decodes with) step for step: the same
// bytes are accepted with the same values, and the same bytes are refused with
// the same error text (test/unit/counter-codec.test.ts holds the two equal).
// Must not import grpc-js or any server code: @tally/client ships this file.
import assert from 'node:assert';

/** An IncrementRequest as the router reads it. */
export interface LeanIncrementRequest {
  counter: string;
  /** int64: a number when exact as one (|amount| <= 2^53 - 1), else a bigint. Absent: 0. */
  amount: number | bigint;
  /** A view into the request's bytes; absent or empty: the one shared empty Buffer (never written to). */
  idempotencyKey: Buffer;
}

export interface LeanIncrementBatchRequest {
  items: LeanIncrementRequest[];
}

export interface LeanIncrementResponse {
  applied: boolean;
  shard: number;
}

export interface LeanIncrementBatchResponse {
  results: LeanIncrementResponse[];
}

/** A protobufjs Long or anything with its two halves. */
interface Int64Halves {
  low: number;
  high: number;
}

/**
 * What the encoders take: the shapes proto-loader's serializers take for these
 * messages (int64 as a number, bigint, decimal string or Long; bytes as a
 * Buffer, Uint8Array or base64 string), absent fields left out.
 */
export interface IncrementRequestInput {
  counter?: string | null;
  amount?: number | bigint | string | Int64Halves | null;
  idempotencyKey?: Uint8Array | string | null;
}

export interface IncrementBatchRequestInput {
  items?: readonly IncrementRequestInput[] | null;
}

export interface IncrementResponseInput {
  applied?: boolean | null;
  shard?: number | null;
}

export interface IncrementBatchResponseInput {
  results?: readonly IncrementResponseInput[] | null;
}

/** Every absent or empty key: zero bytes, so sharing it cannot leak a write. */
const emptyKey: Buffer = Buffer.alloc(0);

/** protobufjs's nesting bound (util.recursionLimit), for groups skipped in unknown fields. */
const nestingDepthMax = 100;

const twoTo32 = 4294967296;
/** |value| < 2^53: the high half of a safe integer's magnitude is below 2^21. */
const safeHighBound = 0x200000;

// ---------------------------------------------------------------------------
// Reading. One message is decoded at a time and synchronously, so the reader's
// state lives here rather than in an object per call.

let buf: Buffer = emptyKey;
let pos = 0;
let len = 0;
/** The halves of the last varint64 read (readLongVarint). */
let varintLow = 0;
let varintHigh = 0;
/** The last counter name read and where its bytes were: a repeated name is the same string, not a new one. */
let lastName = '';
let lastNameStart = 0;
let lastNameBytes = -1;

// protobufjs's words, so a malformed request's status message stays the same.
function indexOutOfRange(writeLength?: number): RangeError {
  return new RangeError(`index out of range: ${pos} + ${writeLength || 1} > ${len}`);
}

function startReading(bytes: Uint8Array): void {
  buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  pos = 0;
  len = buf.length;
  lastNameBytes = -1;
}

function stopReading(): void {
  // Not holding on to the last request's bytes (or a name) between calls.
  buf = emptyKey;
  lastName = '';
  lastNameBytes = -1;
}

function readVarint32NearEnd(): number {
  let value = 0;
  for (let index = 0; index < 4; ++index) {
    if (pos >= len) throw indexOutOfRange();
    const byte = buf[pos++]!;
    value = (value | ((byte & 127) << (index * 7))) >>> 0;
    if (byte < 128) return value;
  }
  throw indexOutOfRange();
}

/** protobufjs Reader#uint32: tags, lengths, uint32 and bool fields. */
function readUint32(): number {
  if (len - pos < 5) {
    if (pos >= len) throw indexOutOfRange();
    if (buf[pos]! >= 128) return readVarint32NearEnd();
  }
  let byte = buf[pos++]!;
  let value = byte & 127;
  if (byte < 128) return value;
  byte = buf[pos++]!;
  value = (value | ((byte & 127) << 7)) >>> 0;
  if (byte < 128) return value;
  byte = buf[pos++]!;
  value = (value | ((byte & 127) << 14)) >>> 0;
  if (byte < 128) return value;
  byte = buf[pos++]!;
  value = (value | ((byte & 127) << 21)) >>> 0;
  if (byte < 128) return value;
  byte = buf[pos++]!;
  value = (value | ((byte & 15) << 28)) >>> 0;
  if (byte < 128) return value;
  // A longer varint's last five bytes are skipped unread, as protobufjs does.
  if ((pos += 5) > len) {
    pos = len;
    throw indexOutOfRange(10);
  }
  return value;
}

/**
 * protobufjs's readLongVarint, into varintLow/varintHigh. Its quirks are kept
 * on purpose (near the end, a fourth byte is taken without a bounds check and
 * ends the varint; a tenth byte's high bits are dropped): equal acceptance is
 * the contract, not a stricter reader.
 */
function readLongVarint(): void {
  let low = 0;
  let high: number;
  let index = 0;
  let byte: number;
  if (len - pos > 4) {
    for (; index < 4; ++index) {
      byte = buf[pos++]!;
      low = (low | ((byte & 127) << (index * 7))) >>> 0;
      if (byte < 128) {
        varintLow = low;
        varintHigh = 0;
        return;
      }
    }
    byte = buf[pos++]!;
    low = (low | ((byte & 127) << 28)) >>> 0;
    high = ((byte & 127) >> 4) >>> 0;
    if (byte < 128) {
      varintLow = low;
      varintHigh = high;
      return;
    }
    index = 0;
  } else {
    for (; index < 3; ++index) {
      if (pos >= len) throw indexOutOfRange();
      byte = buf[pos++]!;
      low = (low | ((byte & 127) << (index * 7))) >>> 0;
      if (byte < 128) {
        varintLow = low;
        varintHigh = 0;
        return;
      }
    }
    // Past the end this reads undefined, i.e. 0, as protobufjs does.
    low = (low | ((buf[pos++]! & 127) << (index * 7))) >>> 0;
    varintLow = low;
    varintHigh = 0;
    return;
  }
  if (len - pos > 4) {
    for (; index < 5; ++index) {
      byte = buf[pos++]!;
      high = (high | ((byte & 127) << (index * 7 + 3))) >>> 0;
      if (byte < 128) {
        varintLow = low;
        varintHigh = high;
        return;
      }
    }
  } else {
    for (; index < 5; ++index) {
      if (pos >= len) throw indexOutOfRange();
      byte = buf[pos++]!;
      high = (high | ((byte & 127) << (index * 7 + 3))) >>> 0;
      if (byte < 128) {
        varintLow = low;
        varintHigh = high;
        return;
      }
    }
  }
  throw new Error('invalid varint encoding');
}

/** A signed int64 from its two halves: a number when exact as one, else a bigint. */
function int64Of(low: number, high: number): number | bigint {
  if (high < safeHighBound) return high * twoTo32 + low;
  if (high >= 0x80000000) {
    // Negative: its magnitude is the two's complement.
    let magnitudeLow = ~low >>> 0;
    let magnitudeHigh = ~high >>> 0;
    if (++magnitudeLow > 0xffffffff) {
      magnitudeLow = 0;
      magnitudeHigh = (magnitudeHigh + 1) >>> 0;
    }
    if (magnitudeHigh < safeHighBound) return -(magnitudeHigh * twoTo32 + magnitudeLow);
  }
  return BigInt.asIntN(64, (BigInt(high) << 32n) | BigInt(low));
}

function readInt64(): number | bigint {
  readLongVarint();
  return int64Of(varintLow, varintHigh);
}

/**
 * protobufjs BufferReader#string: a length past the end is cut at the end
 * (not refused), and invalid UTF-8 becomes U+FFFD (Node's decoder).
 */
function readString(): string {
  const sizeBytes = readUint32();
  const start = pos;
  pos = Math.min(pos + sizeBytes, len);
  const nameBytes = pos - start;
  if (nameBytes === lastNameBytes && sameBytes(lastNameStart, start, nameBytes)) return lastName;
  lastName = (buf as Buffer & { utf8Slice(start: number, end: number): string }).utf8Slice(start, pos);
  lastNameStart = start;
  lastNameBytes = nameBytes;
  return lastName;
}

function sameBytes(startA: number, startB: number, count: number): boolean {
  for (let index = 0; index < count; index++) if (buf[startA + index] !== buf[startB + index]) return false;
  return true;
}

/** protobufjs Reader#bytes: a view into the message (never a copy); empty: the shared empty key. */
function readBytes(): Buffer {
  const sizeBytes = readUint32();
  const start = pos;
  const end = pos + sizeBytes;
  if (end > len) throw indexOutOfRange(sizeBytes);
  pos = end;
  return sizeBytes === 0 ? emptyKey : buf.subarray(start, end);
}

function skip(sizeBytes?: number): void {
  if (sizeBytes !== undefined) {
    if (pos + sizeBytes > len) throw indexOutOfRange(sizeBytes);
    pos += sizeBytes;
    return;
  }
  do {
    if (pos >= len) throw indexOutOfRange();
  } while (buf[pos++]! & 128);
}

/** protobufjs Reader#skipType: an unknown field of any wire type, groups included. */
function skipType(wireType: number, depth: number): void {
  if (depth > nestingDepthMax) throw new Error('maximum nesting depth exceeded');
  switch (wireType) {
    case 0:
      skip();
      break;
    case 1:
      skip(8);
      break;
    case 2:
      skip(readUint32());
      break;
    case 3:
      while ((wireType = readUint32() & 7) !== 4) skipType(wireType, depth + 1);
      break;
    case 5:
      skip(4);
      break;
    default:
      throw new Error(`invalid wire type ${wireType} at offset ${pos}`);
  }
}

/**
 * An embedded message of `sizeBytes` at pos: read with len narrowed to its
 * end, which it must reach exactly (protobufjs's generated decoder).
 */
function readEmbedded<T>(sizeBytes: number, depth: number, read: (end: number, depth: number) => T): T {
  const end = pos + sizeBytes;
  if (end > len) throw new RangeError('index out of range');
  const outerLen = len;
  len = end;
  const message = read(end, depth);
  if (pos !== end) throw new RangeError('index out of range');
  len = outerLen;
  return message;
}

// The field switch of each generated decoder. A known field number is read by
// its declared type whatever the wire type says (as protobufjs does).

function readIncrementRequest(end: number, depth: number): LeanIncrementRequest {
  let counter = '';
  let amount: number | bigint = 0;
  let idempotencyKey = emptyKey;
  while (pos < end) {
    const tag = readUint32();
    switch (tag >>> 3) {
      case 1:
        counter = readString();
        break;
      case 2:
        amount = readInt64();
        break;
      case 3:
        idempotencyKey = readBytes();
        break;
      default:
        skipType(tag & 7, depth);
    }
  }
  return { counter, amount, idempotencyKey };
}

function readIncrementBatchRequest(end: number, depth: number): LeanIncrementBatchRequest {
  const items: LeanIncrementRequest[] = [];
  while (pos < end) {
    const tag = readUint32();
    if (tag >>> 3 === 1) items.push(readEmbedded(readUint32(), depth + 1, readIncrementRequest));
    else skipType(tag & 7, depth);
  }
  return { items };
}

function readIncrementResponse(end: number, depth: number): LeanIncrementResponse {
  let applied = false;
  let shard = 0;
  while (pos < end) {
    const tag = readUint32();
    switch (tag >>> 3) {
      case 1:
        applied = readUint32() !== 0;
        break;
      case 2:
        shard = readUint32();
        break;
      default:
        skipType(tag & 7, depth);
    }
  }
  return { applied, shard };
}

function readIncrementBatchResponse(end: number, depth: number): LeanIncrementBatchResponse {
  const results: LeanIncrementResponse[] = [];
  while (pos < end) {
    const tag = readUint32();
    if (tag >>> 3 === 1) results.push(readEmbedded(readUint32(), depth + 1, readIncrementResponse));
    else skipType(tag & 7, depth);
  }
  return { results };
}

function decodeWith<T>(bytes: Uint8Array, read: (end: number, depth: number) => T): T {
  startReading(bytes);
  try {
    return read(len, 0);
  } finally {
    stopReading();
  }
}

export function decodeIncrementRequest(bytes: Uint8Array): LeanIncrementRequest {
  return decodeWith(bytes, readIncrementRequest);
}

export function decodeIncrementBatchRequest(bytes: Uint8Array): LeanIncrementBatchRequest {
  return decodeWith(bytes, readIncrementBatchRequest);
}

export function decodeIncrementResponse(bytes: Uint8Array): LeanIncrementResponse {
  return decodeWith(bytes, readIncrementResponse);
}

export function decodeIncrementBatchResponse(bytes: Uint8Array): LeanIncrementBatchResponse {
  return decodeWith(bytes, readIncrementBatchResponse);
}

// ---------------------------------------------------------------------------
// Writing: sizes first, then one Buffer written front to back. Empty fields
// (proto3 defaults) are left out, so bytes may differ from protobufjs's while
// every decoder reads the same message.

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

function varint32Size(value: number): number {
  return value < 128 ? 1 : value < 16384 ? 2 : value < 2097152 ? 3 : value < 268435456 ? 4 : 5;
}

/** protobufjs LongBits#length. */
function varint64Size(low: number, high: number): number {
  if (high === 0) return varint32Size(low);
  const part1 = ((low >>> 28) | (high << 4)) >>> 0;
  const part2 = high >>> 24;
  if (part2 !== 0) return part2 < 128 ? 9 : 10;
  return part1 < 16384 ? (part1 < 128 ? 5 : 6) : part1 < 2097152 ? 7 : 8;
}

/** The halves (two's complement) of an int64 given as the encoders take it, into varintLow/varintHigh. */
function setInt64Halves(amount: IncrementRequestInput['amount']): void {
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

function keyBytesOf(key: IncrementRequestInput['idempotencyKey']): Uint8Array {
  if (key === undefined || key === null) return emptyKey;
  // proto-loader's serializer reads a string key as base64.
  return typeof key === 'string' ? Buffer.from(key, 'base64') : key;
}

/** UTF-8 size of a name; ASCII is counted here, anything else by Node. */
function utf8Size(text: string): number {
  const length = text.length;
  if (length > 64) return Buffer.byteLength(text, 'utf8');
  for (let index = 0; index < length; index++) if (text.charCodeAt(index) >= 0x80) return Buffer.byteLength(text, 'utf8');
  return length;
}

let out: Buffer = emptyKey;
let outPos = 0;

function writeVarint32(value: number): void {
  while (value > 127) {
    out[outPos++] = (value & 127) | 128;
    value >>>= 7;
  }
  out[outPos++] = value;
}

function writeVarint64(low: number, high: number): void {
  while (high !== 0) {
    out[outPos++] = (low & 127) | 128;
    low = ((low >>> 7) | (high << 25)) >>> 0;
    high >>>= 7;
  }
  writeVarint32(low);
}

function writeName(text: string, sizeBytes: number): void {
  if (sizeBytes === text.length && sizeBytes <= 64) {
    for (let index = 0; index < sizeBytes; index++) out[outPos++] = text.charCodeAt(index);
    return;
  }
  outPos += out.write(text, outPos, sizeBytes, 'utf8');
}

function writeBytes(bytes: Uint8Array): void {
  out.set(bytes, outPos);
  outPos += bytes.length;
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
}

function finishWriting(sizeBytes: number): Buffer {
  assert.equal(outPos, sizeBytes, 'counter codec: bytes written differ from the size computed');
  const written = out;
  out = emptyKey;
  return written;
}

export function encodeIncrementRequest(request: IncrementRequestInput): Buffer {
  const sizeBytes = incrementRequestSize(request, 0);
  out = Buffer.allocUnsafe(sizeBytes);
  outPos = 0;
  writeIncrementRequest(request, 0);
  return finishWriting(sizeBytes);
}

export function encodeIncrementBatchRequest(request: IncrementBatchRequestInput): Buffer {
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
  out = Buffer.allocUnsafe(sizeBytes);
  outPos = 0;
  for (let index = 0; index < count; index++) {
    out[outPos++] = 0x0a; // field 1, length-delimited
    writeVarint32(itemSizes[index]!);
    writeIncrementRequest(items[index]!, index);
  }
  return finishWriting(sizeBytes);
}

function incrementResponseSize(response: IncrementResponseInput): number {
  const shard = (response.shard ?? 0) >>> 0;
  return (response.applied ? 2 : 0) + (shard !== 0 ? 1 + varint32Size(shard) : 0);
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
}

export function encodeIncrementResponse(response: IncrementResponseInput): Buffer {
  const sizeBytes = incrementResponseSize(response);
  out = Buffer.allocUnsafe(sizeBytes);
  outPos = 0;
  writeIncrementResponse(response);
  return finishWriting(sizeBytes);
}

export function encodeIncrementBatchResponse(response: IncrementBatchResponseInput): Buffer {
  const results = response.results ?? [];
  let sizeBytes = 0;
  for (const result of results) {
    const resultBytes = incrementResponseSize(result);
    sizeBytes += 1 + varint32Size(resultBytes) + resultBytes;
  }
  out = Buffer.allocUnsafe(sizeBytes);
  outPos = 0;
  for (const result of results) {
    out[outPos++] = 0x0a; // field 1, length-delimited
    writeVarint32(incrementResponseSize(result));
    writeIncrementResponse(result);
  }
  return finishWriting(sizeBytes);
}

// ---------------------------------------------------------------------------

/** The four functions of each method, in grpc-js's names for them. */
export const leanIncrementCodecs = {
  Increment: {
    requestSerialize: encodeIncrementRequest,
    requestDeserialize: decodeIncrementRequest,
    responseSerialize: encodeIncrementResponse,
    responseDeserialize: decodeIncrementResponse,
  },
  IncrementBatch: {
    requestSerialize: encodeIncrementBatchRequest,
    requestDeserialize: decodeIncrementBatchRequest,
    responseSerialize: encodeIncrementBatchResponse,
    responseDeserialize: decodeIncrementBatchResponse,
  },
} as const;

/**
 * A copy of counter.v1.CounterService's definition (proto-loader's or
 * grpc-js's) whose Increment and IncrementBatch carry the lean codecs; every
 * other method keeps proto-loader's. For a server's addService and for a
 * client constructor alike.
 */
export function withLeanIncrementCodecs<Definition extends object>(service: Definition): Definition {
  const patched = { ...service } as Record<string, unknown>;
  for (const [name, codecs] of Object.entries(leanIncrementCodecs)) {
    const method = patched[name];
    assert(typeof method === 'object' && method !== null, `counter codec: the service has no method ${name}`);
    patched[name] = { ...method, ...codecs };
  }
  return patched as Definition;
}
