// A region component: one counter's total in its origin region, with the
// version that orders it. The one codec of its record, used by the node log
// (a REGION_COMPONENT entry's payload, the 'regions' checkpoint part, the
// ReadComponents answer) and the router. Pure: no I/O.
import assert from 'node:assert/strict';
import { INT64_MAX, INT64_MIN, UINT64_MAX } from '../checks/client-limits.ts';
import { isRegionName } from '../index.ts';

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
  return compareVersions(incoming.version, held.version) > 0 ? incoming : held;
}

/** Why a component could not have been published, or undefined when it is fine. */
export function componentProblem(component: RegionComponent): string | undefined {
  if (!isRegionName(component.origin)) return `origin region "${component.origin}" is not a region name`;
  const { term, round } = component.version;
  if (term < 1n || term > UINT64_MAX || round < 0n || round > UINT64_MAX) return 'version out of range';
  if (component.total > INT64_MAX || component.total < INT64_MIN) return 'total out of range';
  if (!Number.isSafeInteger(component.asOfUnixMs) || component.asOfUnixMs < 0) return 'as-of time invalid';
  if (!Number.isSafeInteger(component.generation) || component.generation < 0) return 'generation invalid';
  return undefined;
}

// Record layout: u8 origin length, origin (ASCII), u64 term, u64 round, i64 total, u64 as-of ms, u64 generation.
const fixedBytes = 1 + 8 + 8 + 8 + 8 + 8;

function recordBytes(component: RegionComponent): number {
  return fixedBytes + component.origin.length;
}

function writeRecord(component: RegionComponent, target: Buffer, offset: number): number {
  const problem = componentProblem(component);
  assert.ok(problem === undefined, `region component invalid: ${problem}`);
  target.writeUInt8(component.origin.length, offset);
  let at = offset + 1;
  at += target.write(component.origin, at, 'latin1');
  target.writeBigUInt64BE(component.version.term, at);
  target.writeBigUInt64BE(component.version.round, at + 8);
  target.writeBigInt64BE(component.total, at + 16);
  target.writeBigUInt64BE(BigInt(component.asOfUnixMs), at + 24);
  target.writeBigUInt64BE(BigInt(component.generation), at + 32);
  return at + 40;
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
    const originBytes = data.readUInt8(offset);
    const end = offset + 1 + originBytes + 40;
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
