// Many region components in one payload: the packed entry a receiving region
// logs per batch and primary (REGION_COMPONENTS), so a link catching up writes
// and replicates one log row per batch instead of one per component. Two
// columns: the shard ids, then the components as region-component records
// (region-component.ts, the one definition of a component's fields), so a
// field added to a component's record travels in a packed entry unchanged.
// Pure: no I/O.
import { packComponents, unpackComponents, type RegionComponent } from './region-component.ts';

/** One row of a packed entry: a component held on a shard (the first shard of its counter). */
export interface ShardComponent {
  shardId: number;
  component: RegionComponent;
}

/** Components a packed entry may hold: a batch's (512), with room for a receiver that packs more. */
export const packedComponentsMax = 4_096;

// Layout: u8 format (1), u32 count, count x f64 shard id (little-endian), then count records back to back.
const format = 1;
const headerBytes = 1 + 4;

/** Rows as one payload; throws on a row no reader would accept (a bug in the caller). */
export function encodePackedComponents(rows: readonly ShardComponent[]): Buffer {
  if (rows.length === 0 || rows.length > packedComponentsMax)
    throw new Error(`a packed entry holds 1..${packedComponentsMax} components, not ${rows.length}`);
  const records = packComponents(rows.map((row) => row.component));
  const data = Buffer.allocUnsafe(headerBytes + 8 * rows.length + records.length);
  data.writeUInt8(format, 0);
  data.writeUInt32BE(rows.length, 1);
  rows.forEach((row, index) => {
    if (!Number.isSafeInteger(row.shardId) || row.shardId < 1) throw new Error(`a packed component's shard id ${row.shardId} is invalid`);
    data.writeDoubleLE(row.shardId, headerBytes + 8 * index);
  });
  records.copy(data, headerBytes + 8 * rows.length);
  return data;
}

/** The rows of encodePackedComponents; throws, naming what is wrong, on bytes no writer could make. */
export function decodePackedComponents(data: Buffer): ShardComponent[] {
  if (data.length < headerBytes) throw new Error(`a packed component entry of ${data.length} bytes is cut short`);
  if (data.readUInt8(0) !== format) throw new Error(`a packed component entry of unknown format ${data.readUInt8(0)}`);
  const count = data.readUInt32BE(1);
  if (count < 1 || count > packedComponentsMax)
    throw new Error(`a packed component entry says ${count} components (1..${packedComponentsMax})`);
  const recordsAt = headerBytes + 8 * count;
  if (recordsAt > data.length) throw new Error(`a packed component entry of ${count} components is cut short`);
  const components = unpackComponents(data.subarray(recordsAt));
  if (components.length !== count)
    throw new Error(`a packed component entry says ${count} components but holds ${components.length} records`);
  return components.map((component, index) => {
    const shardId = data.readDoubleLE(headerBytes + 8 * index);
    if (!Number.isSafeInteger(shardId) || shardId < 1) throw new Error(`a packed component entry names shard id ${shardId}`);
    return { shardId, component };
  });
}
