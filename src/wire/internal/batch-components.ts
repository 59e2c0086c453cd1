// A link batch's components as columns (RegionLink's ComponentBatch
// `packed_components`): the counter names, then the components as
// region-component records (region-component.ts, the one definition of a
// component's fields), so a field added to the record travels on the link
// unchanged. Replaces a protobuf message per component, whose building and
// 64-bit fields cost the sender more CPU than the bytes it ships. Pure: no I/O.
import { packComponents, unpackComponents, type RegionComponent } from './region-component.ts';

export interface CounterComponent {
  counter: string;
  component: RegionComponent;
}

/** Components a packed batch may hold: a link batch's (512), with room for a sender that sends more. */
export const batchComponentsMax = 4_096;

/** Bytes of a counter name in a packed batch: names are at most 255 characters of up to 4 UTF-8 bytes. */
const nameBytesMax = 0xffff;

// Layout: u8 format (1), u32 count, count x (u16 name length, name UTF-8), then count records back to back.
const format = 1;
const headerBytes = 1 + 4;

/** The components as one payload; throws on a row no reader would accept (a bug in the caller). */
export function encodeBatchComponents(rows: readonly CounterComponent[]): Buffer {
  if (rows.length === 0 || rows.length > batchComponentsMax)
    throw new Error(`a packed batch holds 1..${batchComponentsMax} components, not ${rows.length}`);
  const nameLengths = rows.map((row) => Buffer.byteLength(row.counter, 'utf8'));
  const namesBytes = nameLengths.reduce((sum, length) => sum + 2 + length, 0);
  const records = packComponents(rows.map((row) => row.component));
  const data = Buffer.allocUnsafe(headerBytes + namesBytes + records.length);
  data.writeUInt8(format, 0);
  data.writeUInt32BE(rows.length, 1);
  let at = headerBytes;
  rows.forEach((row, index) => {
    const length = nameLengths[index]!;
    if (length === 0 || length > nameBytesMax) throw new Error(`a packed batch's counter name of ${length} bytes`);
    data.writeUInt16BE(length, at);
    at += 2 + data.write(row.counter, at + 2, 'utf8');
  });
  records.copy(data, at);
  return data;
}

/** The rows of encodeBatchComponents; throws, naming what is wrong, on bytes no writer could make. */
export function decodeBatchComponents(data: Buffer): CounterComponent[] {
  if (data.length < headerBytes) throw new Error(`a packed batch of ${data.length} bytes is cut short`);
  if (data.readUInt8(0) !== format) throw new Error(`a packed batch of unknown format ${data.readUInt8(0)}`);
  const count = data.readUInt32BE(1);
  if (count < 1 || count > batchComponentsMax) throw new Error(`a packed batch says ${count} components (1..${batchComponentsMax})`);
  const names: string[] = [];
  let at = headerBytes;
  for (let index = 0; index < count; index++) {
    if (at + 2 > data.length) throw new Error(`a packed batch of ${count} components is cut short in its names`);
    const length = data.readUInt16BE(at);
    if (length === 0 || at + 2 + length > data.length) throw new Error(`a packed batch's name ${index} is empty or cut short`);
    names.push(data.toString('utf8', at + 2, at + 2 + length));
    at += 2 + length;
  }
  const components = unpackComponents(data.subarray(at));
  if (components.length !== count) throw new Error(`a packed batch says ${count} components but holds ${components.length} records`);
  return components.map((component, index) => ({ counter: names[index]!, component }));
}
