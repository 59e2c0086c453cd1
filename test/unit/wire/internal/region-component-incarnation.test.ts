// The component record's incarnation: absent reads as 0 and a record of
// incarnation 0 is written byte for byte as before it existed; incarnations
// order components before versions (a delete starts a new count); a
// tombstone carries nothing but its incarnation.
import { describe, expect, it } from 'vitest';
import {
  compareComponents,
  componentProblem,
  decodeComponent,
  encodeComponent,
  incarnationOf,
  mergeComponent,
  packComponents,
  unpackComponents,
  type RegionComponent,
} from '../../../../src/wire/internal/index.ts';

function component(round: bigint, total: bigint, settings: Partial<RegionComponent> = {}): RegionComponent {
  return { origin: 'us', version: { term: 2n, round }, total, asOfUnixMs: 1_000, generation: 0, ...settings };
}

describe('region component incarnation', () => {
  it('component: a record without an incarnation reads as incarnation 0, and one of incarnation 0 is written as before (no extra bytes)', () => {
    const plain = component(3n, 7n);
    const bytes = encodeComponent(plain);
    // u8 length, 'us', five 8-byte fields: the layout from before incarnations.
    expect(bytes.length).toBe(1 + 2 + 40);
    expect(bytes.readUInt8(0)).toBe(2);
    const read = decodeComponent(bytes);
    expect(read.incarnation).toBeUndefined();
    expect(incarnationOf(read)).toBe(0);
    expect(decodeComponent(encodeComponent({ ...plain, incarnation: 0 }))).toEqual(plain);
  });

  it('component: incarnation and tombstone round-trip, beside a sketch and among other records', () => {
    const reborn = component(4n, 9n, { incarnation: 3 });
    const tombstone = component(5n, 0n, { incarnation: 4, tombstone: true });
    const sketched = component(6n, 1n, { incarnation: 2, sketch: Buffer.from([1, 2, 3]) });
    expect(unpackComponents(packComponents([reborn, tombstone, sketched, component(7n, 2n)]))).toEqual([
      reborn,
      tombstone,
      sketched,
      component(7n, 2n),
    ]);
    // Cut short inside the incarnation part: no reader accepts it.
    const bytes = encodeComponent(reborn);
    expect(() => unpackComponents(bytes.subarray(0, bytes.length - 1))).toThrow(/cut short/);
  });

  it('component: a higher incarnation is newer whatever the versions; within one, the version decides; the merge keeps the newer', () => {
    const before = component(90n, 100n);
    const after = component(2n, 1n, { incarnation: 1 });
    expect(compareComponents(after, before)).toBeGreaterThan(0);
    expect(compareComponents(before, after)).toBeLessThan(0);
    expect(compareComponents(component(3n, 1n, { incarnation: 1 }), after)).toBeGreaterThan(0);
    expect(compareComponents(after, { ...after })).toBe(0);
    expect(mergeComponent(after, before)).toBe(after);
    expect(mergeComponent(before, after)).toBe(after);
    // A duplicate keeps the held one.
    const held = component(2n, 1n, { incarnation: 1 });
    expect(mergeComponent(held, { ...held })).toBe(held);
  });

  it('component: a tombstone holds an incarnation of at least 1 and no total, sketch or generation; a negative incarnation is refused', () => {
    expect(componentProblem(component(1n, 0n, { incarnation: 1, tombstone: true }))).toBeUndefined();
    expect(componentProblem(component(1n, 0n, { tombstone: true }))).toMatch(/tombstone/);
    expect(componentProblem(component(1n, 5n, { incarnation: 1, tombstone: true }))).toMatch(/tombstone/);
    expect(componentProblem(component(1n, 0n, { incarnation: 1, tombstone: true, generation: 2 }))).toMatch(/tombstone/);
    expect(componentProblem(component(1n, 0n, { incarnation: -1 }))).toMatch(/incarnation/);
    expect(componentProblem(component(1n, 0n, { incarnation: 2 ** 60 }))).toMatch(/incarnation/);
  });
});
