// Decoding of the lean codecs (counter-codec.ts): protobufjs 7.6's Reader and
// generated decoders, ported step for step so that acceptance, values and
// error texts stay the same, but writing plain objects with int64s as numbers
// (bigints past 2^53) and one shared empty key. This file holds the reader
// and the Increment family, the hottest path, so that its field loops call
// the reader within one module; counter-codec-read-many.ts (ReadMany and
// ReadStream) and src/wire/internal/read-shards-messages.ts (shard.proto's
// ReadShards) read with the primitives exported here. One message is read at a
// time: the bytes being read are this module's state, between decodeWith's
// start and end.
import type {
  IncrementColumns,
  LeanIncrementBatchRequest,
  LeanIncrementBatchResponse,
  LeanIncrementRequest,
  LeanIncrementResponse,
  LeanIncrementStreamError,
  LeanIncrementStreamRequest,
  LeanIncrementStreamResponse,
} from './counter-codec-types.ts';

/** Every absent or empty key: zero bytes, so sharing it cannot leak a write. */
export const emptyKey: Buffer = Buffer.alloc(0);

/** protobufjs's nesting bound (util.recursionLimit), for groups skipped in unknown fields. */
const nestingDepthMax = 100;

const twoTo32 = 4294967296;
/** |value| < 2^53: the high half of a safe integer's magnitude is below 2^21. */
const safeHighBound = 0x200000;

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
export function readUint32(): number {
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
export function readLongVarint(): void {
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
export function int64Of(low: number, high: number): number | bigint {
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

export function readUint64(): number | bigint {
  readLongVarint();
  return varintHigh < safeHighBound ? varintHigh * twoTo32 + varintLow : (BigInt(varintHigh) << 32n) | BigInt(varintLow);
}

export function readInt64(): number | bigint {
  readLongVarint();
  return int64Of(varintLow, varintHigh);
}

/**
 * protobufjs BufferReader#string: a length past the end is cut at the end
 * (not refused), and invalid UTF-8 becomes U+FFFD (Node's decoder).
 */
export function readString(): string {
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
export function readBytes(): Buffer {
  const sizeBytes = readUint32();
  const start = pos;
  const end = pos + sizeBytes;
  if (end > len) throw indexOutOfRange(sizeBytes);
  pos = end;
  return sizeBytes === 0 ? emptyKey : buf.subarray(start, end);
}

export function skip(sizeBytes?: number): void {
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
export function skipType(wireType: number, depth: number): void {
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
export function readEmbedded<T>(sizeBytes: number, depth: number, read: (end: number, depth: number) => T): T {
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

/** The embedded messages of repeated field 1 (a batch's items or results); other fields are skipped. */
export function readRepeatedFirstField<T>(end: number, depth: number, readItem: (end: number, depth: number) => T): T[] {
  const items: T[] = [];
  while (pos < end) {
    const tag = readUint32();
    if (tag >>> 3 === 1) items.push(readEmbedded(readUint32(), depth + 1, readItem));
    else skipType(tag & 7, depth);
  }
  return items;
}

export function readRepeatedUint64(into: (number | bigint)[], wireType: number): void {
  if (wireType !== 2) {
    into.push(readUint64());
    return;
  }
  // Packed: read within its own length, which it must fill exactly (protobufjs 7.6's generated decoder).
  const end = readUint32() + pos;
  if (end > len) throw new RangeError('index out of range');
  const outerLen = len;
  len = end;
  while (pos < end) into.push(readUint64());
  if (pos !== end) throw new RangeError('index out of range');
  len = outerLen;
}

export function decodeWith<T>(bytes: Uint8Array, read: (end: number, depth: number) => T): T {
  startReading(bytes);
  try {
    return read(len, 0);
  } finally {
    stopReading();
  }
}

/** Where the reader is in the message: a message reader loops while it is before its end. */
export function position(): number {
  return pos;
}

// The field switch of each generated decoder. A known field number is read by
// its declared type whatever the wire type says (as protobufjs does).

function readIncrementRequest(end: number, depth: number): LeanIncrementRequest {
  let counter = '';
  let amount: number | bigint = 0;
  let idempotencyKey = emptyKey;
  let returnTotal = false;
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
      case 4:
        returnTotal = readUint32() !== 0;
        break;
      default:
        skipType(tag & 7, depth);
    }
  }
  return { counter, amount, idempotencyKey, returnTotal };
}

function readIncrementBatchRequest(end: number, depth: number): LeanIncrementBatchRequest {
  return { items: readRepeatedFirstField(end, depth, readIncrementRequest) };
}

function readIncrementResponse(end: number, depth: number): LeanIncrementResponse {
  let applied = false;
  let shard = 0;
  let total: string | undefined;
  while (pos < end) {
    const tag = readUint32();
    switch (tag >>> 3) {
      case 1:
        applied = readUint32() !== 0;
        break;
      case 2:
        shard = readUint32();
        break;
      case 3:
        total = String(readInt64());
        break;
      default:
        skipType(tag & 7, depth);
    }
  }
  return total === undefined ? { applied, shard } : { applied, shard, total };
}

function readIncrementBatchResponse(end: number, depth: number): LeanIncrementBatchResponse {
  return { results: readRepeatedFirstField(end, depth, readIncrementResponse) };
}

// IncrementStream: a batch's fields (1) with a sequence number (2) and, in a response, an error (3).

function readIncrementStreamRequest(end: number, depth: number): LeanIncrementStreamRequest {
  const items: LeanIncrementRequest[] = [];
  let sequence: number | bigint = 0;
  while (pos < end) {
    const tag = readUint32();
    switch (tag >>> 3) {
      case 1:
        items.push(readEmbedded(readUint32(), depth + 1, readIncrementRequest));
        break;
      case 2:
        sequence = readUint64();
        break;
      default:
        skipType(tag & 7, depth);
    }
  }
  return { items, sequence };
}

// The router's decoding of a batch: straight into columns (counter.ts's
// IncrementColumns), one entry per item in each, no object per item. The
// same reads as readIncrementRequest, so the same bytes are accepted or
// refused with the same words.

/** The columns being filled (a module variable: readEmbedded takes no argument for it). */
let columnsTarget: IncrementColumns | undefined;

function readIncrementRequestInto(end: number, depth: number): void {
  let counter = '';
  let amount: number | bigint = 0;
  let idempotencyKey = emptyKey;
  let returnTotal = false;
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
      case 4:
        returnTotal = readUint32() !== 0;
        break;
      default:
        skipType(tag & 7, depth);
    }
  }
  const columns = columnsTarget!;
  const index = columns.counters.length;
  columns.counters.push(counter);
  columns.amounts.push(amount);
  columns.keys.push(idempotencyKey);
  if (columns.returnTotals !== undefined) columns.returnTotals.push(returnTotal);
  else if (returnTotal) (columns.returnTotals = new Array<boolean>(index).fill(false)).push(true);
}

/** The fields of IncrementBatchRequest (1, the items) and, withSequence, IncrementStreamRequest's 2; others skipped. */
function readColumnFields(end: number, depth: number, withSequence: boolean): IncrementColumns {
  const columns: IncrementColumns = { counters: [], amounts: [], keys: [], returnTotals: undefined, sequence: 0 };
  columnsTarget = columns;
  try {
    while (pos < end) {
      const tag = readUint32();
      const field = tag >>> 3;
      if (field === 1) readEmbedded(readUint32(), depth + 1, readIncrementRequestInto);
      else if (field === 2 && withSequence) columns.sequence = readUint64();
      else skipType(tag & 7, depth);
    }
  } finally {
    columnsTarget = undefined;
  }
  return columns;
}

function readIncrementBatchColumns(end: number, depth: number): IncrementColumns {
  return readColumnFields(end, depth, false);
}

function readIncrementStreamColumns(end: number, depth: number): IncrementColumns {
  return readColumnFields(end, depth, true);
}

export function readIncrementStreamError(end: number, depth: number): LeanIncrementStreamError {
  let code = 0;
  let message = '';
  let reason = '';
  let statusDetails = emptyKey;
  while (pos < end) {
    const tag = readUint32();
    switch (tag >>> 3) {
      case 1:
        code = readUint32() | 0;
        break;
      case 2:
        message = readString();
        break;
      case 3:
        reason = readString();
        break;
      case 4:
        // A copy: the error outlives the message's bytes.
        statusDetails = Buffer.from(readBytes());
        break;
      default:
        skipType(tag & 7, depth);
    }
  }
  return { code, message, reason, statusDetails };
}

function readIncrementStreamResponse(end: number, depth: number): LeanIncrementStreamResponse {
  const results: LeanIncrementResponse[] = [];
  let sequence: number | bigint = 0;
  let error: LeanIncrementStreamError | null = null;
  while (pos < end) {
    const tag = readUint32();
    switch (tag >>> 3) {
      case 1:
        results.push(readEmbedded(readUint32(), depth + 1, readIncrementResponse));
        break;
      case 2:
        sequence = readUint64();
        break;
      case 3:
        error = readEmbedded(readUint32(), depth + 1, readIncrementStreamError);
        break;
      default:
        skipType(tag & 7, depth);
    }
  }
  return { results, sequence, error };
}

export function decodeIncrementRequest(bytes: Uint8Array): LeanIncrementRequest {
  return decodeWith(bytes, readIncrementRequest);
}

export function decodeIncrementBatchRequest(bytes: Uint8Array): LeanIncrementBatchRequest {
  return decodeWith(bytes, readIncrementBatchRequest);
}

/** The router's IncrementBatchRequest: items as columns; accepts and refuses exactly what decodeIncrementBatchRequest does. */
export function decodeIncrementBatchColumns(bytes: Uint8Array): IncrementColumns {
  return decodeWith(bytes, readIncrementBatchColumns);
}

/** The router's IncrementStreamRequest: a batch's items as columns and its sequence number. */
export function decodeIncrementStreamColumns(bytes: Uint8Array): IncrementColumns {
  return decodeWith(bytes, readIncrementStreamColumns);
}

export function decodeIncrementResponse(bytes: Uint8Array): LeanIncrementResponse {
  return decodeWith(bytes, readIncrementResponse);
}

export function decodeIncrementBatchResponse(bytes: Uint8Array): LeanIncrementBatchResponse {
  return decodeWith(bytes, readIncrementBatchResponse);
}

export function decodeIncrementStreamRequest(bytes: Uint8Array): LeanIncrementStreamRequest {
  return decodeWith(bytes, readIncrementStreamRequest);
}

export function decodeIncrementStreamResponse(bytes: Uint8Array): LeanIncrementStreamResponse {
  return decodeWith(bytes, readIncrementStreamResponse);
}
