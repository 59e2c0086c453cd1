// Directory export and import (tally directory export|import) through the
// embedded store, on real SQLite files: a round trip keeps every pair,
// counter, shard id, growth, generation and owed task, and the next shard id;
// an import refuses a directory already in use and an export that does not
// hold together, changing nothing.
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SqliteDirectory } from '../../../../src/router/directory/sqlite/store.ts';
import { exportFromSqlite, importIntoSqlite } from '../../../../src/router/directory/sqlite/transfer.ts';
import { validateSnapshot, type DirectorySnapshot } from '../../../../src/router/directory/snapshot.ts';
import type { PairAddresses } from '../../../../src/router/directory/contract.ts';
import { makeTempDir, removeTempDir } from '../../../helpers/temp-dir.ts';
import { codeOfAsync } from '../../../helpers/rejection.ts';

const pairs: PairAddresses[] = [
  { primary: 'p0:1', follower: 'f0:1' },
  { primary: 'p1:1', follower: 'f1:1' },
];
const withoutTime = (snapshot: DirectorySnapshot): Omit<DirectorySnapshot, 'exportedMs'> => {
  const { exportedMs: _exportedMs, ...rest } = snapshot;
  return rest;
};

describe('directory export and import', () => {
  let root: string;
  beforeEach(() => {
    root = makeTempDir('snapshot');
  });
  afterEach(() => removeTempDir(root));

  async function populated(dataDir: string): Promise<void> {
    const directory = SqliteDirectory.open(dataDir, pairs);
    await directory.getOrCreateMany(['a', 'b', 'c']);
    await directory.setShards('a', 5);
    await directory.getOrCreate('m', 'membership', 3);
    await directory.setWindow('b', { bucketMs: 1_000, retentionMs: 60_000 });
    await directory.setTtl('c', 30_000);
    await directory.clearCounter('b', Buffer.alloc(0), 60_000);
    await directory.getOrCreate('gone');
    await directory.deleteCounter('gone');
    await directory.updatePair(1, {
      primary: 'f1:1',
      follower: 'p1:1',
      epoch: 4n,
      inSync: true,
      primaryId: 'id-f1',
      followerId: 'id-p1',
      ackedLsn: 77n,
    });
    await directory.close();
  }

  it('an export imported into an empty directory exports the same, and ids continue past every id ever used', async () => {
    const source = path.join(root, 'source');
    await populated(source);
    const exported = await exportFromSqlite(source);
    expect(exported.counters.map((counter) => counter.name).sort()).toEqual(['a', 'b', 'c', 'm']);
    expect(exported.shardTasks.some((task) => task.kind === 'drop')).toBe(true);
    expect(exported.pairs[1]).toMatchObject({ primary: 'f1:1', epoch: '4', ackedLsn: '77', primaryId: 'id-f1' });
    const target = path.join(root, 'target');
    importIntoSqlite(target, validateSnapshot(JSON.parse(JSON.stringify(exported))));
    expect(withoutTime(await exportFromSqlite(target))).toEqual(withoutTime(exported));
    // The router starts on it with its --pairs (roles swapped by a failover are fine).
    const reopened = SqliteDirectory.open(target, pairs);
    expect(reopened.get('a')!.shards.map((shard) => shard.shardId)).toEqual(
      exported.counters.find((c) => c.name === 'a')!.shards.map(([id]) => id),
    );
    expect((await reopened.getOrCreate('new')).shards[0]!.shardId).toBe(exported.shardIdNext);
    await reopened.close();
  });

  it('import refuses a directory already holding one, and a router holding the file refuses export', async () => {
    const source = path.join(root, 'source');
    await populated(source);
    const exported = await exportFromSqlite(source);
    expect(await codeOfAsync(() => importIntoSqlite(source, exported))).toBe('failed_precondition');
    const running = SqliteDirectory.open(source, pairs);
    expect(await codeOfAsync(() => exportFromSqlite(source))).toBe('failed_precondition');
    await running.close();
    expect(await codeOfAsync(() => exportFromSqlite(path.join(root, 'nothing-here')))).toBe('not_found');
  });

  it('an export that does not hold together is invalid_argument and imports nothing', async () => {
    const source = path.join(root, 'source');
    await populated(source);
    const good = await exportFromSqlite(source);
    const broken: ((snapshot: DirectorySnapshot) => void)[] = [
      (snapshot) => ((snapshot as { format: string }).format = 'other'),
      (snapshot) => (snapshot.shardIdNext = 2),
      (snapshot) => snapshot.counters.push({ ...snapshot.counters[0]! }),
      (snapshot) => (snapshot.counters[0]!.shards[0]![1] = 9),
      (snapshot) => (snapshot.counters[1]!.shards[0]![0] = snapshot.counters[0]!.shards[0]![0]),
      (snapshot) => (snapshot.pairs[0]!.epoch = '-1'),
      (snapshot) => (snapshot.shardTasks[0]!.kind = 'explode' as 'drop'),
    ];
    for (const [index, breakIt] of broken.entries()) {
      const snapshot = JSON.parse(JSON.stringify(good)) as DirectorySnapshot;
      breakIt(snapshot);
      expect(await codeOfAsync(() => validateSnapshot(snapshot)), `case ${index}`).toBe('invalid_argument');
    }
    expect(await codeOfAsync(() => validateSnapshot('nope'))).toBe('invalid_argument');
  });
});
