// A region component: one counter's total in its origin region, with the
// version that orders it. The one codec of its record, used by the node log
// (a REGION_COMPONENT entry's payload, the 'regions' checkpoint part, the
// ReadComponents answer) and the router. Pure: no I/O.
import assert from 'node:assert/strict';
import { INT64_MAX, INT64_MIN, UINT64_MAX } from '../checks/client-limits.ts';
import { isRegionName } from '../index.ts';

/** Bytes of a distinct counter's sketch in a component: a dense HyperLogLog serializes to 12,289. */
export const regionSketchBytesMax = 16_384;

/**
 * The order of one origin's components of one counter: term first, then
 * round. The term is the publishing router's tenure, the round its exact
 * reads within the term; docs/regions.md says why it only moves forward.
 */
export interface ComponentVersion {
  term: bigint;
  round: bigint;
}

export interface RegionComponent {
  origin: string;
  version: ComponentVersion;
  /** The origin region's own total of the counter at that version. */
  total: bigint;
  /** When the origin took the total, on its clock. */
  asOfUnixMs: number;
  /**
   * The counter's clear generation in the origin when the total was taken:
   * a higher one than a region's own tells it to clear its counter up to it
   * (docs/regions.md, clear across regions).
   */
  generation: number;
  /**
   * A distinct counter's HyperLogLog registers in the origin at that version
   * (a serialized sketch); absent for a total counter. Regions merge them by
   * register maximum.
   */
  sketch?: Buffer;
  /**
   * How many deletes of the counter's name the origin had applied (from any
   * region) when the total was taken; absent reads as 0. Versions and
   * generations compare within an incarnation: a part of a lower one than
   * the newest seen is a pre-delete part and counts as nothing.
   */
  incarnation?: number;
  /** The origin deleted the name at `incarnation`: no total (0), no sketch, generation 0. */
  tombstone?: boolean;
}

/** A component's incarnation (absent: 0). */
export function incarnationOf(component: Pick<RegionComponent, 'incarnation'>): number {
  return component.incarnation ?? 0;
}

/**
 * <0, 0 or >0 as a is older than, the same as or newer than b: incarnation
 * first (a delete starts a new count), then the version.
 */
export function compareComponents(a: RegionComponent, b: RegionComponent): number {
  const incarnations = incarnationOf(a) - incarnationOf(b);
  if (incarnations !== 0) return incarnations < 0 ? -1 : 1;
  return compareVersions(a.version, b.version);
}

export const zeroVersion: ComponentVersion = { term: 0n, round: 0n };

/** <0, 0 or >0 as a is older than, the same as or newer than b. */
export function compareVersions(a: ComponentVersion, b: ComponentVersion): number {
  if (a.term !== b.term) return a.term < b.term ? -1 : 1;
  if (a.round !== b.round) return a.round < b.round ? -1 : 1;
  return 0;
}

export function maxVersion(a: ComponentVersion, b: ComponentVersion): ComponentVersion {
  return compareVersions(a, b) >= 0 ? a : b;
}

/**
 * The merge of a max-register: the newer of two components of one origin
 * (the held one on a tie, so a duplicate changes nothing).
 */
export function mergeComponent(held: RegionComponent | undefined, incoming: RegionComponent): RegionComponent {
  if (held === undefined) return incoming;
  assert.equal(held.origin, incoming.origin, 'components of one register share their origin');
  return compareComponents(incoming, held) > 0 ? incoming : held;
}

/** Why a component could not have been published, or undefined when it is fine. */
export function componentProblem(component: RegionComponent): string | undefined {
  if (!isRegionName(component.origin)) return `origin region "${component.origin}" is not a region name`;
  const { term, round } = component.version;
  if (term < 1n || term > UINT64_MAX || round < 0n || round > UINT64_MAX) return 'version out of range';
  if (component.total > INT64_MAX || component.total < INT64_MIN) return 'total out of range';
  if (!Number.isSafeInteger(component.asOfUnixMs) || component.asOfUnixMs < 0) return 'as-of time invalid';
  if (!Number.isSafeInteger(component.generation) || component.generation < 0) return 'generation invalid';
  if (component.sketch !== undefined && (component.sketch.length === 0 || component.sketch.length > regionSketchBytesMax))
    return `sketch of ${component.sketch.length} bytes (1..${regionSketchBytesMax})`;
  const incarnation = incarnationOf(component);
  if (!Number.isSafeInteger(incarnation) || incarnation < 0) return 'incarnation invalid';
  if (
    component.tombstone === true &&
    (incarnation < 1 || component.total !== 0n || component.sketch !== undefined || component.generation !== 0)
  )
    return 'a tombstone has an incarnation of at least 1 and no total, sketch or generation';
  return undefined;
}

// Record layout: u8 origin length, origin (ASCII), u64 term, u64 round, i64 total, u64 as-of ms, u64 generation;
// with the sketch flag set in the length byte, then u32 sketch length and the sketch; with the incarnation flag
// set, then u64 incarnation and u8 marks (1: tombstone). Origins are at most 32 bytes (0x20), so records written
// before a flag existed never have it set and read unchanged; a record of incarnation 0 that is no tombstone is
// written without the incarnation flag, byte for byte as before.
const fixedBytes = 1 + 8 + 8 + 8 + 8 + 8;
const sketchFlag = 0x80;
const incarnationFlag = 0x40;
const incarnationBytes = 8 + 1;
const tombstoneMark = 1;

function hasIncarnationPart(component: RegionComponent): boolean {
  return incarnationOf(component) > 0 || component.tombstone === true;
}

function recordBytes(component: RegionComponent): number {
  return (
    fixedBytes +
    component.origin.length +
    (component.sketch === undefined ? 0 : 4 + component.sketch.length) +
    (hasIncarnationPart(component) ? incarnationBytes : 0)
  );
}

/** Writes the incarnation part at `at` when the component has one; returns the offset after the record. */
function writeIncarnation(component: RegionComponent, target: Buffer, at: number): number {
  if (!hasIncarnationPart(component)) return at;
  target.writeBigUInt64BE(BigInt(incarnationOf(component)), at);
  target.writeUInt8(component.tombstone === true ? tombstoneMark : 0, at + 8);
  return at + incarnationBytes;
}

function writeRecord(component: RegionComponent, target: Buffer, offset: number): number {
  const problem = componentProblem(component);
  assert.ok(problem === undefined, `region component invalid: ${problem}`);
  const flags = (component.sketch === undefined ? 0 : sketchFlag) | (hasIncarnationPart(component) ? incarnationFlag : 0);
  target.writeUInt8(component.origin.length | flags, offset);
  let at = offset + 1;
  at += target.write(component.origin, at, 'latin1');
  target.writeBigUInt64BE(component.version.term, at);
  target.writeBigUInt64BE(component.version.round, at + 8);
  target.writeBigInt64BE(component.total, at + 16);
  target.writeBigUInt64BE(BigInt(component.asOfUnixMs), at + 24);
  target.writeBigUInt64BE(BigInt(component.generation), at + 32);
  if (component.sketch === undefined) return writeIncarnation(component, target, at + 40);
  target.writeUInt32BE(component.sketch.length, at + 40);
  component.sketch.copy(target, at + 44);
  return writeIncarnation(component, target, at + 44 + component.sketch.length);
}

/** One component as a record (a log entry's payload). */
export function encodeComponent(component: RegionComponent): Buffer {
  const data = Buffer.alloc(recordBytes(component));
  writeRecord(component, data, 0);
  return data;
}

/** Components as records one after another (a checkpoint part, a ReadComponents answer). */
export function packComponents(components: Iterable<RegionComponent>): Buffer {
  const list = [...components];
  const data = Buffer.alloc(list.reduce((sum, component) => sum + recordBytes(component), 0));
  let offset = 0;
  for (const component of list) offset = writeRecord(component, data, offset);
  return data;
}

/** The records of packComponents; throws on bytes no writer could make. */
export function unpackComponents(data: Buffer): RegionComponent[] {
  const components: RegionComponent[] = [];
  let offset = 0;
  while (offset < data.length) {
    const lengthByte = data.readUInt8(offset);
    const originBytes = lengthByte & ~(sketchFlag | incarnationFlag);
    let end = offset + 1 + originBytes + 40;
    if (end > data.length) throw new Error(`region component record at byte ${offset} is cut short`);
    const origin = data.toString('latin1', offset + 1, offset + 1 + originBytes);
    const at = offset + 1 + originBytes;
    const component: RegionComponent = {
      origin,
      version: { term: data.readBigUInt64BE(at), round: data.readBigUInt64BE(at + 8) },
      total: data.readBigInt64BE(at + 16),
      asOfUnixMs: Number(data.readBigUInt64BE(at + 24)),
      generation: Number(data.readBigUInt64BE(at + 32)),
    };
    if ((lengthByte & sketchFlag) !== 0) {
      if (end + 4 > data.length) throw new Error(`region component record at byte ${offset} is cut short`);
      const sketchBytes = data.readUInt32BE(end);
      if (end + 4 + sketchBytes > data.length) throw new Error(`region component record at byte ${offset} is cut short`);
      component.sketch = Buffer.from(data.subarray(end + 4, end + 4 + sketchBytes));
      end += 4 + sketchBytes;
    }
    if ((lengthByte & incarnationFlag) !== 0) {
      if (end + incarnationBytes > data.length) throw new Error(`region component record at byte ${offset} is cut short`);
      component.incarnation = Number(data.readBigUInt64BE(end));
      if ((data.readUInt8(end + 8) & tombstoneMark) !== 0) component.tombstone = true;
      end += incarnationBytes;
    }
    const problem = componentProblem(component);
    if (problem !== undefined) throw new Error(`region component record at byte ${offset}: ${problem}`);
    components.push(component);
    offset = end;
  }
  return components;
}

/** The single record of an entry's payload; throws unless it holds exactly one. */
export function decodeComponent(data: Buffer): RegionComponent {
  const components = unpackComponents(data);
  if (components.length !== 1) throw new Error(`a component entry holds one record, not ${components.length}`);
  return components[0]!;
}
