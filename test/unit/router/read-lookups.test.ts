// A page read looks each name up in the directory once: a lookup (hashing
// a fresh string, a probe of a table of millions) is the router's dearest
// step per counter of a page. An exact read looks names up again only when a
// counter was deleted while it was out (then a deleted counter still reads
// as never written); a CACHED read serves hits from one lookup each. Real
// directory (SQLite) and read path; the node pool is a stand-in.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Registry } from 'prom-client';
import { SqliteDirectory } from '../../../src/router/directory/sqlite/store.ts';
import { readExact } from '../../../src/router/read/exact-reader.ts';
import { ReadPath } from '../../../src/router/read/read-path.ts';
import { createRouterMetrics } from '../../../src/router/metrics/router-metrics.ts';
import type { NodePool } from '../../../src/router/nodes/node-pool.ts';
import type { Logger } from '../../../src/common/index.ts';
import { makeTempDir, removeTempDir } from '../../helpers/temp-dir.ts';

const quiet: Logger = { debug() {}, info() {}, warn() {}, error() {} };

/** The directory, counting get() per name. */
function counting(directory: SqliteDirectory) {
  const gets = new Map<string, number>();
  const view = Object.create(directory) as SqliteDirectory;
  view.get = (name: string) => {
    gets.set(name, (gets.get(name) ?? 0) + 1);
    return directory.get(name);
  };
  return { view, gets, reset: () => gets.clear() };
}

/** A node pool answering every shard 5, and running `during` once, while the first read is out. */
function poolAnswering(during?: () => Promise<void>) {
  let calls = 0;
  const pool = {
    async readShards(_address: string, shardIds: readonly number[]) {
      calls++;
      const hook = during;
      during = undefined;
      if (hook) await hook();
      return { totals: shardIds.map(() => '5'), newerGenerationIndexes: [], lsn: '1', role: 'primary', epoch: '1', nodeId: '' };
    },
  } as unknown as NodePool;
  return { pool, calls: () => calls };
}

describe('page reads and directory lookups', () => {
  let dataDir: string;
  let directory: SqliteDirectory;
  const page = Array.from({ length: 50 }, (_, index) => `page-${index}`);
  beforeEach(async () => {
    dataDir = makeTempDir('read-lookups');
    directory = SqliteDirectory.open(dataDir, [
      { primary: 'p0:1', follower: 'f0:1' },
      { primary: 'p1:1', follower: 'f1:1' },
    ]);
    await directory.getOrCreateMany(page);
  });
  afterEach(() => {
    directory.close();
    removeTempDir(dataDir);
  });

  it('router: an exact read of a page looks each name up once when no counter was deleted meanwhile', async () => {
    const { view, gets } = counting(directory);
    const { totals } = await readExact(page, view, poolAnswering().pool, 1_000);
    expect(page.map((name) => totals.get(name)!.total)).toEqual(page.map(() => 5n));
    expect([...gets.values()].every((count) => count === 1)).toBe(true);
    expect(gets.size).toBe(page.length);
  });

  it('router: a counter deleted while an exact read is out reads 0 (as never written), and only then are names looked up again', async () => {
    const { view, gets } = counting(directory);
    const { pool } = poolAnswering(async () => {
      await directory.deleteCounter('page-7');
    });
    const { totals } = await readExact(page, view, pool, 1_000);
    expect(totals.get('page-7')).toMatchObject({ total: 0n, shardCount: 0, source: undefined });
    expect(totals.get('page-8')!.total).toBe(5n);
    expect(gets.get('page-8')).toBeGreaterThan(1);
  });

  it('router: a CACHED page served from the cache looks each name up once and calls no node', async () => {
    const { view, gets, reset } = counting(directory);
    const { pool, calls } = poolAnswering();
    const settings = { refreshIntervalMs: 60_000, readTimeoutMs: 1_000, cacheIdleMs: 600_000, cacheEntriesMax: 1_000 };
    const reads = new ReadPath(view, pool, createRouterMetrics(new Registry()), quiet, settings);
    expect((await reads.readCached(page)).every((read) => read.total === 5n && !read.exact)).toBe(true);
    const callsAfterFirst = calls();
    reset();
    const again = await reads.readCached([...page, 'page-0']);
    expect(again.map((read) => read.total)).toEqual([...page, 'page-0'].map(() => 5n));
    expect(calls()).toBe(callsAfterFirst);
    expect(gets.get('page-0')).toBe(2);
    expect(page.slice(1).every((name) => gets.get(name) === 1)).toBe(true);
  });
});
