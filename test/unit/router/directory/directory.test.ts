// The embedded store's own promises, with a real SQLite file in a temp dir:
// file modes, the exclusive lock, shard ids surviving rows removed by hand,
// the pair count check at reopen, and creation as one SQLite transaction
// that a failure inside SQLite leaves without a trace. The store-independent
// contract is in directory-contract.test.ts.
import { plainCounter, sameCounter } from '../../../../src/router/directory/counter-view.ts';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { SqliteDirectory as Directory } from '../../../../src/router/directory/sqlite/store.ts';
import { type CounterInfo, type DirectoryLimits, type PairAddresses } from '../../../../src/router/directory/contract.ts';
import { makeTempDir, removeTempDir } from '../../../helpers/temp-dir.ts';
import { codeOfAsync } from '../../../helpers/rejection.ts';

const threePairs: PairAddresses[] = [
  { primary: 'p0:1', follower: 'f0:1' },
  { primary: 'p1:1', follower: 'f1:1' },
  { primary: 'p2:1', follower: 'f2:1' },
];

describe('directory', () => {
  let dataDir: string;
  const opened: Directory[] = [];
  const clockMs = 1_700_000_000_000;
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

  it('its data directory is 0700 and its files 0600', async () => {
    const directory = open();
    await directory.getOrCreate('private');
    expect(fs.statSync(dataDir).mode & 0o777).toBe(0o700);
    const files = fs.readdirSync(dataDir);
    expect(files).toContain('directory.sqlite');
    for (const file of files) expect(fs.statSync(path.join(dataDir, file)).mode & 0o777, file).toBe(0o600);
  });

  it('a second opener of the same file is refused while the first holds it, and admitted once it closes', async () => {
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

  it('a shard id is not reused even when the rows holding the highest ids are gone', async () => {
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

  it('the embedded store is always fresh and names no routers (one router owns the file)', () => {
    const directory = open();
    expect([directory.fresh, directory.liveRouterIds()]).toEqual([true, []]);
  });

  it('reopening with fewer pairs than stored throws failed_precondition', async () => {
    open().close();
    expect(await codeOfAsync(() => open(threePairs.slice(0, 2)))).toBe('failed_precondition');
  });

  describe('creation', () => {
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
      expect(sameCounter(counters[0], directory.get('old'))).toBe(true);
      expect(sameCounter(counters[501], counters[0])).toBe(true);
      expect(directory.counterCount).toBe(1_001);
      expect(directory.shardCount).toBe(1_001);
      await directory.getOrCreateMany(wanted);
      await directory.getOrCreate('old');
      expect(transaction).toHaveBeenCalledTimes(1);
      expect(onDisk(directory).counters).toHaveLength(1_001);
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
      // Idle time is not stored: a reopened directory counts it from the reopen (expire late, never early).
      const withoutIdle = (counter: CounterInfo | undefined) => ({ ...plainCounter(counter!), lastWriteMonotonicMs: 0 });
      const inMemory = disk.counters.map((name) => withoutIdle(directory.get(name)));
      directory.close();
      const reopened = open();
      expect(disk.counters.map((name) => withoutIdle(reopened.get(name)))).toEqual(inMemory);
      expect(reopened.shardCount).toBe(6);
    });
  });
});
