// Encoding of the lean ReadMany and ReadStream codecs (counter-codec.ts), on
// the writer of counter-codec-write.ts: sizes first, then one Buffer written
// front to back; empty fields left out.
import type {
  IncrementStreamErrorInput,
  Int64Input,
  Uint64Value,
  ReadManyRequestInput,
  ReadManyResponseInput,
  ReadStreamRequestInput,
  ReadStreamResponseInput,
  ReadResponseInput,
} from './counter-codec.ts';
import {
  varint32Size,
  varint64Size,
  utf8Size,
  writeVarint32,
  writeVarint64,
  writeName,
  writeBytes,
  finishWriting,
  startWriting,
  writeByte,
  varintLow,
  varintHigh,
  setInt64Halves,
  sequenceFieldSize,
  streamErrorSize,
  writeStreamError,
} from './counter-codec-write.ts';

// ReadMany. Per value of the response being encoded: the name's UTF-8 size and
// the halves of its three int64s (total, as_of_unix_ms, staleness_ms).
let valueNameBytes = new Int32Array(64);
let valueSizes = new Int32Array(64);
let valueLows = new Uint32Array(64 * 3);
let valueHighs = new Uint32Array(64 * 3);

function reserveValues(count: number): void {
  if (count <= valueNameBytes.length) return;
  const capacity = Math.max(count, valueNameBytes.length * 2);
  valueNameBytes = new Int32Array(capacity);
  valueSizes = new Int32Array(capacity);
  valueLows = new Uint32Array(capacity * 3);
  valueHighs = new Uint32Array(capacity * 3);
}

function textOf(text: string | null | undefined): string {
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
  writeByte(tag);
  writeVarint64(low, high);
}

function writeReadResponse(value: ReadResponseInput, index: number): void {
  const nameBytes = valueNameBytes[index]!;
  if (nameBytes > 0) {
    writeByte(0x0a); // field 1, length-delimited
    writeVarint32(nameBytes);
    writeName(textOf(value.counter), nameBytes);
  }
  writeInt64Field(0x10, index * 3); // field 2, varint
  if (value.exact) {
    writeByte(0x18); // field 3, varint
    writeByte(1);
  }
  writeInt64Field(0x20, index * 3 + 1); // field 4, varint
  writeInt64Field(0x28, index * 3 + 2); // field 5, varint
  const shards = (value.shards ?? 0) >>> 0;
  if (shards !== 0) {
    writeByte(0x30); // field 6, varint
    writeVarint32(shards);
  }
  for (const part of value.regionParts ?? []) {
    writeByte(0x3a); // field 7, length-delimited
    writeVarint32(part.length);
    writeBytes(part);
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
const readStreamSequenceTag = 0x78;
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
  startWriting(sizeBytes);
  for (let index = 0; index < count; index++) {
    writeByte(0x0a); // field 1, length-delimited
    writeVarint32(valueSizes[index]!);
    writeReadResponse(values[index]!, index);
  }
  if (sequenceBytes > 0) {
    sequenceFieldSize(sequence);
    writeByte(readStreamSequenceTag);
    writeVarint64(varintLow, varintHigh);
  }
  if (error !== undefined && error !== null) {
    writeByte(readStreamErrorTag);
    writeVarint32(errorBytes);
    writeStreamError(error, messageBytes, reasonBytes);
  }
  return finishWriting(sizeBytes);
}

/**
 * counter.v1.Consistency as protobufjs's fromObject takes it: a name it knows
 * or any number; anything else is the default (0, left out).
 */
function consistencyNumberOf(consistency: ReadManyRequestInput['consistency']): number {
  if (consistency === 'CACHED') return 1;
  if (typeof consistency === 'number') return consistency | 0;
  return 0;
}

export function encodeReadManyRequest(request: ReadManyRequestInput): Buffer {
  return encodeNames(request, undefined);
}

/** A ReadManyRequest's bytes followed by field 15, the sequence number. */
export function encodeReadStreamRequest(request: ReadStreamRequestInput): Buffer {
  return encodeNames(request, request.sequence);
}

function encodeNames(request: ReadManyRequestInput, sequence: Uint64Value | null | undefined): Buffer {
  const counters = request.counters ?? [];
  const count = counters.length;
  reserveValues(count);
  let sizeBytes = 0;
  for (let index = 0; index < count; index++) {
    const nameBytes = utf8Size(textOf(counters[index]));
    valueNameBytes[index] = nameBytes;
    // A repeated string writes every element, the empty ones too.
    sizeBytes += 1 + varint32Size(nameBytes) + nameBytes;
  }
  const consistency = consistencyNumberOf(request.consistency);
  // An int32 below 0 goes on the wire as a ten-byte varint (sign-extended to 64 bits).
  if (consistency !== 0) sizeBytes += 1 + (consistency < 0 ? 10 : varint32Size(consistency));
  const scope = request.scope === 'SCOPE_GLOBAL' ? 1 : typeof request.scope === 'number' ? request.scope | 0 : 0;
  if (scope !== 0) sizeBytes += 1 + (scope < 0 ? 10 : varint32Size(scope));
  const sequenceBytes = sequenceFieldSize(sequence);
  sizeBytes += sequenceBytes;
  startWriting(sizeBytes);
  for (let index = 0; index < count; index++) {
    const nameBytes = valueNameBytes[index]!;
    writeByte(0x0a); // field 1, length-delimited
    writeVarint32(nameBytes);
    writeName(textOf(counters[index]), nameBytes);
  }
  if (consistency !== 0) {
    writeByte(0x10); // field 2, varint
    if (consistency < 0) writeVarint64(consistency >>> 0, 0xffffffff);
    else writeVarint32(consistency);
  }
  if (scope !== 0) {
    writeByte(0x18); // field 3, varint
    if (scope < 0) writeVarint64(scope >>> 0, 0xffffffff);
    else writeVarint32(scope);
  }
  if (sequenceBytes > 0) {
    // Its halves again: a negative consistency's or scope's varint reused them.
    sequenceFieldSize(sequence);
    writeByte(readStreamSequenceTag);
    writeVarint64(varintLow, varintHigh);
  }
  return finishWriting(sizeBytes);
}
