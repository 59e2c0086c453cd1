// The node's answer to ReadShards written straight to bytes: a page of cold
// counters asks one pair for ~50 shard totals, and proto-loader would turn
// each bigint total into a decimal string, then a Long, then a varint. Here a
// total goes from bigint to zigzag varint with no string or Long between. Only
// the response: the request is still decoded by proto-loader, and every
// reader of the bytes (the router, any older one) decodes them as before.
// Must not touch node state: it encodes what the handler answered.
import assert from 'node:assert';

/** A ReadShardsResponse as the node answers it: int64s as bigints. */
export interface ReadShardsAnswer {
  totals: readonly bigint[];
  lsn: bigint;
  role: string;
  epoch: bigint;
  nodeId: string;
  newerGenerationIndexes: readonly number[];
}

const twoTo32 = 4294967296;
const safeMax = BigInt(Number.MAX_SAFE_INTEGER);
/** |total| below this zigzags to a safe integer (2|n| + 1 <= 2^53 - 1). */
const zigzagSafeMax = 2n ** 52n - 1n;

function varint32Size(value: number): number {
  return value < 128 ? 1 : value < 16384 ? 2 : value < 2097152 ? 3 : value < 268435456 ? 4 : 5;
}

/** Size of an unsigned 64-bit varint given as a safe integer or a bigint below 2^64. */
function varintSize(value: number | bigint): number {
  if (typeof value === 'number') {
    let sizeBytes = 1;
    while (value >= 128) {
      value = Math.floor(value / 128);
      sizeBytes++;
    }
    return sizeBytes;
  }
  let sizeBytes = 1;
  while (value >= 128n) {
    value >>= 7n;
    sizeBytes++;
  }
  return sizeBytes;
}

/** A sint64's zigzag form: a number when it is a safe integer, else a bigint below 2^64. */
function zigzag(total: bigint): number | bigint {
  if (total <= zigzagSafeMax && total >= -zigzagSafeMax) {
    const value = Number(total);
    return value >= 0 ? value * 2 : -value * 2 - 1;
  }
  return BigInt.asUintN(64, (total << 1n) ^ (total >> 63n));
}

/** A uint64 as a safe integer when it is one. */
function unsigned(value: bigint): number | bigint {
  assert(value >= 0n && value < 2n ** 64n, `uint64 out of range: ${value}`);
  return value <= safeMax ? Number(value) : value;
}

let out: Buffer = Buffer.alloc(0);
let outPos = 0;

function writeVarint(value: number | bigint): void {
  if (typeof value === 'number') {
    while (value >= twoTo32) {
      out[outPos++] = (value % 128) | 128;
      value = Math.floor(value / 128);
    }
    while (value > 127) {
      out[outPos++] = (value & 127) | 128;
      value >>>= 7;
    }
    out[outPos++] = value;
    return;
  }
  while (value > 127n) {
    out[outPos++] = Number(value & 127n) | 128;
    value >>= 7n;
  }
  out[outPos++] = Number(value);
}

function writeString(tag: number, text: string, sizeBytes: number): void {
  if (sizeBytes === 0) return;
  out[outPos++] = tag;
  writeVarint(sizeBytes);
  outPos += out.write(text, outPos, sizeBytes, 'utf8');
}

/**
 * Fields in number order, each left out when it is its default (proto3), the
 * repeated scalars packed (what protobufjs writes for proto3).
 */
export function encodeReadShardsResponse(answer: ReadShardsAnswer): Buffer {
  const count = answer.totals.length;
  const zigzags = new Array<number | bigint>(count);
  let totalsBytes = 0;
  for (let index = 0; index < count; index++) {
    const value = zigzag(answer.totals[index]!);
    zigzags[index] = value;
    totalsBytes += varintSize(value);
  }
  const lsn = unsigned(answer.lsn);
  const epoch = unsigned(answer.epoch);
  const roleBytes = Buffer.byteLength(answer.role, 'utf8');
  const nodeIdBytes = Buffer.byteLength(answer.nodeId, 'utf8');
  const indexes = answer.newerGenerationIndexes;
  let indexesBytes = 0;
  for (const index of indexes) indexesBytes += varint32Size(index >>> 0);
  let sizeBytes = 0;
  if (count > 0) sizeBytes += 1 + varint32Size(totalsBytes) + totalsBytes;
  if (lsn !== 0) sizeBytes += 1 + varintSize(lsn);
  if (roleBytes > 0) sizeBytes += 1 + varint32Size(roleBytes) + roleBytes;
  if (epoch !== 0) sizeBytes += 1 + varintSize(epoch);
  if (nodeIdBytes > 0) sizeBytes += 1 + varint32Size(nodeIdBytes) + nodeIdBytes;
  if (indexes.length > 0) sizeBytes += 1 + varint32Size(indexesBytes) + indexesBytes;
  out = Buffer.allocUnsafe(sizeBytes);
  outPos = 0;
  if (count > 0) {
    out[outPos++] = 0x0a; // field 1 (totals), packed
    writeVarint(totalsBytes);
    for (const value of zigzags) writeVarint(value);
  }
  if (lsn !== 0) {
    out[outPos++] = 0x10; // field 2, varint
    writeVarint(lsn);
  }
  writeString(0x1a, answer.role, roleBytes); // field 3
  if (epoch !== 0) {
    out[outPos++] = 0x20; // field 4, varint
    writeVarint(epoch);
  }
  writeString(0x2a, answer.nodeId, nodeIdBytes); // field 5
  if (indexes.length > 0) {
    out[outPos++] = 0x32; // field 6 (newer_generation_indexes), packed
    writeVarint(indexesBytes);
    for (const index of indexes) writeVarint(index >>> 0);
  }
  assert.equal(outPos, sizeBytes, 'ReadShards codec: bytes written differ from the size computed');
  const written = out;
  out = Buffer.alloc(0);
  return written;
}

/** A copy of tally.shard.v1.ShardNode's definition whose ReadShards answers through encodeReadShardsResponse. */
export function withLeanReadShardsResponse<Definition extends object>(service: Definition): Definition {
  const method = (service as Record<string, unknown>).ReadShards;
  assert(typeof method === 'object' && method !== null, 'ReadShards codec: the service has no method ReadShards');
  return { ...service, ReadShards: { ...method, responseSerialize: encodeReadShardsResponse } };
}
