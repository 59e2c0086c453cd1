// Encoding of the lean ReadMany and ReadStream requests (counter-codec.ts), a
// client's, on the writer of counter-codec-write.ts (which writes their
// answers): sizes first, then one Buffer written front to back; empty fields
// left out.
import type { Uint64Value, ReadManyRequestInput, ReadStreamRequestInput } from './counter-codec-types.ts';
import {
  varint32Size,
  utf8Size,
  writeVarint32,
  writeVarint64,
  writeName,
  finishWriting,
  startWriting,
  writeByte,
  varintLow,
  varintHigh,
  sequenceFieldSize,
  reserveValues,
  textOf,
  valueNameBytes,
  readStreamSequenceTag,
} from './counter-codec-write.ts';

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
