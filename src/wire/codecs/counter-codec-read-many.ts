// Decoding of the lean ReadMany and ReadStream codecs (counter-codec.ts), on
// the reader of counter-codec-read.ts: ported from protobufjs 7.6 as the
// Increment family is, so the same bytes are accepted or refused the same way.
import type {
  LeanIncrementStreamError,
  LeanReadManyRequest,
  LeanReadManyResponse,
  LeanReadStreamRequest,
  LeanReadStreamResponse,
  LeanReadResponse,
} from './counter-codec-types.ts';
import type { RegionPartValue } from './region-part-codec.ts';
import {
  readUint32,
  readUint64,
  readInt64,
  readString,
  skipType,
  readEmbedded,
  readRepeatedFirstField,
  decodeWith,
  position,
  readIncrementStreamError,
} from './counter-codec-read.ts';

/** counter.v1.Consistency's names by number (proto-loader `enums: String`); a number it does not name stays a number. */
const consistencyNames: readonly string[] = ['EXACT', 'CACHED'];

/** counter.v1.Scope's names by number. */
const scopeNames: readonly string[] = ['SCOPE_REGION', 'SCOPE_GLOBAL'];

/** The fields of ReadManyRequest (1, 2, 3) and, withSequence, ReadStreamRequest's 15; others skipped. */
function readReadRequestFields(end: number, depth: number, withSequence: boolean): LeanReadStreamRequest {
  const counters: string[] = [];
  let consistency: string | number = consistencyNames[0]!;
  let scope: string | number = scopeNames[0]!;
  let sequence: number | bigint = 0;
  while (position() < end) {
    const tag = readUint32();
    switch (tag >>> 3) {
      case 1:
        counters.push(readString());
        break;
      case 2: {
        // protobufjs reads an enum as int32.
        const value = readUint32() | 0;
        consistency = consistencyNames[value] ?? value;
        break;
      }
      case 3: {
        const value = readUint32() | 0;
        scope = scopeNames[value] ?? value;
        break;
      }
      case 15:
        if (withSequence) sequence = readUint64();
        else skipType(tag & 7, depth);
        break;
      default:
        skipType(tag & 7, depth);
    }
  }
  return { counters, consistency, scope, sequence };
}

function readReadManyRequest(end: number, depth: number): LeanReadManyRequest {
  const { counters, consistency, scope } = readReadRequestFields(end, depth, false);
  return { counters, consistency, scope };
}

function readRegionPart(end: number, depth: number): RegionPartValue {
  let region = '';
  let total: number | bigint = 0;
  let asOfUnixMs: number | bigint = 0;
  let stalenessMs: number | bigint = 0;
  let home = false;
  while (position() < end) {
    const tag = readUint32();
    switch (tag >>> 3) {
      case 1:
        region = readString();
        break;
      case 2:
        total = readInt64();
        break;
      case 3:
        asOfUnixMs = readInt64();
        break;
      case 4:
        stalenessMs = readInt64();
        break;
      case 5:
        home = readUint32() !== 0;
        break;
      default:
        skipType(tag & 7, depth);
    }
  }
  return { region, total: BigInt(total), asOfUnixMs, stalenessMs, home };
}

function readReadResponse(end: number, depth: number): LeanReadResponse {
  let counter = '';
  let total: number | bigint = 0;
  let exact = false;
  let asOfUnixMs: number | bigint = 0;
  let stalenessMs: number | bigint = 0;
  let shards = 0;
  let regions: RegionPartValue[] | undefined;
  while (position() < end) {
    const tag = readUint32();
    switch (tag >>> 3) {
      case 1:
        counter = readString();
        break;
      case 2:
        total = readInt64();
        break;
      case 7:
        (regions ??= []).push(readEmbedded(readUint32(), depth + 1, readRegionPart));
        break;
      case 3:
        exact = readUint32() !== 0;
        break;
      case 4:
        asOfUnixMs = readInt64();
        break;
      case 5:
        stalenessMs = readInt64();
        break;
      case 6:
        shards = readUint32();
        break;
      default:
        skipType(tag & 7, depth);
    }
  }
  return regions === undefined
    ? { counter, total, exact, asOfUnixMs, stalenessMs, shards }
    : { counter, total, exact, asOfUnixMs, stalenessMs, shards, regions };
}

function readReadManyResponse(end: number, depth: number): LeanReadManyResponse {
  return { values: readRepeatedFirstField(end, depth, readReadResponse) };
}

// ReadStream: a ReadMany's fields (1, 2, 3) with a sequence number (15) and, in a response, an error (14).

function readReadStreamRequest(end: number, depth: number): LeanReadStreamRequest {
  return readReadRequestFields(end, depth, true);
}

function readReadStreamResponse(end: number, depth: number): LeanReadStreamResponse {
  const values: LeanReadResponse[] = [];
  let sequence: number | bigint = 0;
  let error: LeanIncrementStreamError | null = null;
  while (position() < end) {
    const tag = readUint32();
    switch (tag >>> 3) {
      case 1:
        values.push(readEmbedded(readUint32(), depth + 1, readReadResponse));
        break;
      case 15:
        sequence = readUint64();
        break;
      case 14:
        error = readEmbedded(readUint32(), depth + 1, readIncrementStreamError);
        break;
      default:
        skipType(tag & 7, depth);
    }
  }
  return { values, sequence, error };
}

export function decodeReadManyRequest(bytes: Uint8Array): LeanReadManyRequest {
  return decodeWith(bytes, readReadManyRequest);
}

export function decodeReadManyResponse(bytes: Uint8Array): LeanReadManyResponse {
  return decodeWith(bytes, readReadManyResponse);
}

export function decodeReadStreamRequest(bytes: Uint8Array): LeanReadStreamRequest {
  return decodeWith(bytes, readReadStreamRequest);
}

export function decodeReadStreamResponse(bytes: Uint8Array): LeanReadStreamResponse {
  return decodeWith(bytes, readReadStreamResponse);
}
