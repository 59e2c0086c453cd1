// shard.proto's ReadShards on the lean codec's primitives (src/wire/codecs,
// held equal to protobufjs): a router's request as the node reads it (shard ids
// and generations as numbers, a bigint past 2^53, not a decimal string made by
// Long arithmetic per id; packed or not, as protobufjs accepts), and the
// node's answer as it writes it (totals zigzagged, lsn and epoch as uint64).
import { decodeWith, position, readEmbedded, readRepeatedUint64, readUint32, skipType } from '../codecs/counter-codec-read.ts';
import {
  finishWriting,
  setSint64Halves,
  setUint64Halves,
  startWriting,
  utf8Size,
  varint32Size,
  varint64Size,
  varintHigh,
  varintLow,
  writeByte,
  writeName,
  writeVarint32,
  writeVarint64,
} from '../codecs/counter-codec-write.ts';

/** A tally.shard.v1.ReadShardsRequest as the node reads it. */
export interface LeanReadShardsRequest {
  shardIds: (number | bigint)[];
  /** Parallel to shardIds, or empty (all 0). */
  generations: (number | bigint)[];
  /** The sender's wire version; null when absent (proto-loader's default). */
  protocol: { current: number; oldest: number } | null;
}

/** A ReadShardsStream frame as the node reads it: request null when absent. */
export interface LeanReadShardsFrame {
  seq: number;
  request: LeanReadShardsRequest | null;
}

function readProtocolVersion(end: number, depth: number): { current: number; oldest: number } {
  let current = 0;
  let oldest = 0;
  while (position() < end) {
    const tag = readUint32();
    switch (tag >>> 3) {
      case 1:
        current = readUint32();
        break;
      case 2:
        oldest = readUint32();
        break;
      default:
        skipType(tag & 7, depth);
    }
  }
  return { current, oldest };
}

function readReadShardsRequest(end: number, depth: number): LeanReadShardsRequest {
  const shardIds: (number | bigint)[] = [];
  const generations: (number | bigint)[] = [];
  let protocol: LeanReadShardsRequest['protocol'] = null;
  while (position() < end) {
    const tag = readUint32();
    switch (tag >>> 3) {
      case 1:
        readRepeatedUint64(shardIds, tag & 7);
        break;
      case 2:
        readRepeatedUint64(generations, tag & 7);
        break;
      case 100:
        protocol = readEmbedded(readUint32(), depth + 1, readProtocolVersion);
        break;
      default:
        skipType(tag & 7, depth);
    }
  }
  return { shardIds, generations, protocol };
}

function readReadShardsFrame(end: number, depth: number): LeanReadShardsFrame {
  let seq = 0;
  let request: LeanReadShardsRequest | null = null;
  while (position() < end) {
    const tag = readUint32();
    switch (tag >>> 3) {
      case 1:
        seq = readUint32();
        break;
      case 2:
        request = readEmbedded(readUint32(), depth + 1, readReadShardsRequest);
        break;
      default:
        skipType(tag & 7, depth);
    }
  }
  return { seq, request };
}
export function decodeReadShardsRequest(bytes: Uint8Array): LeanReadShardsRequest {
  return decodeWith(bytes, readReadShardsRequest);
}

export function decodeReadShardsFrame(bytes: Uint8Array): LeanReadShardsFrame {
  return decodeWith(bytes, readReadShardsFrame);
}

// The answer.

/** A tally.shard.v1.ReadShardsResponse as a node answers it: int64s as bigints (read-shards-codec.ts wires it). */
export interface ReadShardsAnswer {
  /** sint64 each. */
  totals: readonly bigint[];
  /** uint64. */
  lsn: bigint;
  role: string;
  /** uint64. */
  epoch: bigint;
  nodeId: string;
  newerGenerationIndexes: readonly number[];
}

/** The totals' zigzag halves, between an answer's sizing and its writing. */
let totalLows = new Uint32Array(64);
let totalHighs = new Uint32Array(64);

function reserveTotals(count: number): void {
  if (count <= totalLows.length) return;
  const capacity = Math.max(count, totalLows.length * 2);
  totalLows = new Uint32Array(capacity);
  totalHighs = new Uint32Array(capacity);
}

/**
 * Fields in number order, each left out when it is its default (proto3), the
 * repeated scalars packed (what protobufjs writes for proto3).
 */
export function encodeReadShardsResponse(answer: ReadShardsAnswer): Buffer {
  const count = answer.totals.length;
  reserveTotals(count);
  let totalsBytes = 0;
  for (let index = 0; index < count; index++) {
    setSint64Halves(answer.totals[index]!);
    totalLows[index] = varintLow;
    totalHighs[index] = varintHigh;
    totalsBytes += varint64Size(varintLow, varintHigh);
  }
  setUint64Halves(answer.lsn);
  const [lsnLow, lsnHigh] = [varintLow, varintHigh];
  setUint64Halves(answer.epoch);
  const [epochLow, epochHigh] = [varintLow, varintHigh];
  const roleBytes = utf8Size(answer.role);
  const nodeIdBytes = utf8Size(answer.nodeId);
  const indexes = answer.newerGenerationIndexes;
  let indexesBytes = 0;
  for (const index of indexes) indexesBytes += varint32Size(index >>> 0);
  let sizeBytes = 0;
  if (count > 0) sizeBytes += 1 + varint32Size(totalsBytes) + totalsBytes;
  if ((lsnLow | lsnHigh) !== 0) sizeBytes += 1 + varint64Size(lsnLow, lsnHigh);
  if (roleBytes > 0) sizeBytes += 1 + varint32Size(roleBytes) + roleBytes;
  if ((epochLow | epochHigh) !== 0) sizeBytes += 1 + varint64Size(epochLow, epochHigh);
  if (nodeIdBytes > 0) sizeBytes += 1 + varint32Size(nodeIdBytes) + nodeIdBytes;
  if (indexes.length > 0) sizeBytes += 1 + varint32Size(indexesBytes) + indexesBytes;
  startWriting(sizeBytes);
  if (count > 0) {
    writeByte(0x0a); // field 1 (totals), packed
    writeVarint32(totalsBytes);
    for (let index = 0; index < count; index++) writeVarint64(totalLows[index]!, totalHighs[index]!);
  }
  if ((lsnLow | lsnHigh) !== 0) {
    writeByte(0x10); // field 2, varint
    writeVarint64(lsnLow, lsnHigh);
  }
  if (roleBytes > 0) {
    writeByte(0x1a); // field 3
    writeVarint32(roleBytes);
    writeName(answer.role, roleBytes);
  }
  if ((epochLow | epochHigh) !== 0) {
    writeByte(0x20); // field 4, varint
    writeVarint64(epochLow, epochHigh);
  }
  if (nodeIdBytes > 0) {
    writeByte(0x2a); // field 5
    writeVarint32(nodeIdBytes);
    writeName(answer.nodeId, nodeIdBytes);
  }
  if (indexes.length > 0) {
    writeByte(0x32); // field 6 (newer_generation_indexes), packed
    writeVarint32(indexesBytes);
    for (const index of indexes) writeVarint32(index >>> 0);
  }
  return finishWriting(sizeBytes);
}
