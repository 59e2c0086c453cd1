// The publisher's tombstones over a fake directory: a deleted name becomes a
// tombstone component at its incarnation, every tombstone on a term's first
// round (a restart resends them), one deleted through this router the next
// round; it replaces an older component of the name, never a live counter's
// of its incarnation; a total read from a counter deleted since is not
// published. And the receiver's incarnation rule.
import { describe, expect, it } from 'vitest';
import type { CounterInfo, Tombstone } from '../../../../src/router/directory/index.ts';
import { TombstoneSource } from '../../../../src/router/region/publish/index.ts';
import { incarnationRefusal } from '../../../../src/router/region/component-store.ts';
import type { RegionComponent } from '../../../../src/wire/internal/index.ts';

function counterOf(name: string, shardId: number): CounterInfo {
  return { name, shards: [{ shardIndex: 0, shardId, pairIndex: 0 }] } as unknown as CounterInfo;
}

function fakeDirectory() {
  const counters = new Map<string, CounterInfo>();
  const tombstones = new Map<string, Tombstone>();
  return {
    counters,
    tombstones,
    directory: {
      get: (name: string) => counters.get(name),
      tombstone: (name: string) => tombstones.get(name),
      tombstones: () => tombstones.values(),
    },
  };
}

const round = (value: bigint) => ({ term: 3n, round: value });

describe('tombstone source', () => {
  it('tombstones: every tombstone ships on the first round of a term, a marked one the next round, none twice for one incarnation', () => {
    const { tombstones, directory } = fakeDirectory();
    const source = new TombstoneSource('eu', directory);
    tombstones.set('a', { name: 'a', incarnation: 2, deletedMs: 1 });
    const table = new Map<string, RegionComponent>();
    table.set('a', { origin: 'eu', version: round(0n), total: 40n, asOfUnixMs: 1, generation: 1 });
    const changed: string[] = [];
    source.collect(table, round(1n), 500, changed);
    expect(changed).toEqual(['a']);
    expect(table.get('a')).toEqual({
      origin: 'eu',
      version: round(1n),
      total: 0n,
      asOfUnixMs: 500,
      generation: 0,
      incarnation: 2,
      tombstone: true,
    });
    // Not a sweep round: a tombstone recorded through another router waits; a marked one goes now, once.
    tombstones.set('b', { name: 'b', incarnation: 1, deletedMs: 2 });
    tombstones.set('c', { name: 'c', incarnation: 1, deletedMs: 2 });
    source.mark('c');
    const next: string[] = [];
    source.collect(table, round(2n), 600, next);
    expect(next).toEqual(['c']);
    const again: string[] = [];
    source.mark('c');
    source.collect(table, round(3n), 700, again);
    expect(again).toEqual([]);
    // The next term's first round (a restart: an empty table) ships them all again.
    const fresh = new Map<string, RegionComponent>();
    const resent: string[] = [];
    source.collect(fresh, { term: 4n, round: 1n }, 800, resent);
    expect(resent.sort()).toEqual(['a', 'b', 'c']);
  });

  it("tombstones: a live counter's component of the tombstone's incarnation stands (no tombstone over it), an older one is replaced; a total read from a counter deleted since has no incarnation", () => {
    const { counters, tombstones, directory } = fakeDirectory();
    const source = new TombstoneSource('eu', directory);
    tombstones.set('a', { name: 'a', incarnation: 1, deletedMs: 1 });
    tombstones.set('b', { name: 'b', incarnation: 1, deletedMs: 1 });
    const old = counterOf('a', 11);
    counters.set('a', counterOf('a', 12));
    counters.set('b', counterOf('b', 14));
    const table = new Map<string, RegionComponent>([
      ['a', { origin: 'eu', version: round(0n), total: 3n, asOfUnixMs: 1, generation: 0, incarnation: 1 }],
      ['b', { origin: 'eu', version: round(0n), total: 8n, asOfUnixMs: 1, generation: 0 }],
    ]);
    const changed: string[] = [];
    source.collect(table, round(1n), 1, changed);
    expect(changed).toEqual(['b']);
    expect(table.get('a')!.total).toBe(3n);
    expect(table.get('b')).toMatchObject({ tombstone: true, incarnation: 1, total: 0n });
    expect(source.incarnationOf('a')).toBe(1);
    expect(source.incarnationOf('a', counters.get('a'))).toBe(1);
    expect(source.incarnationOf('a', old)).toBeUndefined();
    expect(source.incarnationOf('missing')).toBeUndefined();
    counters.set('plain', counterOf('plain', 13));
    expect(source.incarnationOf('plain')).toBe(0);
  });

  it('receiver: a component of a lower incarnation than this region’s is refused, an equal or higher one is not', () => {
    const part = (incarnation?: number): RegionComponent => ({
      origin: 'us',
      version: round(1n),
      total: 5n,
      asOfUnixMs: 1,
      generation: 0,
      ...(incarnation === undefined ? {} : { incarnation }),
    });
    expect(incarnationRefusal('a', part(), 1)).toMatch(/incarnation 0, this region's is 1/);
    expect(incarnationRefusal('a', part(1), 2)).toMatch(/before a delete/);
    expect(incarnationRefusal('a', part(), 0)).toBeUndefined();
    expect(incarnationRefusal('a', part(2), 2)).toBeUndefined();
    expect(incarnationRefusal('a', part(3), 2)).toBeUndefined();
  });
});
