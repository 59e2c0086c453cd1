// Unit tests for the counter Directory with a real SQLite file in a temp dir:
// creation (one transaction per call, its caps, rollback), growth and its
// limits, persistence across reopen, and refusal of a pair configuration
// that does not match the stored one.
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { SqliteDirectory as Directory } from '../../src/router/sqlite-directory.ts';
import { type DirectoryLimits, type PairAddresses } from '../../src/router/directory.ts';
import { newCountersPerCallMax, shardsPerCounterMax } from '../../src/common/limits.ts';
import { TallyError } from '../../src/common/errors.ts';
import { makeTempDir, removeTempDir } from '../helpers/temp-dir.ts';
import { codeOfAsync } from '../helpers/rejection.ts';

const threePairs: PairAddresses[] = [
  { primary: 'p0:1', follower: 'f0:1' },
  { primary: 'p1:1', follower: 'f1:1' },
  { primary: 'p2:1', follower: 'f2:1' },
];

function shardsPerPair(directory: Directory, name: string): number[] {
  const counts = directory.allPairs().map(() => 0);
  for (const shard of directory.get(name)!.shards) counts[shard.pairIndex]!++;
  return counts;
}

describe('directory', () => {
  let dataDir: string;
  const opened: Directory[] = [];
  let clockMs = 1_700_000_000_000;
  const open = (pairs: readonly PairAddresses[] = threePairs, limits?: DirectoryLimits): Directory => {
    const directory = Directory.open(dataDir, pairs, () => clockMs, limits);
    opened.push(directory);
    return directory;
  };

  beforeEach(() => {
    dataDir = makeTempDir('directory');
  });
  afterEach(() => {
    vi.restoreAllMocks();
    for (const directory of opened.splice(0)) directory.close();
    removeTempDir(dataDir);
  });

  it('directory: its data directory is 0700 and its files 0600', async () => {
    const directory = open();
    await directory.getOrCreate('private');
    expect(fs.statSync(dataDir).mode & 0o777).toBe(0o700);
    const files = fs.readdirSync(dataDir);
    expect(files).toContain('directory.sqlite');
    for (const file of files) expect(fs.statSync(path.join(dataDir, file)).mode & 0o777, file).toBe(0o600);
  });

  it('directory: a second opener of the same file is refused while the first holds it, and admitted once it closes', async () => {
    const first = open();
    await first.getOrCreate('a');
    const error = await codeOfAsync(() => open());
    expect(error).toBe('failed_precondition');
    expect(() => open()).toThrow(/in use by another router/);
    // Nothing of the refused opener reached the file: the first goes on as it was.
    expect((await first.getOrCreate('b')).shards[0]!.shardId).toBe(2);
    await first.close();
    expect(open().get('b')).toBeDefined();
  });

  it('directory: getOrCreate makes a counter with one shard, once', async () => {
    const directory = open();
    expect(directory.get('views')).toBeUndefined();
    const created = await directory.getOrCreate('views');
    expect(created.name).toBe('views');
    expect(created.createdMs).toBe(clockMs);
    expect(created.shards).toHaveLength(1);
    expect(created.shards[0]!.shardIndex).toBe(0);
    expect(created.shards[0]!.shardId).toBeGreaterThan(0);
    expect(await directory.getOrCreate('views')).toBe(created);
    expect((await directory.getOrCreate('views')).shards).toHaveLength(1);
    expect(directory.counterCount).toBe(1);
  });

  it('directory: new pairs start at epoch 1, out of sync, with their configured roles', async () => {
    const directory = open();
    expect(directory.allPairs().map((pair) => ({ ...pair }))).toEqual(
      threePairs.map((pair, pairIndex) => expect.objectContaining({ pairIndex, ...pair, epoch: 1n, inSync: false })),
    );
    expect(directory.pair(2).primary).toBe('p2:1');
  });

  it('directory: a pair update (failover) survives reopen, and the original configuration still matches it', async () => {
    const directory = open();
    await directory.updatePair(1, { primary: 'f1:1', follower: 'p1:1', epoch: 2n, inSync: true });
    directory.close();
    const reopened = open();
    expect(reopened.pair(1)).toMatchObject({ pairIndex: 1, primary: 'f1:1', follower: 'p1:1', epoch: 2n, inSync: true });
    expect(reopened.pair(0)).toMatchObject({ primary: 'p0:1', epoch: 1n, inSync: false });
  });

  it('directory: a pair update may not move the epoch back', async () => {
    const directory = open();
    await directory.updatePair(0, { primary: 'p0:1', follower: 'f0:1', epoch: 5n, inSync: true });
    await expect(directory.updatePair(0, { primary: 'f0:1', follower: 'p0:1', epoch: 4n, inSync: false })).rejects.toThrow(/epoch/);
    expect(directory.pair(0)).toMatchObject({ primary: 'p0:1', epoch: 5n, inSync: true });
  });

  it('directory: each growth is recorded with the shard count before it, and survives reopen', async () => {
    const directory = open();
    await directory.getOrCreate('c');
    clockMs += 10;
    await directory.setShards('c', 3);
    await directory.setShards('c', 3);
    clockMs += 10;
    await directory.setShards('c', 5);
    const growths = [
      { previousShardCount: 1, grownMs: clockMs - 10 },
      { previousShardCount: 3, grownMs: clockMs },
    ];
    expect(directory.get('c')!.growths).toEqual(growths);
    expect((await directory.getOrCreate('fresh')).growths).toEqual([]);
    directory.close();
    expect(open().get('c')!.growths).toEqual(growths);
  });

  it('directory: setShards grows a counter, keeping its existing shards', async () => {
    const directory = open();
    const first = (await directory.getOrCreate('c')).shards[0]!;
    const result = await directory.setShards('c', 4);
    expect(result.previousShardCount).toBe(1);
    expect(result.counter.shards).toHaveLength(4);
    expect(result.counter.shards[0]).toEqual(first);
    expect(result.counter.shards.map((shard) => shard.shardIndex)).toEqual([0, 1, 2, 3]);
    expect(new Set(result.counter.shards.map((shard) => shard.shardId)).size).toBe(4);
  });

  it('directory: setShards to the current count changes nothing', async () => {
    const directory = open();
    await directory.setShards((await directory.getOrCreate('c')).name, 2);
    const before = structuredClone(directory.get('c')!.shards);
    expect((await directory.setShards('c', 2)).previousShardCount).toBe(2);
    expect(directory.get('c')!.shards).toEqual(before);
  });

  it('directory: setShards refuses to shrink with failed_precondition and keeps every shard', async () => {
    const directory = open();
    await directory.getOrCreate('c');
    await directory.setShards('c', 3);
    expect(await codeOfAsync(() => directory.setShards('c', 2))).toBe('failed_precondition');
    expect(directory.get('c')!.shards).toHaveLength(3);
  });

  it('directory: setShards on an unknown counter is not_found and creates nothing', async () => {
    const directory = open();
    expect(await codeOfAsync(() => directory.setShards('ghost', 2))).toBe('not_found');
    expect(directory.get('ghost')).toBeUndefined();
    expect(directory.counterCount).toBe(0);
  });

  it.each([0, -1, 1.5, Number.NaN, shardsPerCounterMax + 1])(
    'directory: setShards refuses shard count %s with invalid_argument',
    async (shardCount) => {
      const directory = open();
      await directory.getOrCreate('c');
      expect(await codeOfAsync(() => directory.setShards('c', shardCount))).toBe('invalid_argument');
      expect(directory.get('c')!.shards).toHaveLength(1);
    },
  );

  it('directory: setShards accepts exactly shardsPerCounterMax shards', async () => {
    const directory = open();
    await directory.getOrCreate('c');
    expect((await directory.setShards('c', shardsPerCounterMax)).counter.shards).toHaveLength(shardsPerCounterMax);
  });

  it("directory: one counter's shards spread evenly over the pairs", async () => {
    const directory = open();
    await directory.getOrCreate('c');
    await directory.setShards('c', 3);
    expect(shardsPerPair(directory, 'c')).toEqual([1, 1, 1]);
    await directory.setShards('c', 7);
    expect(shardsPerPair(directory, 'c').sort()).toEqual([2, 2, 3]);
    await directory.setShards('c', 9);
    expect(shardsPerPair(directory, 'c')).toEqual([3, 3, 3]);
  });

  it('directory: single-shard counters are spread over the pairs', async () => {
    const directory = open();
    for (let index = 0; index < 9; index++) await directory.getOrCreate(`c${index}`);
    const perPair = [0, 0, 0];
    for (let index = 0; index < 9; index++) perPair[directory.get(`c${index}`)!.shards[0]!.pairIndex]!++;
    expect(perPair).toEqual([3, 3, 3]);
  });

  it('directory: reopen restores counters, shards, shard ids and creation times', async () => {
    const directory = open();
    await directory.getOrCreate('a');
    clockMs += 1_000;
    await directory.getOrCreate('b');
    await directory.setShards('b', 5);
    await directory.getOrCreate('ünïcode 😀');
    const before = ['a', 'b', 'ünïcode 😀'].map((name) => structuredClone(directory.get(name)!));
    directory.close();

    const reopened = open();
    expect(reopened.counterCount).toBe(3);
    // Everything but the last write, which memory alone holds: it restarts at the load.
    for (const counter of before) expect(reopened.get(counter.name)).toEqual({ ...counter, lastWriteMs: clockMs });
  });

  it('directory: shard ids are never reused after reopen', async () => {
    const directory = open();
    await directory.getOrCreate('a');
    await directory.setShards('a', 4);
    await directory.getOrCreate('b');
    const oldIds = [...directory.get('a')!.shards, ...directory.get('b')!.shards].map((shard) => shard.shardId);
    directory.close();

    const reopened = open();
    await reopened.setShards('a', 6);
    await reopened.getOrCreate('c');
    const newIds = [...reopened.get('a')!.shards.slice(4), ...reopened.get('c')!.shards].map((shard) => shard.shardId);
    expect(newIds).toHaveLength(3);
    for (const id of newIds) expect(id).toBeGreaterThan(Math.max(...oldIds));
    expect(new Set([...oldIds, ...newIds]).size).toBe(oldIds.length + newIds.length);
  });

  it('directory: a shard id is not reused even when the rows holding the highest ids are gone', async () => {
    // Nodes' logs still hold entries under old shard ids, so an id must never
    // come back, even if the newest counter's rows were removed by hand.
    const directory = open();
    await directory.getOrCreate('kept');
    await directory.getOrCreate('removed');
    await directory.setShards('removed', 3);
    const highestId = Math.max(...directory.get('removed')!.shards.map((shard) => shard.shardId));
    directory.close();
    const db = new Database(path.join(dataDir, 'directory.sqlite'));
    db.prepare("DELETE FROM shards WHERE counter = 'removed'").run();
    db.prepare("DELETE FROM counters WHERE name = 'removed'").run();
    db.close();

    const reopened = open();
    expect(reopened.get('removed')).toBeUndefined();
    expect((await reopened.getOrCreate('new')).shards[0]!.shardId).toBeGreaterThan(highestId);
  });

  it('directory: after reopen, growth still spreads shards using the restored placement', async () => {
    const directory = open();
    await directory.getOrCreate('c');
    await directory.setShards('c', 2);
    directory.close();
    const reopened = open();
    await reopened.setShards('c', 3);
    expect(shardsPerPair(reopened, 'c')).toEqual([1, 1, 1]);
  });

  it('directory: reopening with a pair whose members changed throws failed_precondition', async () => {
    const directory = open();
    await directory.getOrCreate('c');
    directory.close();
    const changed = threePairs.map((pair, index) => (index === 1 ? { primary: 'p1:1', follower: 'elsewhere:1' } : pair));
    expect(await codeOfAsync(() => open(changed))).toBe('failed_precondition');
  });

  it('directory: reopening with fewer pairs than stored throws failed_precondition', async () => {
    open().close();
    expect(await codeOfAsync(() => open(threePairs.slice(0, 2)))).toBe('failed_precondition');
  });

  it('directory: reopening with pairs in another order throws failed_precondition', async () => {
    open().close();
    expect(await codeOfAsync(() => open([threePairs[1]!, threePairs[0]!, threePairs[2]!]))).toBe('failed_precondition');
  });

  it('directory: reopening with a pair whose primary and follower swapped (after a failover) is accepted', async () => {
    open().close();
    const swapped = threePairs.map((pair, index) => (index === 0 ? { primary: pair.follower, follower: pair.primary } : pair));
    const directory = open(swapped);
    // The directory keeps its stored roles; the configuration only names the members.
    expect(directory.pair(0)).toMatchObject({ primary: 'p0:1', follower: 'f0:1' });
  });

  it('directory: reopening with an added pair keeps the old pairs and places new shards on the new pair', async () => {
    const directory = open();
    await directory.getOrCreate('c');
    await directory.setShards('c', 3);
    directory.close();
    const fourPairs = [...threePairs, { primary: 'p3:1', follower: 'f3:1' }];
    const reopened = open(fourPairs);
    expect(reopened.allPairs()).toHaveLength(4);
    expect(reopened.pair(3)).toMatchObject({ primary: 'p3:1', follower: 'f3:1', epoch: 1n });
    await reopened.setShards('c', 4);
    expect(shardsPerPair(reopened, 'c')).toEqual([1, 1, 1, 1]);
  });
  it('directory: scan lists committed counters in UTF-8 byte order within a range, with kind and shard count', async () => {
    const directory = open();
    // UTF-16 order (JavaScript's sort) puts the astral 😀 before U+FFFD; byte order puts it after.
    const names = ['b', 'a:2', 'a:10', 'a:\ufffd', 'a:😀', 'a:é', 'a;', 'a', 'A:1'];
    await directory.getOrCreateMany(names);
    await directory.getOrCreate('a:m', 'membership', 3);
    await directory.setShards('a:10', 4);
    const byteOrder = [...names, 'a:m'].sort((left, right) => Buffer.compare(Buffer.from(left), Buffer.from(right)));
    expect(byteOrder).not.toEqual([...names, 'a:m'].sort());
    expect((await directory.scan({ after: '', from: '', before: undefined }, 100)).map((row) => row.name)).toEqual(byteOrder);
    // The a: range, resumed after a name, in two pages.
    const range = { after: '', from: 'a:', before: 'a;' };
    const first = await directory.scan(range, 3);
    expect(first.map((row) => row.name)).toEqual(['a:10', 'a:2', 'a:m']);
    expect(first[0]).toEqual({ name: 'a:10', kind: 'total', shardCount: 4, ttlMs: null });
    expect(first[2]).toEqual({ name: 'a:m', kind: 'membership', shardCount: 3, ttlMs: null });
    expect((await directory.scan({ ...range, after: 'a:m' }, 10)).map((row) => row.name)).toEqual(['a:é', 'a:\ufffd', 'a:😀']);
    expect(await directory.scan({ ...range, after: 'a:😀' }, 10)).toEqual([]);
  });

  it('directory: a TTL survives reopen (null follows the default, 0 never); the idle clock restarts at load, never earlier', async () => {
    const directory = open();
    await directory.getOrCreateMany(['own', 'never', 'inherit']);
    await directory.setTtl('own', 5_000);
    await directory.setTtl('never', 0);
    expect(await codeOfAsync(() => directory.setTtl('ghost', 5_000))).toBe('not_found');
    expect(directory.get('ghost')).toBeUndefined();
    expect((await directory.scan({ after: '', from: '', before: undefined }, 10)).map((row) => [row.name, row.ttlMs])).toEqual([
      ['inherit', null],
      ['never', 0],
      ['own', 5_000],
    ]);
    directory.close();
    clockMs += 3_600_000;
    const reopened = open();
    expect(['own', 'never', 'inherit'].map((name) => reopened.get(name)!.ttlMs)).toEqual([5_000, 0, null]);
    // Last writes are not stored: counted from the load, an hour after the last real one.
    expect(reopened.get('own')!.lastWriteMs).toBe(clockMs);
  });

  it('directory: every write path (getOrCreate, getOrCreateMany) and setTtl restart a counter’s idle clock; reads do not', async () => {
    const directory = open();
    const created = await directory.getOrCreate('a');
    await directory.getOrCreateMany(['b', 'b', 'c']);
    expect(created.lastWriteMs).toBe(clockMs);
    clockMs += 1_000;
    directory.get('a');
    await directory.scan({ after: '', from: '', before: undefined }, 10);
    expect(directory.get('a')!.lastWriteMs).toBe(clockMs - 1_000);
    await directory.getOrCreate('a');
    await directory.getOrCreateMany(['b', 'b']);
    expect([...directory.liveCounters()].map((counter) => counter.lastWriteMs)).toEqual([clockMs, clockMs, clockMs - 1_000]);
    clockMs += 1_000;
    await directory.setTtl('c', 60_000);
    expect(directory.get('c')!.lastWriteMs).toBe(clockMs);
  });

  describe('creation', () => {
    /** The TallyError `action` throws; fails the test when it throws nothing or something else. */
    const errorOf = async (action: () => unknown): Promise<TallyError> => {
      try {
        await action();
      } catch (error) {
        expect(error).toBeInstanceOf(TallyError);
        return error as TallyError;
      }
      throw new Error('expected an error, got none');
    };
    // The directory holds its file under an exclusive lock: these go through its own connection.
    const dbOf = (directory: Directory): Database.Database => directory['db'];
    /** What the file holds (committed rows, not memory). */
    const onDisk = (directory: Directory): { counters: string[]; shardRows: number; shardIds: number[] } => {
      const db = dbOf(directory);
      {
        const counters = (db.prepare('SELECT name FROM counters ORDER BY name').all() as { name: string }[]).map((row) => row.name);
        const shardIds = (db.prepare('SELECT shard_id FROM shards ORDER BY shard_id').all() as { shard_id: number }[]).map(
          (row) => row.shard_id,
        );
        return { counters, shardRows: shardIds.length, shardIds };
      }
    };
    /** Makes every later insert of `name` into `table` fail inside SQLite, as a full disk would. */
    const poison = (directory: Directory, table: 'counters' | 'shards', name: string): void => {
      const column = table === 'counters' ? 'name' : 'counter';
      dbOf(directory).exec(
        `CREATE TRIGGER poison_${table} BEFORE INSERT ON ${table} WHEN NEW.${column} = '${name}' BEGIN SELECT RAISE(ABORT, 'injected failure'); END`,
      );
    };
    const cure = (directory: Directory, table: 'counters' | 'shards'): void => {
      dbOf(directory).exec(`DROP TRIGGER poison_${table}`);
    };
    const names = (count: number, prefix = 'n'): string[] => Array.from({ length: count }, (_, index) => `${prefix}:${index}`);

    it("directory: a call's new counters are created in one transaction, existing ones in none", async () => {
      const directory = open();
      await directory.getOrCreate('old');
      const transaction = vi.spyOn(Database.prototype, 'transaction');
      const wanted = ['old', ...names(500), 'old', ...names(500, 'm')];
      const counters = await directory.getOrCreateMany(wanted);
      expect(transaction).toHaveBeenCalledTimes(1);
      expect(counters.map((counter) => counter.name)).toEqual(wanted);
      expect(counters[0]).toBe(directory.get('old'));
      expect(counters[501]).toBe(counters[0]);
      expect(directory.counterCount).toBe(1_001);
      expect(directory.shardCount).toBe(1_001);
      await directory.getOrCreateMany(wanted);
      await directory.getOrCreate('old');
      expect(transaction).toHaveBeenCalledTimes(1);
      expect(onDisk(directory).counters).toHaveLength(1_001);
    });

    it('directory: a name repeated within a call, in and out of order, is one counter with one shard', async () => {
      const directory = open();
      const counters = await directory.getOrCreateMany(['a', 'b', 'a', 'a', 'c', 'b']);
      expect(counters[0]).toBe(counters[2]);
      expect(counters[0]).toBe(counters[3]);
      expect(counters[1]).toBe(counters[5]);
      expect(counters.map((counter) => counter.shards.length)).toEqual([1, 1, 1, 1, 1, 1]);
      const { counters: stored, shardIds } = onDisk(directory);
      expect(stored).toEqual(['a', 'b', 'c']);
      expect(new Set(shardIds).size).toBe(3);
    });

    it("directory: one call's new counters spread over the pairs as one at a time would", async () => {
      const directory = open();
      await directory.getOrCreateMany(names(9));
      const perPair = [0, 0, 0];
      for (const name of names(9)) perPair[directory.get(name)!.shards[0]!.pairIndex]!++;
      expect(perPair).toEqual([3, 3, 3]);
    });

    it('directory: a failed creation transaction changes neither memory nor the file, and creation works after it', async () => {
      const directory = open();
      await directory.getOrCreateMany(['old:0', 'old:1']);
      const before = { counters: directory.counterCount, shards: directory.shardCount, disk: onDisk(directory) };
      for (const table of ['counters', 'shards'] as const) {
        poison(directory, table, 'bad');
        const batch = ['x:0', 'x:1', 'bad', 'x:2'];
        await expect(directory.getOrCreateMany(batch)).rejects.toThrow(/injected failure/);
        for (const name of batch) expect(directory.get(name), name).toBeUndefined();
        expect(directory.counterCount).toBe(before.counters);
        expect(directory.shardCount).toBe(before.shards);
        expect(onDisk(directory)).toEqual(before.disk);
        cure(directory, table);
      }
      // Placement counts were not touched by the failed calls: the next three land one per pair.
      await directory.getOrCreateMany(['y:0', 'y:1', 'y:2', 'bad']);
      const pairs = ['y:0', 'y:1', 'y:2', 'bad', 'old:0', 'old:1'].map((name) => directory.get(name)!.shards[0]!.pairIndex);
      expect(pairs.sort()).toEqual([0, 0, 1, 1, 2, 2]);
      const disk = onDisk(directory);
      expect(disk.counters).toEqual(['bad', 'old:0', 'old:1', 'y:0', 'y:1', 'y:2']);
      expect(new Set(disk.shardIds).size).toBe(6);
      const inMemory = disk.counters.map((name) => structuredClone(directory.get(name)!));
      directory.close();
      const reopened = open();
      expect(disk.counters.map((name) => reopened.get(name))).toEqual(inMemory);
      expect(reopened.shardCount).toBe(6);
    });

    it('directory: more new counters than newCountersPerCallMax in one call is resource_exhausted and creates nothing', async () => {
      const directory = open();
      await directory.getOrCreate('old');
      const error = await errorOf(() => directory.getOrCreateMany(['old', ...names(newCountersPerCallMax + 1)]));
      expect(error.code).toBe('resource_exhausted');
      expect(error.message).toContain(`${newCountersPerCallMax} new counters per call`);
      expect(error.message).toContain('newCountersPerCallMax');
      expect(directory.counterCount).toBe(1);
      expect(onDisk(directory).counters).toEqual(['old']);
      // Exactly the cap, with existing names besides: created.
      await directory.getOrCreateMany(['old', ...names(newCountersPerCallMax), 'old']);
      expect(directory.counterCount).toBe(newCountersPerCallMax + 1);
    });

    it('directory: past countersMax new counters are resource_exhausted, all or nothing, and existing ones are still served', async () => {
      const directory = open(threePairs, { countersMax: 3, shardsTotalMax: 100 });
      await directory.getOrCreateMany(['a', 'b']);
      const error = await errorOf(() => directory.getOrCreateMany(['a', 'c', 'd']));
      expect(error.code).toBe('resource_exhausted');
      expect(error.message).toContain('limit of 3 counters');
      expect(error.message).toContain('--counters-max');
      expect(directory.get('c')).toBeUndefined();
      expect((await directory.getOrCreateMany(['a', 'c', 'a']))[1]!.name).toBe('c');
      expect(await codeOfAsync(() => directory.getOrCreate('e'))).toBe('resource_exhausted');
      expect(await codeOfAsync(() => directory.getOrCreate('e', 'membership', 2))).toBe('resource_exhausted');
      expect((await directory.getOrCreateMany(['a', 'b', 'c'])).map((counter) => counter.name)).toEqual(['a', 'b', 'c']);
      expect((await directory.setShards('a', 4)).counter.shards).toHaveLength(4);
      expect(onDisk(directory).counters).toEqual(['a', 'b', 'c']);
    });

    it('directory: past shardsTotalMax creation and growth are resource_exhausted; a membership counter costs its partitions', async () => {
      const directory = open(threePairs, { countersMax: 100, shardsTotalMax: 20 });
      await directory.getOrCreate('members', 'membership', 16);
      expect(directory.shardCount).toBe(16);
      const error = await errorOf(() => directory.getOrCreate('more-members', 'membership', 16));
      expect(error.code).toBe('resource_exhausted');
      expect(error.message).toContain('limit of 20 shards');
      expect(error.message).toContain('--shards-total-max');
      expect(directory.get('more-members')).toBeUndefined();
      await directory.getOrCreateMany(['t:0', 't:1']);
      expect(await codeOfAsync(() => directory.setShards('t:0', 4))).toBe('resource_exhausted');
      expect(directory.get('t:0')!.shards).toHaveLength(1);
      await directory.setShards('t:0', 3);
      expect(directory.shardCount).toBe(20);
      expect(await codeOfAsync(() => directory.getOrCreateMany(['t:1', 't:2']))).toBe('resource_exhausted');
      expect((await directory.getOrCreateMany(['t:1', 't:0'])).map((counter) => counter.shards.length)).toEqual([1, 3]);
      expect(onDisk(directory).shardRows).toBe(20);
    });

    it('directory: a call naming a counter of another kind creates none of its new counters', async () => {
      const directory = open();
      await directory.getOrCreate('members', 'membership', 4);
      expect(await codeOfAsync(() => directory.getOrCreateMany(['new:0', 'members', 'new:1']))).toBe('failed_precondition');
      expect(directory.get('new:0')).toBeUndefined();
      expect(directory.counterCount).toBe(1);
      expect(onDisk(directory).counters).toEqual(['members']);
    });

    it('directory: reopened above a lowered cap, it keeps every counter, warns, and creates no more', async () => {
      const directory = open();
      await directory.getOrCreateMany(['a', 'b', 'c']);
      directory.close();
      const reopened = open(threePairs, { countersMax: 2, shardsTotalMax: 2 });
      expect(reopened.counterCount).toBe(3);
      expect(reopened.warnings.join('\n')).toMatch(/3 counters, the limit is 2/);
      expect(reopened.warnings.join('\n')).toMatch(/3 shards, the limit is 2/);
      expect(await reopened.getOrCreateMany(['a', 'b', 'c'])).toHaveLength(3);
      expect(await codeOfAsync(() => reopened.getOrCreate('d'))).toBe('resource_exhausted');
    });
  });
});
