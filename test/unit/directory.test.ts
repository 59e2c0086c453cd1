// Unit tests for the counter Directory with a real SQLite file in a temp dir:
// creation, growth and its limits, persistence across reopen, and refusal of
// a pair configuration that does not match the stored one.
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Directory, type PairAddresses } from '../../src/router/directory.ts';
import { shardsPerCounterMax } from '../../src/common/limits.ts';
import { makeTempDir, removeTempDir } from '../helpers/temp-dir.ts';
import { codeOf } from '../helpers/rejection.ts';

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
  const open = (pairs: readonly PairAddresses[] = threePairs): Directory => {
    const directory = Directory.open(dataDir, pairs, () => clockMs);
    opened.push(directory);
    return directory;
  };

  beforeEach(() => {
    dataDir = makeTempDir('directory');
  });
  afterEach(() => {
    for (const directory of opened.splice(0)) directory.close();
    removeTempDir(dataDir);
  });

  it('directory: its data directory is 0700 and its files 0600', () => {
    const directory = open();
    directory.getOrCreate('private');
    expect(fs.statSync(dataDir).mode & 0o777).toBe(0o700);
    const files = fs.readdirSync(dataDir);
    expect(files).toContain('directory.sqlite');
    for (const file of files) expect(fs.statSync(path.join(dataDir, file)).mode & 0o777, file).toBe(0o600);
  });

  it('directory: getOrCreate makes a counter with one shard, once', () => {
    const directory = open();
    expect(directory.get('views')).toBeUndefined();
    const created = directory.getOrCreate('views');
    expect(created.name).toBe('views');
    expect(created.createdMs).toBe(clockMs);
    expect(created.shards).toHaveLength(1);
    expect(created.shards[0]!.shardIndex).toBe(0);
    expect(created.shards[0]!.shardId).toBeGreaterThan(0);
    expect(directory.getOrCreate('views')).toBe(created);
    expect(directory.getOrCreate('views').shards).toHaveLength(1);
    expect(directory.counterCount).toBe(1);
  });

  it('directory: new pairs start at epoch 1, out of sync, with their configured roles', () => {
    const directory = open();
    expect(directory.allPairs().map((pair) => ({ ...pair }))).toEqual(
      threePairs.map((pair, pairIndex) => expect.objectContaining({ pairIndex, ...pair, epoch: 1n, inSync: false })),
    );
    expect(directory.pair(2).primary).toBe('p2:1');
  });

  it('directory: a pair update (failover) survives reopen, and the original configuration still matches it', () => {
    const directory = open();
    directory.updatePair(1, { primary: 'f1:1', follower: 'p1:1', epoch: 2n, inSync: true });
    directory.close();
    const reopened = open();
    expect(reopened.pair(1)).toMatchObject({ pairIndex: 1, primary: 'f1:1', follower: 'p1:1', epoch: 2n, inSync: true });
    expect(reopened.pair(0)).toMatchObject({ primary: 'p0:1', epoch: 1n, inSync: false });
  });

  it('directory: a pair update may not move the epoch back', () => {
    const directory = open();
    directory.updatePair(0, { primary: 'p0:1', follower: 'f0:1', epoch: 5n, inSync: true });
    expect(() => directory.updatePair(0, { primary: 'f0:1', follower: 'p0:1', epoch: 4n, inSync: false })).toThrow(/epoch/);
    expect(directory.pair(0)).toMatchObject({ primary: 'p0:1', epoch: 5n, inSync: true });
  });

  it('directory: each growth is recorded with the shard count before it, and survives reopen', () => {
    const directory = open();
    directory.getOrCreate('c');
    clockMs += 10;
    directory.setShards('c', 3);
    directory.setShards('c', 3);
    clockMs += 10;
    directory.setShards('c', 5);
    const growths = [
      { previousShardCount: 1, grownMs: clockMs - 10 },
      { previousShardCount: 3, grownMs: clockMs },
    ];
    expect(directory.get('c')!.growths).toEqual(growths);
    expect(directory.getOrCreate('fresh').growths).toEqual([]);
    directory.close();
    expect(open().get('c')!.growths).toEqual(growths);
  });

  it('directory: setShards grows a counter, keeping its existing shards', () => {
    const directory = open();
    const first = directory.getOrCreate('c').shards[0]!;
    const result = directory.setShards('c', 4);
    expect(result.previousShardCount).toBe(1);
    expect(result.counter.shards).toHaveLength(4);
    expect(result.counter.shards[0]).toEqual(first);
    expect(result.counter.shards.map((shard) => shard.shardIndex)).toEqual([0, 1, 2, 3]);
    expect(new Set(result.counter.shards.map((shard) => shard.shardId)).size).toBe(4);
  });

  it('directory: setShards to the current count changes nothing', () => {
    const directory = open();
    directory.setShards(directory.getOrCreate('c').name, 2);
    const before = structuredClone(directory.get('c')!.shards);
    expect(directory.setShards('c', 2).previousShardCount).toBe(2);
    expect(directory.get('c')!.shards).toEqual(before);
  });

  it('directory: setShards refuses to shrink with failed_precondition and keeps every shard', () => {
    const directory = open();
    directory.getOrCreate('c');
    directory.setShards('c', 3);
    expect(codeOf(() => directory.setShards('c', 2))).toBe('failed_precondition');
    expect(directory.get('c')!.shards).toHaveLength(3);
  });

  it('directory: setShards on an unknown counter is not_found and creates nothing', () => {
    const directory = open();
    expect(codeOf(() => directory.setShards('ghost', 2))).toBe('not_found');
    expect(directory.get('ghost')).toBeUndefined();
    expect(directory.counterCount).toBe(0);
  });

  it.each([0, -1, 1.5, Number.NaN, shardsPerCounterMax + 1])(
    'directory: setShards refuses shard count %s with invalid_argument',
    (shardCount) => {
      const directory = open();
      directory.getOrCreate('c');
      expect(codeOf(() => directory.setShards('c', shardCount))).toBe('invalid_argument');
      expect(directory.get('c')!.shards).toHaveLength(1);
    },
  );

  it('directory: setShards accepts exactly shardsPerCounterMax shards', () => {
    const directory = open();
    directory.getOrCreate('c');
    expect(directory.setShards('c', shardsPerCounterMax).counter.shards).toHaveLength(shardsPerCounterMax);
  });

  it("directory: one counter's shards spread evenly over the pairs", () => {
    const directory = open();
    directory.getOrCreate('c');
    directory.setShards('c', 3);
    expect(shardsPerPair(directory, 'c')).toEqual([1, 1, 1]);
    directory.setShards('c', 7);
    expect(shardsPerPair(directory, 'c').sort()).toEqual([2, 2, 3]);
    directory.setShards('c', 9);
    expect(shardsPerPair(directory, 'c')).toEqual([3, 3, 3]);
  });

  it('directory: single-shard counters are spread over the pairs', () => {
    const directory = open();
    for (let index = 0; index < 9; index++) directory.getOrCreate(`c${index}`);
    const perPair = [0, 0, 0];
    for (let index = 0; index < 9; index++) perPair[directory.get(`c${index}`)!.shards[0]!.pairIndex]!++;
    expect(perPair).toEqual([3, 3, 3]);
  });

  it('directory: reopen restores counters, shards, shard ids and creation times', () => {
    const directory = open();
    directory.getOrCreate('a');
    clockMs += 1_000;
    directory.getOrCreate('b');
    directory.setShards('b', 5);
    directory.getOrCreate('ünïcode 😀');
    const before = ['a', 'b', 'ünïcode 😀'].map((name) => structuredClone(directory.get(name)!));
    directory.close();

    const reopened = open();
    expect(reopened.counterCount).toBe(3);
    for (const counter of before) expect(reopened.get(counter.name)).toEqual(counter);
  });

  it('directory: shard ids are never reused after reopen', () => {
    const directory = open();
    directory.getOrCreate('a');
    directory.setShards('a', 4);
    directory.getOrCreate('b');
    const oldIds = [...directory.get('a')!.shards, ...directory.get('b')!.shards].map((shard) => shard.shardId);
    directory.close();

    const reopened = open();
    reopened.setShards('a', 6);
    reopened.getOrCreate('c');
    const newIds = [...reopened.get('a')!.shards.slice(4), ...reopened.get('c')!.shards].map((shard) => shard.shardId);
    expect(newIds).toHaveLength(3);
    for (const id of newIds) expect(id).toBeGreaterThan(Math.max(...oldIds));
    expect(new Set([...oldIds, ...newIds]).size).toBe(oldIds.length + newIds.length);
  });

  it('directory: a shard id is not reused even when the rows holding the highest ids are gone', () => {
    // Nodes' logs still hold entries under old shard ids, so an id must never
    // come back, even if the newest counter's rows were removed by hand.
    const directory = open();
    directory.getOrCreate('kept');
    directory.getOrCreate('removed');
    directory.setShards('removed', 3);
    const highestId = Math.max(...directory.get('removed')!.shards.map((shard) => shard.shardId));
    directory.close();
    const db = new Database(path.join(dataDir, 'directory.sqlite'));
    db.prepare("DELETE FROM shards WHERE counter = 'removed'").run();
    db.prepare("DELETE FROM counters WHERE name = 'removed'").run();
    db.close();

    const reopened = open();
    expect(reopened.get('removed')).toBeUndefined();
    expect(reopened.getOrCreate('new').shards[0]!.shardId).toBeGreaterThan(highestId);
  });

  it('directory: after reopen, growth still spreads shards using the restored placement', () => {
    const directory = open();
    directory.getOrCreate('c');
    directory.setShards('c', 2);
    directory.close();
    const reopened = open();
    reopened.setShards('c', 3);
    expect(shardsPerPair(reopened, 'c')).toEqual([1, 1, 1]);
  });

  it('directory: reopening with a pair whose members changed throws failed_precondition', () => {
    const directory = open();
    directory.getOrCreate('c');
    directory.close();
    const changed = threePairs.map((pair, index) => (index === 1 ? { primary: 'p1:1', follower: 'elsewhere:1' } : pair));
    expect(codeOf(() => open(changed))).toBe('failed_precondition');
  });

  it('directory: reopening with fewer pairs than stored throws failed_precondition', () => {
    open().close();
    expect(codeOf(() => open(threePairs.slice(0, 2)))).toBe('failed_precondition');
  });

  it('directory: reopening with pairs in another order throws failed_precondition', () => {
    open().close();
    expect(codeOf(() => open([threePairs[1]!, threePairs[0]!, threePairs[2]!]))).toBe('failed_precondition');
  });

  it('directory: reopening with a pair whose primary and follower swapped (after a failover) is accepted', () => {
    open().close();
    const swapped = threePairs.map((pair, index) => (index === 0 ? { primary: pair.follower, follower: pair.primary } : pair));
    const directory = open(swapped);
    // The directory keeps its stored roles; the configuration only names the members.
    expect(directory.pair(0)).toMatchObject({ primary: 'p0:1', follower: 'f0:1' });
  });

  it('directory: reopening with an added pair keeps the old pairs and places new shards on the new pair', () => {
    const directory = open();
    directory.getOrCreate('c');
    directory.setShards('c', 3);
    directory.close();
    const fourPairs = [...threePairs, { primary: 'p3:1', follower: 'f3:1' }];
    const reopened = open(fourPairs);
    expect(reopened.allPairs()).toHaveLength(4);
    expect(reopened.pair(3)).toMatchObject({ primary: 'p3:1', follower: 'f3:1', epoch: 1n });
    reopened.setShards('c', 4);
    expect(shardsPerPair(reopened, 'c')).toEqual([1, 1, 1, 1]);
  });
});
