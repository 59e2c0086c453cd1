// Distinct counts across regions over fakes: every region's sketch travels
// as a component, the node keeps the newest per origin, and a global count
// merges them by register maximum. Whatever order, duplication or lateness
// the components arrive in, the union is register for register the sketch
// of every member added anywhere; a part taken before the newest clear
// counts empty; the component record carries the sketch unchanged.
import { beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  encodeComponent,
  decodeComponent,
  mergeComponent,
  packComponents,
  unpackComponents,
  type RegionComponent,
} from '../../../src/wire/internal/index.ts';
import type { CounterInfo } from '../../../src/router/directory/index.ts';
import { GlobalDistinctReader } from '../../../src/router/region/index.ts';
import { HllSketch, hllRegisterCount, loadMemberHasher, type MemberHasher } from '../../../src/sketch/index.ts';

let hasher: MemberHasher;
beforeAll(async () => {
  hasher = await loadMemberHasher();
});

function sketchOf(members: Iterable<number>): HllSketch {
  const sketch = new HllSketch();
  for (const member of members) {
    const { index, rank } = hasher.registerOf(Buffer.from(`member-${member}`));
    sketch.observe(index, rank);
  }
  return sketch;
}

function registers(sketch: HllSketch): number[] {
  return Array.from({ length: hllRegisterCount }, (_, index) => sketch.get(index));
}

function counterOf(name: string, generation = 0): CounterInfo {
  return {
    name,
    kind: 'distinct',
    window: { bucketMs: 0, retentionMs: 0 },
    shards: [{ shardIndex: 0, shardId: 11, pairIndex: 0 }],
    writableShardCount: 1,
    createdMs: 1,
    growths: [],
    autoscale: true,
    generation,
    ttlMs: null,
  } as unknown as CounterInfo;
}

/** A reader over one counter whose home sketch and held components the test sets. */
function readerWith(counter: CounterInfo, home: HllSketch, held: Map<string, RegionComponent>): GlobalDistinctReader {
  return new GlobalDistinctReader(
    { get: (name) => (name === counter.name ? counter : undefined), readBarrier: async () => {} },
    { union: async () => ({ union: home, shardCount: 1 }) },
    { read: async (counters) => counters.map(() => held) },
  );
}

/** An origin's rounds: members only accumulate, each round's sketch is everything so far. */
function rounds(origin: string, batches: number[][]): RegionComponent[] {
  const seen: number[] = [];
  return batches.map((batch, index) => {
    seen.push(...batch);
    const sketch = sketchOf(seen);
    return {
      origin,
      version: { term: 1n, round: BigInt(index + 1) },
      total: BigInt(Math.round(sketch.estimate())),
      asOfUnixMs: 1_000 + index,
      generation: 0,
      sketch: sketch.serialize(),
    };
  });
}

const memberBatches = fc.array(fc.array(fc.integer({ min: 0, max: 5_000 }), { maxLength: 60 }), { minLength: 1, maxLength: 6 });

describe('distinct counts across regions', () => {
  it('merging delivered components by version, then registers by maximum, is the union of every member, in any order and with duplicates', async () => {
    await fc.assert(
      fc.asyncProperty(
        memberBatches,
        memberBatches,
        fc.array(fc.integer({ min: 0, max: 5_000 }), { maxLength: 60 }),
        fc.infiniteStream(fc.nat()),
        async (usBatches, apBatches, homeMembers, choices) => {
          const published = [...rounds('us', usBatches), ...rounds('ap', apBatches)];
          // Delivered shuffled, some twice, the oldest replayed at the end.
          const sent = [...published, ...published.filter(() => choices.next().value % 3 === 0)];
          for (let index = sent.length - 1; index > 0; index--) {
            const other = choices.next().value % (index + 1);
            [sent[index], sent[other]] = [sent[other]!, sent[index]!];
          }
          sent.push(...published.slice(0, 2));
          const held = new Map<string, RegionComponent>();
          for (const component of sent) held.set(component.origin, mergeComponent(held.get(component.origin), component));
          const counter = counterOf('visitors');
          const count = await readerWith(counter, sketchOf(homeMembers), held).count(['visitors']);
          const everything = sketchOf([...usBatches.flat(), ...apBatches.flat(), ...homeMembers]);
          expect(count.estimate).toBe(everything.estimate());
          // Register for register: the union of the held sketches and the home one is everything's sketch.
          const union = sketchOf(homeMembers);
          for (const component of held.values()) union.mergeFrom(HllSketch.deserialize(component.sketch!));
          expect(registers(union)).toEqual(registers(everything));
        },
      ),
      { numRuns: 40 },
    );
  });

  it('a part taken before the newest clear of the counter counts empty, the home sketch included', async () => {
    const peer = (generation: number, members: number[]): RegionComponent => ({
      origin: 'us',
      version: { term: 1n, round: 1n },
      total: 0n,
      asOfUnixMs: 1,
      generation,
      sketch: sketchOf(members).serialize(),
    });
    const homeMembers = [1, 2, 3, 4, 5, 6, 7, 8];
    // The peer cleared: its generation 1 is newer than the home counter's 0, so the home sketch counts empty.
    const behind = await readerWith(counterOf('c', 0), sketchOf(homeMembers), new Map([['us', peer(1, [100, 101])]])).count(['c']);
    expect(behind.estimate).toBe(sketchOf([100, 101]).estimate());
    // This region cleared: the peer's part of generation 0 counts empty.
    const ahead = await readerWith(counterOf('c', 1), sketchOf(homeMembers), new Map([['us', peer(0, [100, 101])]])).count(['c']);
    expect(ahead.estimate).toBe(sketchOf(homeMembers).estimate());
  });

  it('refuses a counter of another kind', async () => {
    const total = { ...counterOf('t'), kind: 'total' } as CounterInfo;
    await expect(readerWith(total, new HllSketch(), new Map()).count(['t'])).rejects.toThrow('not a distinct counter');
  });

  it('the component record carries a sketch unchanged, and a record without one reads as before', () => {
    const dense = sketchOf(Array.from({ length: 20_000 }, (_, index) => index));
    expect(dense.isDense).toBe(true);
    const withSketch: RegionComponent = {
      origin: 'eu',
      version: { term: 3n, round: 9n },
      total: 20_000n,
      asOfUnixMs: 5,
      generation: 2,
      sketch: dense.serialize(),
    };
    const plain: RegionComponent = { origin: 'us', version: { term: 1n, round: 1n }, total: -4n, asOfUnixMs: 6, generation: 0 };
    expect(decodeComponent(encodeComponent(withSketch))).toEqual(withSketch);
    expect(unpackComponents(packComponents([plain, withSketch, plain]))).toEqual([plain, withSketch, plain]);
    // A record as written before sketches existed: u8 origin length, origin, five u64 fields.
    const legacy = Buffer.concat([Buffer.from([2]), Buffer.from('us'), Buffer.alloc(40)]);
    legacy.writeBigUInt64BE(1n, 3);
    legacy.writeBigUInt64BE(1n, 11);
    legacy.writeBigInt64BE(-4n, 19);
    legacy.writeBigUInt64BE(6n, 27);
    expect(decodeComponent(legacy)).toEqual(plain);
    expect(encodeComponent(plain)).toEqual(legacy);
    // Cut short in the sketch: refused, not read as something else.
    const whole = encodeComponent(withSketch);
    expect(() => decodeComponent(whole.subarray(0, whole.length - 1))).toThrow('cut short');
    expect(() => encodeComponent({ ...withSketch, sketch: Buffer.alloc(0) })).toThrow('sketch');
  });
});
