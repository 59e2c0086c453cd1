// counter.v1.RegionPart in protobuf bytes, for the lean ReadMany encoder
// (counter-codec-write.ts appends them as ReadResponse field 7) and its
// decoder. One place that knows the message's field numbers.
import assert from 'node:assert/strict';

export interface RegionPartValue {
  region: string;
  total: bigint;
  asOfUnixMs: number | bigint;
  stalenessMs: number | bigint;
  home: boolean;
}

function varint(value: bigint, into: number[]): void {
  let rest = BigInt.asUintN(64, value);
  while (rest >= 0x80n) {
    into.push(Number(rest & 0x7fn) | 0x80);
    rest >>= 7n;
  }
  into.push(Number(rest));
}

/** One RegionPart message's bytes (fields left out when 0, as proto3 does). */
export function encodeRegionPart(part: RegionPartValue): Uint8Array {
  const bytes: number[] = [];
  const name = Buffer.from(part.region, 'utf8');
  if (name.length > 0) {
    bytes.push(0x0a);
    varint(BigInt(name.length), bytes);
    for (const byte of name) bytes.push(byte);
  }
  const int64 = (tag: number, value: bigint): void => {
    if (value === 0n) return;
    bytes.push(tag);
    varint(value, bytes);
  };
  int64(0x10, part.total);
  int64(0x18, BigInt(part.asOfUnixMs));
  int64(0x20, BigInt(part.stalenessMs));
  if (part.home) bytes.push(0x28, 1);
  return Uint8Array.from(bytes);
}

/** The RegionPart of encodeRegionPart's bytes (or any proto3 encoder's); throws on a malformed message. */
export function decodeRegionPart(bytes: Uint8Array): RegionPartValue {
  const part: RegionPartValue = { region: '', total: 0n, asOfUnixMs: 0n, stalenessMs: 0n, home: false };
  let pos = 0;
  const readVarint = (): bigint => {
    let value = 0n;
    for (let shift = 0n; shift < 70n; shift += 7n) {
      assert.ok(pos < bytes.length, 'region part cut short');
      const byte = bytes[pos++]!;
      value |= BigInt(byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) return BigInt.asUintN(64, value);
    }
    assert.fail('region part varint too long');
  };
  while (pos < bytes.length) {
    const tag = Number(readVarint());
    const field = tag >>> 3;
    const wire = tag & 7;
    if (wire === 2) {
      const length = Number(readVarint());
      assert.ok(pos + length <= bytes.length, 'region part cut short');
      if (field === 1) part.region = Buffer.from(bytes.subarray(pos, pos + length)).toString('utf8');
      pos += length;
      continue;
    }
    assert.ok(wire === 0, `region part field ${field} has wire type ${wire}`);
    const value = readVarint();
    if (field === 2) part.total = BigInt.asIntN(64, value);
    else if (field === 3) part.asOfUnixMs = BigInt.asIntN(64, value);
    else if (field === 4) part.stalenessMs = BigInt.asIntN(64, value);
    else if (field === 5) part.home = value !== 0n;
  }
  return part;
}
