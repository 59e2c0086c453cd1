// Encoding of the lean Increment and ReadMany codecs (counter-codec.ts): sizes first, then
// one Buffer written front to back, with no Long, Writer operation or message
// object per item. Empty fields (proto3 defaults) are left out, so the bytes
// may differ from protobufjs's while every decoder reads the same message.
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
  ReadManyRequestInput,
  ReadManyResponseInput,
  ReadStreamRequestInput,
  ReadStreamResponseInput,
  ReadResponseInput,
} from './counter-codec.ts';
import {
  noBytes,
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
  writeUtf8,
  varintLow,
  varintHigh,
  setInt64Halves,
  setUint64Halves,
} from './proto-writer.ts';

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

function keyBytesOf(key: IncrementRequestInput['idempotencyKey']): Uint8Array {
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
    writeByte(0x0a); // field 1, length-delimited
    writeVarint32(nameBytes);
    writeName(nameOf(item), nameBytes);
  }
  const low = itemLows[index]!;
  const high = itemHighs[index]!;
  if ((low | high) !== 0) {
    writeByte(0x10); // field 2, varint
    writeVarint64(low, high);
  }
  const key = keyBytesOf(item.idempotencyKey);
  if (key.length > 0) {
    writeByte(0x1a); // field 3, length-delimited
    writeVarint32(key.length);
    writeBytes(key);
  }
  if (item.returnTotal === true) {
    writeByte(0x20); // field 4, varint
    writeByte(1);
  }
}

export function encodeIncrementRequest(request: IncrementRequestInput): Buffer {
  const sizeBytes = incrementRequestSize(request, 0);
  startWriting(sizeBytes);
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
function sequenceFieldSize(sequence: Uint64Value | null | undefined): number {
  if (sequence === undefined || sequence === null || sequence === 0 || sequence === 0n) return 0;
  setUint64Halves(typeof sequence === 'bigint' ? sequence : BigInt(sequence));
  return 1 + varint64Size(varintLow, varintHigh);
}

function writeSequenceField(): void {
  writeByte(0x10); // field 2, varint
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
  startWriting(sizeBytes);
  for (let index = 0; index < count; index++) {
    writeByte(0x0a); // field 1, length-delimited
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
    writeByte(0x08); // field 1, varint
    writeByte(1);
  }
  const shard = (response.shard ?? 0) >>> 0;
  if (shard !== 0) {
    writeByte(0x10); // field 2, varint
    writeVarint32(shard);
  }
  // In a oneof (presence): written when set, 0 too. Its halves again: sizing the other results reused them.
  if (response.total !== undefined && response.total !== null) {
    setInt64Halves(response.total);
    writeByte(0x18); // field 3, varint
    writeVarint64(varintLow, varintHigh);
  }
}

export function encodeIncrementResponse(response: IncrementResponseInput): Buffer {
  const sizeBytes = incrementResponseSize(response);
  startWriting(sizeBytes);
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

function streamErrorSize(error: IncrementStreamErrorInput, messageBytes: number, reasonBytes: number): number {
  const code = error.code | 0;
  return (
    (code !== 0 ? 1 + (code < 0 ? 10 : varint32Size(code)) : 0) +
    (messageBytes > 0 ? 1 + varint32Size(messageBytes) + messageBytes : 0) +
    (reasonBytes > 0 ? 1 + varint32Size(reasonBytes) + reasonBytes : 0) +
    (error.statusDetails.length > 0 ? 1 + varint32Size(error.statusDetails.length) + error.statusDetails.length : 0)
  );
}

function writeStreamError(error: IncrementStreamErrorInput, messageBytes: number, reasonBytes: number): void {
  const code = error.code | 0;
  if (code !== 0) {
    writeByte(0x08); // field 1, varint
    if (code < 0) writeVarint64(code >>> 0, 0xffffffff);
    else writeVarint32(code);
  }
  if (messageBytes > 0) {
    writeByte(0x12); // field 2, length-delimited
    writeVarint32(messageBytes);
    writeUtf8(error.message, messageBytes);
  }
  if (reasonBytes > 0) {
    writeByte(0x1a); // field 3, length-delimited
    writeVarint32(reasonBytes);
    writeUtf8(error.reason, reasonBytes);
  }
  if (error.statusDetails.length > 0) {
    writeByte(0x22); // field 4, length-delimited
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
  startWriting(sizeBytes);
  for (const result of results) {
    writeByte(0x0a); // field 1, length-delimited
    writeVarint32(incrementResponseSize(result));
    writeIncrementResponse(result);
  }
  // Its halves again: a result's total reused them.
  if (sequenceBytes > 0) {
    sequenceFieldSize(sequence);
    writeSequenceField();
  }
  if (error !== undefined && error !== null) {
    writeByte(0x1a); // field 3, length-delimited
    writeVarint32(errorBytes);
    writeStreamError(error, messageBytes, reasonBytes);
  }
  return finishWriting(sizeBytes);
}

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
