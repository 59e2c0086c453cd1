// The directory's side of deleting counters, with a real SQLite file: one
// transaction removes the counter and records its drops, shard ids are never
// given out again (not even the highest, not after reopen), the drops owed
// survive a reopen until confirmed, and caps count only live counters.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SqliteDirectory as Directory } from '../../src/router/sqlite-directory.ts';
import { type PairAddresses } from '../../src/router/directory.ts';
import { makeTempDir, removeTempDir } from '../helpers/temp-dir.ts';
import { codeOfAsync } from '../helpers/rejection.ts';

const twoPairs: PairAddresses[] = [
  { primary: 'p0:1', follower: 'f0:1' },
  { primary: 'p1:1', follower: 'f1:1' },
];

describe('directory lifecycle', () => {
  let dataDir: string;
  const opened: Directory[] = [];
  const open = (limits = { countersMax: 1_000, shardsTotalMax: 10_000 }): Directory => {
    const directory = Directory.open(dataDir, twoPairs, () => 1_000, limits);
    opened.push(directory);
    return directory;
  };
  beforeEach(() => {
    dataDir = makeTempDir('directory-lifecycle');
  });
  afterEach(() => {
    for (const directory of opened.splice(0)) directory.close();
    removeTempDir(dataDir);
  });

  it('directory: a deleted counter is gone with its shards; its drops are owed until confirmed, across reopen', async () => {
    const directory = open();
    await directory.getOrCreate('a');
    await directory.setShards('a', 3);
    await directory.getOrCreate('b');
    const ids = directory.get('a')!.shards.map((shard) => shard.shardId);
    expect(directory.shardCount).toBe(4);

    const deleted = await directory.deleteCounter('a');
    expect(deleted.shards.map((shard) => shard.shardId)).toEqual(ids);
    expect(directory.get('a')).toBeUndefined();
    expect([directory.counterCount, directory.shardCount]).toEqual([1, 1]);
    expect(directory.pendingShardTasks().map((task) => [task.shardId, task.kind])).toEqual(ids.map((id) => [id, 'drop']));
    expect(await codeOfAsync(() => directory.deleteCounter('a'))).toBe('not_found');
    expect(directory.pendingShardTaskCount).toBe(3);

    await directory.completeShardTasks([directory.shardTask(ids[0]!)!]);
    directory.close();
    const reopened = open();
    expect(reopened.get('a')).toBeUndefined();
    expect(reopened.get('b')!.shards).toHaveLength(1);
    expect([reopened.counterCount, reopened.shardCount]).toEqual([1, 1]);
    expect(reopened.pendingShardTasks().map((task) => task.shardId)).toEqual(ids.slice(1));
    // A fresh counter of the old name has no growth history and one new shard.
    const again = await reopened.getOrCreate('a');
    expect(again.growths).toEqual([]);
    expect(again.shards).toHaveLength(1);
  });

  it('directory: shard ids are never reused, even when the deleted counter held the highest ids and the directory reopens', async () => {
    let directory = open();
    await directory.getOrCreate('low');
    await directory.getOrCreate('high');
    await directory.setShards('high', 5);
    const highest = Math.max(...directory.get('high')!.shards.map((shard) => shard.shardId));
    await directory.deleteCounter('high');
    directory.close();
    directory = open();
    const fresh = await directory.getOrCreate('high');
    expect(fresh.shards[0]!.shardId).toBe(highest + 1);
    await directory.deleteCounter('high');
    await directory.deleteCounter('low');
    directory.close();
    directory = open();
    expect((await directory.getOrCreate('next')).shards[0]!.shardId).toBe(highest + 2);
  });

  it('directory: the caps count live counters and shards only', async () => {
    const directory = open({ countersMax: 2, shardsTotalMax: 3 });
    await directory.getOrCreate('a');
    await directory.getOrCreate('b');
    expect(await codeOfAsync(() => directory.getOrCreate('c'))).toBe('resource_exhausted');
    await directory.deleteCounter('a');
    await directory.getOrCreate('c');
    expect(await codeOfAsync(() => directory.setShards('c', 3))).toBe('resource_exhausted');
    await directory.deleteCounter('b');
    expect((await directory.setShards('c', 3)).counter.shards).toHaveLength(3);
  });

  it('directory: a clear bumps the generation and owes a clear per shard, durably; a key repeats the clear it made; a delete replaces the clears with drops', async () => {
    const directory = open();
    await directory.getOrCreate('c');
    await directory.setShards('c', 2);
    const ids = directory.get('c')!.shards.map((shard) => shard.shardId);
    expect(directory.get('c')!.generation).toBe(0);
    const first = await directory.clearCounter('c', Buffer.from('k1'), 60_000);
    expect([first.generation, first.applied]).toEqual([1, true]);
    expect(directory.pendingShardTasks().map((task) => [task.shardId, task.kind, task.generation])).toEqual(
      ids.map((id) => [id, 'clear', 1]),
    );
    // The same key: the same clear, nothing bumped. Another key (or none): a new clear.
    expect(await directory.clearCounter('c', Buffer.from('k1'), 60_000)).toMatchObject({ generation: 1, applied: false });
    expect(await directory.clearCounter('c', Buffer.alloc(0), 60_000)).toMatchObject({ generation: 2, applied: true });
    // Confirming the older clear does not forget the newer one owed.
    await directory.completeShardTasks([{ ...directory.shardTask(ids[0]!)!, generation: 1 }]);
    expect(directory.shardTask(ids[0]!)?.generation).toBe(2);
    await directory.completeShardTasks([directory.shardTask(ids[0]!)!]);
    expect(directory.shardTask(ids[0]!)).toBeUndefined();
    expect(await codeOfAsync(() => directory.clearCounter('missing', Buffer.alloc(0), 60_000))).toBe('not_found');

    directory.close();
    const reopened = open();
    expect(reopened.get('c')!.generation).toBe(2);
    expect(reopened.pendingShardTasks().map((task) => [task.shardId, task.kind, task.generation])).toEqual([[ids[1], 'clear', 2]]);
    expect(await reopened.clearCounter('c', Buffer.from('k1'), 60_000)).toMatchObject({ generation: 1, applied: false });
    await reopened.deleteCounter('c');
    expect(
      reopened
        .pendingShardTasks()
        .map((task) => [task.shardId, task.kind])
        .sort(),
    ).toEqual(ids.map((id) => [id, 'drop']));
    // A new counter of the name starts at generation 0, and the old key is forgotten.
    await reopened.getOrCreate('c');
    expect(reopened.get('c')!.generation).toBe(0);
    expect(await reopened.clearCounter('c', Buffer.from('k1'), 60_000)).toMatchObject({ generation: 1, applied: true });
  });
  it('directory: many counters deleted in one transaction; pending counts kept by kind; a round takes a bounded share per pair and skips a down pair', async () => {
    const directory = open();
    const names = Array.from({ length: 40 }, (_, index) => `c${index}`);
    for (const name of names) await directory.getOrCreate(name);
    const pairOf = new Map(names.map((name) => [name, directory.get(name)!.shards[0]!.pairIndex]));
    expect((await directory.deleteCounters([...names, 'never-existed', names[0]!])).map((counter) => counter.name)).toEqual(names);
    expect(directory.counterCount).toBe(0);
    expect(directory.pendingShardTaskCounts).toEqual({ drop: 40, clear: 0 });

    const perPair = [...pairOf.values()].reduce(
      (counts, pairIndex) => counts.set(pairIndex, (counts.get(pairIndex) ?? 0) + 1),
      new Map<number, number>(),
    );
    expect(perPair.size).toBe(2);
    const round = directory.shardTasksForRound(5, () => false);
    expect(round).toHaveLength(10);
    expect(round.filter((task) => task.pairIndex === 0)).toHaveLength(5);
    const withPair1Down = directory.shardTasksForRound(100, (pairIndex) => pairIndex === 1);
    expect(withPair1Down.every((task) => task.pairIndex === 0)).toBe(true);
    expect(withPair1Down).toHaveLength(perPair.get(0)!);

    await directory.completeShardTasks(withPair1Down);
    expect(directory.pendingShardTaskCounts).toEqual({ drop: perPair.get(1)!, clear: 0 });
    directory.close();
    expect(open().pendingShardTaskCounts).toEqual({ drop: perPair.get(1)!, clear: 0 });
  });
});
