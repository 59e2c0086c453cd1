// The directory's counter columns against a Map of plain records: any run
// of adds, deletes, shard appends, setting changes and clock steps leaves
// both holding the same facts in the same order; freed slots are reused only
// after slotReuseDelayMs, and a handle to a deleted counter reads its last
// facts until then and refuses after; a walk of the directory model.
// Injected clock.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { CounterTable, slotReuseDelayMs } from '../../../../src/router/directory/counter-table.ts';
import { CounterView, plainCounter, sameCounter } from '../../../../src/router/directory/counter-view.ts';
import {
  counterKinds,
  defaultDirectoryLimits,
  type CounterInfo,
  type CounterKind,
  type ShardInfo,
} from '../../../../src/router/directory/contract.ts';
import { DirectoryModel } from '../../../../src/router/directory/model.ts';

type Plain = { -readonly [Field in keyof CounterInfo]: CounterInfo[Field] } & { shards: ShardInfo[] };

const names = Array.from({ length: 12 }, (_, index) => `c:${index}`);
const nameIndex = fc.integer({ min: 0, max: names.length - 1 });
const op = fc.oneof(
  fc.record({ type: fc.constant('add' as const), name: nameIndex, kind: fc.constantFrom(...counterKinds), autoscale: fc.boolean() }),
  fc.record({ type: fc.constant('remove' as const), name: nameIndex }),
  fc.record({ type: fc.constant('addShard' as const), name: nameIndex, pairIndex: fc.integer({ min: 0, max: 70_000 }) }),
  fc.record({ type: fc.constant('generation' as const), name: nameIndex, generation: fc.integer({ min: 0, max: 2 ** 32 - 1 }) }),
  fc.record({
    type: fc.constant('window' as const),
    name: nameIndex,
    bucketMs: fc.constantFrom(0, 1_000, 60_000),
    retentionMs: fc.constantFrom(0, 60_000, 3_600_000),
  }),
  fc.record({ type: fc.constant('ttl' as const), name: nameIndex, ttlMs: fc.option(fc.integer({ min: 0, max: 1e9 })) }),
  fc.record({ type: fc.constant('growth' as const), name: nameIndex, grownMs: fc.integer({ min: 0, max: 1e12 }) }),
  fc.record({ type: fc.constant('autoscale' as const), name: nameIndex, autoscale: fc.boolean() }),
  fc.record({ type: fc.constant('advance' as const), ms: fc.constantFrom(1, 1_000, slotReuseDelayMs) }),
);

function factsOf(table: CounterTable, name: string, slot: number): Plain {
  const view = new CounterView(table, slot, table.incarnationOf(slot), name);
  return plainCounter(view) as Plain;
}

describe('counter table', () => {
  it('any run of changes leaves the columns equal to a Map of records, in the same order', () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 120 }), (ops) => {
        let nowMs = 0;
        let nextShardId = 1;
        const table = new CounterTable(() => nowMs);
        const model = new Map<string, Plain>();
        const slotOf = (name: string): number => table.slotOf(name)!;
        for (const step of ops) {
          if (step.type === 'advance') {
            nowMs += step.ms;
            continue;
          }
          const name = names[step.name]!;
          const held = model.get(name);
          if (step.type === 'add') {
            if (held !== undefined) continue;
            const row = {
              kind: step.kind as CounterKind,
              window: { bucketMs: 0, retentionMs: 0 },
              createdMs: nowMs,
              autoscale: step.autoscale,
              generation: 0,
              ttlMs: null,
              lastWriteMonotonicMs: nowMs,
            };
            table.add(name, row);
            model.set(name, { name, ...row, shards: [], writableShardCount: 0, growths: [] });
            continue;
          }
          if (held === undefined) continue;
          const slot = slotOf(name);
          switch (step.type) {
            case 'remove':
              table.remove(name);
              model.delete(name);
              break;
            case 'addShard': {
              const shard = { shardIndex: held.shards.length, shardId: nextShardId++, pairIndex: step.pairIndex % 65_536 };
              table.addShard(slot, shard);
              table.setWritableShardCount(slot, held.shards.length + 1);
              held.shards.push(shard);
              held.writableShardCount = held.shards.length;
              break;
            }
            case 'generation':
              table.setGeneration(slot, step.generation);
              held.generation = step.generation;
              break;
            case 'window':
              table.setWindow(slot, { bucketMs: step.bucketMs, retentionMs: step.retentionMs });
              held.window = { bucketMs: step.bucketMs, retentionMs: step.retentionMs };
              break;
            case 'ttl':
              table.setTtl(slot, step.ttlMs);
              held.ttlMs = step.ttlMs;
              break;
            case 'growth':
              table.addGrowth(slot, { previousShardCount: held.shards.length, grownMs: step.grownMs });
              held.growths = [...held.growths, { previousShardCount: held.shards.length, grownMs: step.grownMs }];
              break;
            case 'autoscale':
              table.setAutoscale(slot, step.autoscale);
              held.autoscale = step.autoscale;
              break;
          }
        }
        expect(table.size).toBe(model.size);
        expect([...table.names()]).toEqual([...model.keys()]);
        const slots = new Set<number>();
        for (const [name, slot] of table.entries()) {
          slots.add(slot);
          expect(factsOf(table, name, slot)).toEqual(model.get(name));
        }
        // Every live counter has a slot of its own, and no more slots were opened than counters ever held at once plus those freed.
        expect(slots.size).toBe(model.size);
        expect(table.slotsUsed).toBeLessThanOrEqual(ops.filter((step) => step.type === 'add').length);
      }),
      { numRuns: 300 },
    );
  });

  it('a freed slot is reused only after slotReuseDelayMs; until then its handle reads the deleted counter, after it refuses', () => {
    let nowMs = 0;
    const table = new CounterTable(() => nowMs);
    const row = {
      kind: 'total' as const,
      window: { bucketMs: 0, retentionMs: 0 },
      createdMs: 0,
      autoscale: true,
      generation: 3,
      ttlMs: null,
      lastWriteMonotonicMs: 0,
    };
    const slot = table.add('old', row);
    table.addShard(slot, { shardIndex: 0, shardId: 41, pairIndex: 1 });
    const handle = new CounterView(table, slot, table.incarnationOf(slot), 'old');
    table.remove('old');
    expect(table.has('old')).toBe(false);
    // Freed just now: a new counter gets a fresh slot, the deleted one's facts stay put.
    const fresh = table.add('fresh', row);
    expect(fresh).not.toBe(slot);
    expect(handle.generation).toBe(3);
    expect(handle.shards).toEqual([{ shardIndex: 0, shardId: 41, pairIndex: 1 }]);
    nowMs += slotReuseDelayMs;
    const reused = table.add('new', { ...row, generation: 0 });
    expect(reused).toBe(slot);
    expect(table.shardCountOf(reused)).toBe(0);
    expect(() => handle.generation).toThrow(/was deleted while a call still used it/);
    const newHandle = new CounterView(table, reused, table.incarnationOf(reused), 'new');
    expect(sameCounter(handle, newHandle)).toBe(false);
    expect(sameCounter(newHandle, new CounterView(table, reused, table.incarnationOf(reused), 'new'))).toBe(true);
    expect(table.slotsUsed).toBe(2);
  });

  it('columns grow by doubling and keep every counter through each growth', () => {
    const table = new CounterTable(() => 0);
    const count = 2_500;
    for (let index = 0; index < count; index++) {
      const slot = table.add(`n${index}`, {
        kind: counterKinds[index % 3]!,
        window: { bucketMs: index % 2 === 0 ? 0 : 1_000, retentionMs: index % 2 === 0 ? 0 : 60_000 },
        createdMs: index,
        autoscale: index % 5 === 0,
        generation: index,
        ttlMs: index % 7 === 0 ? index : null,
        lastWriteMonotonicMs: index * 2,
      });
      table.addShard(slot, { shardIndex: 0, shardId: 2 ** 40 + index, pairIndex: index % 3 });
      table.setWritableShardCount(slot, 1);
    }
    expect(table.slotsUsed).toBe(count);
    for (let index = 0; index < count; index++) {
      const slot = table.slotOf(`n${index}`)!;
      expect(slot).toBe(index);
      expect(table.kindOf(slot)).toBe(counterKinds[index % 3]);
      expect(table.windowOf(slot)).toEqual(index % 2 === 0 ? { bucketMs: 0, retentionMs: 0 } : { bucketMs: 1_000, retentionMs: 60_000 });
      expect(table.createdMsOf(slot)).toBe(index);
      expect(table.autoscaleOf(slot)).toBe(index % 5 === 0);
      expect(table.generationOf(slot)).toBe(index);
      expect(table.ttlMsOf(slot)).toBe(index % 7 === 0 ? index : null);
      expect(table.lastWriteMonotonicMsOf(slot)).toBe(index * 2);
      expect(table.shardIdOf(slot, 0)).toBe(2 ** 40 + index);
      expect(table.pairIndexOf(slot, 0)).toBe(index % 3);
    }
    // One frozen window object per setting: readers compare windows by identity.
    expect(table.windowOf(1)).toBe(table.windowOf(3));
  });

  it('a shard out of order, a pair index or generation past its column, and a name added twice are programmer errors', () => {
    const table = new CounterTable(() => 0);
    const row = {
      kind: 'total' as const,
      window: { bucketMs: 0, retentionMs: 0 },
      createdMs: 0,
      autoscale: true,
      generation: 0,
      ttlMs: null,
      lastWriteMonotonicMs: 0,
    };
    const slot = table.add('a', row);
    expect(() => table.add('a', row)).toThrow(/added twice/);
    expect(() => table.addShard(slot, { shardIndex: 1, shardId: 1, pairIndex: 0 })).toThrow(/added after/);
    expect(() => table.addShard(slot, { shardIndex: 0, shardId: 1, pairIndex: 70_000 })).toThrow();
    expect(() => table.setGeneration(slot, 2 ** 32)).toThrow(/generation/);
    expect(table.shardCountOf(slot)).toBe(0);
    expect(table.generationOf(slot)).toBe(0);
  });
});

describe('directory model walks', () => {
  it('liveCounters with reuseHandle points one handle at each counter in order, deletions skipped, creations visited', () => {
    const model = new DirectoryModel(defaultDirectoryLimits, () => 0);
    const add = (name: string): void => {
      model.addCounter({
        name,
        kind: 'total',
        createdMs: 0,
        autoscale: true,
        window: { bucketMs: 0, retentionMs: 0 },
        generation: 0,
        ttlMs: null,
      });
    };
    for (const name of ['a', 'b', 'c']) add(name);
    const walk = model.liveCounters(true);
    const first = walk.next();
    expect(first.done).toBe(false);
    const handle = first.value as CounterInfo;
    expect(handle.name).toBe('a');
    model.removeCounter('b');
    add('d');
    const seen = [handle.name];
    for (let step = walk.next(); step.done !== true; step = walk.next()) {
      expect(step.value).toBe(handle);
      seen.push(step.value.name);
    }
    expect(seen).toEqual(['a', 'c', 'd']);
    // Without it, each step is a handle of its own that stays on its counter.
    expect(Array.from(model.liveCounters(), (counter) => counter.name)).toEqual(['a', 'c', 'd']);
  });
});
