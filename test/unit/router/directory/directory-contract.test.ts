// The directory contract, run against both stores: the embedded SQLite file
// and etcd (a real etcd, one per file, a key prefix per test). Creation and
// its caps, growth and its history, placement, pairs and their checks at
// open, settings, delete and clear with the shard tasks they owe, scan, and
// everything surviving a reopen (close, then open the same file or prefix).
// Store-specific behaviour lives in directory.test.ts and etcd-directory.test.ts.
import { plainCounter, sameCounter } from '../../../../src/router/directory/counter-view.ts';
import { Etcd3 } from 'etcd3';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { SqliteDirectory } from '../../../../src/router/directory/sqlite/store.ts';
import { EtcdDirectory, etcdClientOptions } from '../../../../src/router/directory/etcd/index.ts';
import { EtcdProcess } from '../../../../src/cluster/etcd-process.ts';
import type { Directory, DirectoryLimits, PairAddresses } from '../../../../src/router/directory/contract.ts';
import { newCountersPerCallMax, shardsPerCounterMax, TallyError } from '../../../../src/wire/index.ts';
import { createLogger } from '../../../../src/common/index.ts';
import { makeTempDir, removeTempDir } from '../../../helpers/temp-dir.ts';
import { codeOfAsync } from '../../../helpers/rejection.ts';

const threePairs: PairAddresses[] = [
  { primary: 'p0:1', follower: 'f0:1' },
  { primary: 'p1:1', follower: 'f1:1' },
  { primary: 'p2:1', follower: 'f2:1' },
];
const twoPairs = threePairs.slice(0, 2);

/** One store: where a test's directory lives, and how to open it there (again). */
interface Store {
  name: string;
  setUp(): Promise<void>;
  tearDown(): Promise<void>;
  /** A new, empty place for the next test's directory. */
  begin(): void;
  end(): void;
  /** now is both the clock of the data and the monotonic clock of idle times (lastWriteMonotonicMs). */
  open(pairs: readonly PairAddresses[], now: () => number, limits?: DirectoryLimits): Promise<Directory>;
}

function sqliteStore(): Store {
  let dataDir = '';
  return {
    name: 'sqlite',
    setUp: async () => undefined,
    tearDown: async () => undefined,
    begin: () => {
      dataDir = makeTempDir('directory-contract');
    },
    end: () => removeTempDir(dataDir),
    open: async (pairs, now, limits) => SqliteDirectory.open(dataDir, pairs, now, limits, now),
  };
}

function etcdStore(): Store {
  let dataDir = '';
  let etcd: EtcdProcess;
  let client: Etcd3;
  let prefix = '';
  let tests = 0;
  let routers = 0;
  const logger = createLogger('directory-contract', 'error');
  return {
    name: 'etcd',
    setUp: async () => {
      dataDir = makeTempDir('directory-contract-etcd');
      etcd = new EtcdProcess({ dataDir });
      await etcd.start();
      client = new Etcd3(etcdClientOptions([etcd.endpoint]));
    },
    tearDown: async () => {
      client?.close();
      await etcd?.stop();
      removeTempDir(dataDir);
    },
    begin: () => {
      prefix = `/contract-${++tests}/`;
    },
    end: () => undefined,
    open: (pairs, now, limits) =>
      EtcdDirectory.open({
        client,
        prefix,
        routerId: `router-${++routers}`,
        pairs,
        now,
        monotonicNow: now,
        limits,
        logger,
        leaseTtlMs: 2_000,
      }),
  };
}

function shardsPerPair(directory: Directory, name: string): number[] {
  const counts = directory.allPairs().map(() => 0);
  for (const shard of directory.get(name)!.shards) counts[shard.pairIndex]!++;
  return counts;
}

/** What the store holds (committed, read back through scan), not memory. */
async function stored(directory: Directory): Promise<{ counters: string[]; shardRows: number }> {
  const rows = await directory.scan({ after: '', from: '', before: undefined }, 100_000);
  return { counters: rows.map((row) => row.name), shardRows: rows.reduce((sum, row) => sum + row.shardCount, 0) };
}

/** The TallyError `action` throws; fails the test when it throws nothing or something else. */
async function errorOf(action: () => unknown): Promise<TallyError> {
  try {
    await action();
  } catch (error) {
    expect(error).toBeInstanceOf(TallyError);
    return error as TallyError;
  }
  throw new Error('expected an error, got none');
}

const names = (count: number, prefix = 'n'): string[] => Array.from({ length: count }, (_, index) => `${prefix}:${index}`);

describe.each([sqliteStore(), etcdStore()])('directory contract ($name)', (store) => {
  const opened: Directory[] = [];
  let clockMs = 1_700_000_000_000;
  const open = async (pairs: readonly PairAddresses[] = threePairs, limits?: DirectoryLimits): Promise<Directory> => {
    const directory = await store.open(pairs, () => clockMs, limits);
    opened.push(directory);
    return directory;
  };

  beforeAll(() => store.setUp());
  afterAll(() => store.tearDown());
  beforeEach(() => store.begin());
  afterEach(async () => {
    for (const directory of opened.splice(0)) await directory.close();
    store.end();
  });

  it('directory: a pair added online takes new shards, survives a reopen whose pairs lack it, and refuses addresses in use', async () => {
    const directory = await open(twoPairs);
    await directory.getOrCreateMany(['a', 'b']);
    const added = await directory.addPair({ primary: 'p9:1', follower: 'f9:1' });
    expect(added).toMatchObject({ pairIndex: 2, epoch: 1n, addedOnline: true, draining: false, inSync: false });
    expect(directory.allPairs()).toHaveLength(3);
    // Placement: the empty pair takes the next new counter.
    expect((await directory.getOrCreate('c')).shards[0]!.pairIndex).toBe(2);
    expect(directory.shardCountOfPair(2)).toBe(1);
    expect(await codeOfAsync(() => directory.addPair({ primary: 'p0:1', follower: 'new:1' }))).toBe('failed_precondition');
    expect(await codeOfAsync(() => directory.addPair({ primary: 'same:1', follower: 'same:1' }))).toBe('invalid_argument');
    expect(directory.allPairs()).toHaveLength(3);
    await directory.close();
    opened.splice(opened.indexOf(directory), 1);
    const reopened = await open(twoPairs);
    expect(reopened.allPairs().map((pair) => pair.primary)).toEqual(['p0:1', 'p1:1', 'p9:1']);
    expect(reopened.warnings.join('\n')).toMatch(/added online/);
  });

  it('directory: a draining pair takes no new shards and is kept draining; the last open pair cannot drain', async () => {
    const directory = await open(twoPairs);
    expect((await directory.setPairDraining(0, true)).draining).toBe(true);
    await directory.getOrCreateMany(['x', 'y', 'z']);
    await directory.setShards('x', 4);
    for (const name of ['x', 'y', 'z']) for (const shard of directory.get(name)!.shards) expect(shard.pairIndex, name).toBe(1);
    expect(await codeOfAsync(() => directory.setPairDraining(1, true))).toBe('failed_precondition');
    await directory.close();
    opened.splice(opened.indexOf(directory), 1);
    const reopened = await open(twoPairs);
    expect(reopened.pair(0).draining).toBe(true);
    await reopened.setPairDraining(0, false);
    expect(reopened.pair(0).draining).toBe(false);
  });

  it('directory: an export holds every counter, pair and owed task, and ids below its next shard id', async () => {
    const directory = await open(twoPairs);
    await directory.getOrCreateMany(['e1', 'e2']);
    await directory.setShards('e1', 3);
    await directory.getOrCreate('gone');
    await directory.deleteCounter('gone');
    const snapshot = await directory.exportSnapshot();
    expect(snapshot.counters.map((counter) => counter.name).sort()).toEqual(['e1', 'e2']);
    expect(snapshot.pairs).toHaveLength(2);
    expect(snapshot.shardTasks.filter((task) => task.kind === 'drop')).toHaveLength(1);
    const ids = snapshot.counters.flatMap((counter) => counter.shards.map(([id]) => id));
    for (const id of ids) expect(id).toBeLessThan(snapshot.shardIdNext);
    expect((await directory.getOrCreate('after')).shards[0]!.shardId).toBeGreaterThanOrEqual(Math.max(...ids) + 1);
  });

  it('directory: getOrCreate makes a counter with one shard, once', async () => {
    const directory = await open();
    expect(directory.get('views')).toBeUndefined();
    const created = await directory.getOrCreate('views');
    expect(created.name).toBe('views');
    expect(created.createdMs).toBe(clockMs);
    expect(created.shards).toHaveLength(1);
    expect(created.writableShardCount).toBe(1);
    expect(created.shards[0]!.shardIndex).toBe(0);
    expect(created.shards[0]!.shardId).toBeGreaterThan(0);
    expect(sameCounter(await directory.getOrCreate('views'), created)).toBe(true);
    expect((await directory.getOrCreate('views')).shards).toHaveLength(1);
    expect(directory.counterCount).toBe(1);
    expect(directory.fresh).toBe(true);
  });

  it('directory: new pairs start at epoch 1, out of sync, with their configured roles', async () => {
    const directory = await open();
    expect(directory.allPairs().map((pair) => ({ ...pair }))).toEqual(
      threePairs.map((pair, pairIndex) => expect.objectContaining({ pairIndex, ...pair, epoch: 1n, inSync: false })),
    );
    expect(directory.pair(2).primary).toBe('p2:1');
  });

  it('directory: a pair update (failover) survives reopen, and the original configuration still matches it', async () => {
    const directory = await open();
    const pair = directory.pair(1);
    expect(await directory.updatePair(1, { primary: 'f1:1', follower: 'p1:1', epoch: 2n, inSync: true })).toBe(pair);
    expect(pair).toMatchObject({ primary: 'f1:1', epoch: 2n });
    await directory.close();
    const reopened = await open();
    expect(reopened.pair(1)).toMatchObject({ pairIndex: 1, primary: 'f1:1', follower: 'p1:1', epoch: 2n, inSync: true });
    expect(reopened.pair(0)).toMatchObject({ primary: 'p0:1', epoch: 1n, inSync: false });
  });

  it('directory: a pair update may not move the epoch or the acknowledged lsn back', async () => {
    const directory = await open();
    await directory.updatePair(0, { primary: 'p0:1', follower: 'f0:1', epoch: 5n, inSync: true, ackedLsn: 10n });
    await expect(directory.updatePair(0, { primary: 'f0:1', follower: 'p0:1', epoch: 4n, inSync: false })).rejects.toThrow(/epoch/);
    await expect(directory.updatePair(0, { ackedLsn: 9n })).rejects.toThrow(/acknowledged lsn/);
    expect(directory.pair(0)).toMatchObject({ primary: 'p0:1', epoch: 5n, inSync: true, ackedLsn: 10n });
  });

  it('directory: every pair update issues a higher configuration version, kept across reopen, export and import, and raised above a version a node reports', async () => {
    const directory = await open();
    const start = directory.pair(0).configVersion;
    await directory.updatePair(0, { inSync: true });
    expect(directory.pair(0).configVersion).toBe(start + 1n);
    // Even a change the supervisor makes for bookkeeping only: a version is never issued twice.
    await directory.updatePair(0, { ackedLsn: 5n });
    expect(directory.pair(0).configVersion).toBe(start + 2n);
    expect(directory.pair(1).configVersion).toBe(0n);
    // A node obeyed a version this directory never issued (restored from an older copy): the next goes above it.
    await directory.updatePair(0, { configVersionAbove: 40n });
    expect(directory.pair(0).configVersion).toBe(41n);
    await directory.updatePair(0, { configVersionAbove: 3n });
    expect(directory.pair(0).configVersion).toBe(42n);
    const snapshot = await directory.exportSnapshot();
    expect(snapshot.pairs[0]!.configVersion).toBe('42');
    await directory.close();
    expect((await open()).pair(0).configVersion).toBe(42n);
  });

  it('directory: what each node advertises (zone, replication address) is kept by address through a failover, reopen and export, and dropped with a replaced node', async () => {
    const directory = await open();
    const advertised = {
      'p0:1': { zone: 'zone-a', replicationAddress: '10.1.0.1:7000' },
      'f0:1': { zone: 'zone-b', replicationAddress: '' },
    };
    await directory.updatePair(0, { advertised });
    expect(directory.pair(0).advertised).toEqual(advertised);
    // A failover swaps the slots; each node keeps what it said.
    await directory.updatePair(0, { primary: 'f0:1', follower: 'p0:1', epoch: 2n });
    expect(directory.pair(0).advertised).toEqual(advertised);
    expect((await directory.exportSnapshot()).pairs[0]!.advertised).toEqual(advertised);
    await directory.close();
    const reopened = await open();
    expect(reopened.pair(0).advertised).toEqual(advertised);
    expect(reopened.pair(1).advertised).toEqual({});
    // The follower slot moves to another address (a replacement): the old node's entry goes.
    await reopened.updatePair(0, { follower: 'n0:1', replaced: true });
    expect(reopened.pair(0).advertised).toEqual({ 'f0:1': advertised['f0:1'] });
  });

  it("directory: a counter's shards spread over zones first, then pairs; a pair within one zone while another exists is warned of", async () => {
    const directory = await open();
    const zoned = (primaryZone: string, followerZone: string, pairIndex: number) => ({
      [directory.pair(pairIndex).primary]: { zone: primaryZone, replicationAddress: '' },
      [directory.pair(pairIndex).follower]: { zone: followerZone, replicationAddress: '' },
    });
    // Pairs 0 and 1 serve from zone a, pair 2 from zone b.
    await directory.updatePair(0, { advertised: zoned('a', 'b', 0) });
    await directory.updatePair(1, { advertised: zoned('a', 'a', 1) });
    await directory.updatePair(2, { advertised: zoned('b', 'a', 2) });
    await directory.getOrCreate('hot');
    await directory.setShards('hot', 2);
    const zonesOf = (name: string): string[] =>
      directory
        .get(name)!
        .shards.map((shard) => directory.pair(shard.pairIndex).advertised[directory.pair(shard.pairIndex).primary]!.zone)
        .sort();
    expect(zonesOf('hot')).toEqual(['a', 'b']);
    await directory.setShards('hot', 3);
    expect(shardsPerPair(directory, 'hot')).toEqual([1, 1, 1]);
    expect(directory.zoneWarning(0)).toBe('');
    expect(directory.zoneWarning(1)).toMatch(/both nodes are in zone a while zone b exists/);
    expect(directory.zoneWarning(2)).toBe('');
  });

  it('directory: each growth is recorded with the shard count before it, and survives reopen', async () => {
    const directory = await open();
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
    expect(directory.get('c')!.writableShardCount).toBe(5);
    expect((await directory.getOrCreate('fresh')).growths).toEqual([]);
    await directory.close();
    expect((await open()).get('c')!.growths).toEqual(growths);
  });

  it('directory: setShards grows a counter, keeping its existing shards, every one writable', async () => {
    const directory = await open();
    const counter = await directory.getOrCreate('c');
    const first = counter.shards[0]!;
    const result = await directory.setShards('c', 4);
    expect(result.previousShardCount).toBe(1);
    // The same object, grown in place: callers hold it.
    expect(sameCounter(result.counter, counter)).toBe(true);
    expect(result.counter.shards).toHaveLength(4);
    expect(result.counter.writableShardCount).toBe(4);
    expect(result.counter.shards[0]).toEqual(first);
    expect(result.counter.shards.map((shard) => shard.shardIndex)).toEqual([0, 1, 2, 3]);
    expect(new Set(result.counter.shards.map((shard) => shard.shardId)).size).toBe(4);
  });

  it('directory: setShards to the current count changes nothing', async () => {
    const directory = await open();
    await directory.setShards((await directory.getOrCreate('c')).name, 2);
    const before = structuredClone(directory.get('c')!.shards);
    expect((await directory.setShards('c', 2)).previousShardCount).toBe(2);
    expect(directory.get('c')!.shards).toEqual(before);
    expect(directory.get('c')!.growths).toHaveLength(1);
  });

  it('directory: setShards refuses to shrink with failed_precondition and keeps every shard', async () => {
    const directory = await open();
    await directory.getOrCreate('c');
    await directory.setShards('c', 3);
    expect(await codeOfAsync(() => directory.setShards('c', 2))).toBe('failed_precondition');
    expect(directory.get('c')!.shards).toHaveLength(3);
  });

  it('directory: setShards on an unknown counter is not_found and creates nothing', async () => {
    const directory = await open();
    expect(await codeOfAsync(() => directory.setShards('ghost', 2))).toBe('not_found');
    expect(directory.get('ghost')).toBeUndefined();
    expect(directory.counterCount).toBe(0);
  });

  it.each([0, -1, 1.5, Number.NaN, shardsPerCounterMax + 1])(
    'directory: setShards refuses shard count %s with invalid_argument',
    async (shardCount) => {
      const directory = await open();
      await directory.getOrCreate('c');
      expect(await codeOfAsync(() => directory.setShards('c', shardCount))).toBe('invalid_argument');
      expect(directory.get('c')!.shards).toHaveLength(1);
    },
  );

  it('directory: setShards accepts exactly shardsPerCounterMax shards', async () => {
    const directory = await open();
    await directory.getOrCreate('c');
    expect((await directory.setShards('c', shardsPerCounterMax)).counter.shards).toHaveLength(shardsPerCounterMax);
  });

  it('directory: a membership counter keeps its partitions: growth is failed_precondition, autoscale stays off', async () => {
    const directory = await open();
    const members = await directory.getOrCreate('m', 'membership', 4);
    expect([members.shards.length, members.autoscale]).toEqual([4, false]);
    expect(await codeOfAsync(() => directory.setShards('m', 5))).toBe('failed_precondition');
    expect(await codeOfAsync(() => directory.setAutoscale('m', true))).toBe('failed_precondition');
    expect(await codeOfAsync(() => directory.setWindow('m', { bucketMs: 1_000, retentionMs: 60_000 }))).toBe('failed_precondition');
    expect(await codeOfAsync(() => directory.getOrCreate('m', 'total'))).toBe('failed_precondition');
    expect(directory.get('m')!.shards).toHaveLength(4);
  });

  it('directory: window and autoscale settings change in place and survive reopen', async () => {
    const directory = await open();
    const counter = await directory.getOrCreate('c');
    expect(sameCounter(await directory.setWindow('c', { bucketMs: 1_000, retentionMs: 60_000 }), counter)).toBe(true);
    expect(sameCounter(await directory.setAutoscale('c', false), counter)).toBe(true);
    expect(counter).toMatchObject({ window: { bucketMs: 1_000, retentionMs: 60_000 }, autoscale: false });
    expect(await codeOfAsync(() => directory.setWindow('ghost', { bucketMs: 0, retentionMs: 0 }))).toBe('not_found');
    expect(await codeOfAsync(() => directory.setAutoscale('ghost', true))).toBe('not_found');
    await directory.close();
    expect((await open()).get('c')).toMatchObject({ window: { bucketMs: 1_000, retentionMs: 60_000 }, autoscale: false });
  });

  it("directory: one counter's shards spread evenly over the pairs", async () => {
    const directory = await open();
    await directory.getOrCreate('c');
    await directory.setShards('c', 3);
    expect(shardsPerPair(directory, 'c')).toEqual([1, 1, 1]);
    await directory.setShards('c', 7);
    expect(shardsPerPair(directory, 'c').sort()).toEqual([2, 2, 3]);
    await directory.setShards('c', 9);
    expect(shardsPerPair(directory, 'c')).toEqual([3, 3, 3]);
  });

  it('directory: single-shard counters are spread over the pairs', async () => {
    const directory = await open();
    for (let index = 0; index < 9; index++) await directory.getOrCreate(`c${index}`);
    const perPair = [0, 0, 0];
    for (let index = 0; index < 9; index++) perPair[directory.get(`c${index}`)!.shards[0]!.pairIndex]!++;
    expect(perPair).toEqual([3, 3, 3]);
  });

  it('directory: reopen restores counters, shards, shard ids and creation times', async () => {
    const directory = await open();
    await directory.getOrCreate('a');
    clockMs += 1_000;
    await directory.getOrCreate('b');
    await directory.setShards('b', 5);
    await directory.getOrCreate('ünïcode 😀');
    const before = ['a', 'b', 'ünïcode 😀'].map((name) => plainCounter(directory.get(name)!));
    await directory.close();

    const reopened = await open();
    expect(reopened.counterCount).toBe(3);
    // Everything but the last write, which memory alone holds: it restarts at the load.
    for (const counter of before) expect(plainCounter(reopened.get(counter.name)!)).toEqual({ ...counter, lastWriteMonotonicMs: clockMs });
    expect([...reopened.liveCounters()].map((counter) => counter.name)).toEqual(['a', 'b', 'ünïcode 😀']);
  });

  it('directory: shard ids are never reused after reopen', async () => {
    const directory = await open();
    await directory.getOrCreate('a');
    await directory.setShards('a', 4);
    await directory.getOrCreate('b');
    const oldIds = [...directory.get('a')!.shards, ...directory.get('b')!.shards].map((shard) => shard.shardId);
    await directory.close();

    const reopened = await open();
    await reopened.setShards('a', 6);
    await reopened.getOrCreate('c');
    const newIds = [...reopened.get('a')!.shards.slice(4), ...reopened.get('c')!.shards].map((shard) => shard.shardId);
    expect(newIds).toHaveLength(3);
    for (const id of newIds) expect(id).toBeGreaterThan(Math.max(...oldIds));
    expect(new Set([...oldIds, ...newIds]).size).toBe(oldIds.length + newIds.length);
  });

  it('directory: after reopen, growth still spreads shards using the restored placement', async () => {
    const directory = await open();
    await directory.getOrCreate('c');
    await directory.setShards('c', 2);
    await directory.close();
    const reopened = await open();
    await reopened.setShards('c', 3);
    expect(shardsPerPair(reopened, 'c')).toEqual([1, 1, 1]);
  });

  it('directory: reopening with a pair whose members changed throws failed_precondition', async () => {
    const directory = await open();
    await directory.getOrCreate('c');
    await directory.close();
    const changed = threePairs.map((pair, index) => (index === 1 ? { primary: 'p1:1', follower: 'elsewhere:1' } : pair));
    expect(await codeOfAsync(() => open(changed))).toBe('failed_precondition');
  });

  it('directory: reopening with pairs in another order throws failed_precondition', async () => {
    await (await open()).close();
    expect(await codeOfAsync(() => open([threePairs[1]!, threePairs[0]!, threePairs[2]!]))).toBe('failed_precondition');
  });

  it('directory: reopening with a pair whose primary and follower swapped (after a failover) is accepted', async () => {
    await (await open()).close();
    const swapped = threePairs.map((pair, index) => (index === 0 ? { primary: pair.follower, follower: pair.primary } : pair));
    const directory = await open(swapped);
    // The directory keeps its stored roles; the configuration only names the members.
    expect(directory.pair(0)).toMatchObject({ primary: 'p0:1', follower: 'f0:1' });
  });

  it('directory: a node replaced by an operator wins over --pairs at reopen, with a warning', async () => {
    const directory = await open();
    await directory.updatePair(2, { follower: 'new:1', followerId: '', inSync: false, replaced: true });
    await directory.close();
    const reopened = await open();
    expect(reopened.pair(2)).toMatchObject({ primary: 'p2:1', follower: 'new:1', replaced: true });
    expect(reopened.warnings.join('\n')).toMatch(/pair 2 .* node replacement/);
  });

  it('directory: reopening with an added pair keeps the old pairs and places new shards on the new pair', async () => {
    const directory = await open();
    await directory.getOrCreate('c');
    await directory.setShards('c', 3);
    await directory.close();
    const fourPairs = [...threePairs, { primary: 'p3:1', follower: 'f3:1' }];
    const reopened = await open(fourPairs);
    expect(reopened.allPairs()).toHaveLength(4);
    expect(reopened.pair(3)).toMatchObject({ primary: 'p3:1', follower: 'f3:1', epoch: 1n });
    await reopened.setShards('c', 4);
    expect(shardsPerPair(reopened, 'c')).toEqual([1, 1, 1, 1]);
  });

  it('directory: scan lists committed counters in UTF-8 byte order within a range, with kind and shard count', async () => {
    const directory = await open();
    // UTF-16 order (JavaScript's sort) puts the astral 😀 before U+FFFD; byte order puts it after.
    const listed = ['b', 'a:2', 'a:10', 'a:\ufffd', 'a:😀', 'a:é', 'a;', 'a', 'A:1'];
    await directory.getOrCreateMany(listed);
    await directory.getOrCreate('a:m', 'membership', 3);
    await directory.setShards('a:10', 4);
    const byteOrder = [...listed, 'a:m'].sort((left, right) => Buffer.compare(Buffer.from(left), Buffer.from(right)));
    expect(byteOrder).not.toEqual([...listed, 'a:m'].sort());
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
    const directory = await open();
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
    await directory.close();
    clockMs += 3_600_000;
    const reopened = await open();
    expect(['own', 'never', 'inherit'].map((name) => reopened.get(name)!.ttlMs)).toEqual([5_000, 0, null]);
    // Last writes are not stored: counted from the load, an hour after the last real one.
    expect(reopened.get('own')!.lastWriteMonotonicMs).toBe(clockMs);
  });

  it('directory: every write path (getOrCreate, getOrCreateMany) and setTtl restart a counter’s idle clock; reads do not', async () => {
    const directory = await open();
    const created = await directory.getOrCreate('a');
    await directory.getOrCreateMany(['b', 'b', 'c']);
    expect(created.lastWriteMonotonicMs).toBe(clockMs);
    clockMs += 1_000;
    directory.get('a');
    await directory.scan({ after: '', from: '', before: undefined }, 10);
    expect(directory.get('a')!.lastWriteMonotonicMs).toBe(clockMs - 1_000);
    await directory.getOrCreate('a');
    await directory.getOrCreateMany(['b', 'b']);
    expect([...directory.liveCounters()].map((counter) => counter.lastWriteMonotonicMs)).toEqual([clockMs, clockMs, clockMs - 1_000]);
    clockMs += 1_000;
    await directory.setTtl('c', 60_000);
    expect(directory.get('c')!.lastWriteMonotonicMs).toBe(clockMs);
  });

  describe('creation', () => {
    it("directory: a call's new counters are created together, existing ones looked up", async () => {
      const directory = await open();
      await directory.getOrCreate('old');
      const wanted = ['old', ...names(500), 'old', ...names(500, 'm')];
      const counters = await directory.getOrCreateMany(wanted);
      expect(counters.map((counter) => counter.name)).toEqual(wanted);
      expect(sameCounter(counters[0], directory.get('old'))).toBe(true);
      expect(sameCounter(counters[501], counters[0])).toBe(true);
      expect(directory.counterCount).toBe(1_001);
      expect(directory.shardCount).toBe(1_001);
      const ids = counters.map((counter) => counter.shards[0]!.shardId);
      expect(new Set(ids).size).toBe(1_001);
      expect(await directory.getOrCreateMany(wanted)).toEqual(counters);
      expect((await stored(directory)).counters).toHaveLength(1_001);
    });

    it('directory: a name repeated within a call, in and out of order, is one counter with one shard', async () => {
      const directory = await open();
      const counters = await directory.getOrCreateMany(['a', 'b', 'a', 'a', 'c', 'b']);
      expect(sameCounter(counters[0], counters[2])).toBe(true);
      expect(sameCounter(counters[0], counters[3])).toBe(true);
      expect(sameCounter(counters[1], counters[5])).toBe(true);
      expect(counters.map((counter) => counter.shards.length)).toEqual([1, 1, 1, 1, 1, 1]);
      expect((await stored(directory)).counters).toEqual(['a', 'b', 'c']);
      expect(new Set(['a', 'b', 'c'].map((name) => directory.get(name)!.shards[0]!.shardId)).size).toBe(3);
    });

    it("directory: one call's new counters spread over the pairs as one at a time would", async () => {
      const directory = await open();
      await directory.getOrCreateMany(names(9));
      const perPair = [0, 0, 0];
      for (const name of names(9)) perPair[directory.get(name)!.shards[0]!.pairIndex]!++;
      expect(perPair).toEqual([3, 3, 3]);
    });

    it('directory: concurrent calls naming the same new counters get one counter per name', async () => {
      const directory = await open();
      const calls = await Promise.all(
        Array.from({ length: 20 }, (_, call) => directory.getOrCreateMany([`shared:${call % 3}`, `own:${call}`, 'shared:0'])),
      );
      for (const counters of calls) expect(sameCounter(counters[0], directory.get(counters[0]!.name))).toBe(true);
      expect(directory.counterCount).toBe(23);
      const ids = [...directory.liveCounters()].map((counter) => counter.shards[0]!.shardId);
      expect(new Set(ids).size).toBe(23);
    });

    it('directory: more new counters than newCountersPerCallMax in one call is resource_exhausted and creates nothing', async () => {
      const directory = await open();
      await directory.getOrCreate('old');
      const error = await errorOf(() => directory.getOrCreateMany(['old', ...names(newCountersPerCallMax + 1)]));
      expect(error.code).toBe('resource_exhausted');
      expect(error.message).toContain(`${newCountersPerCallMax} new counters per call`);
      expect(error.message).toContain('newCountersPerCallMax');
      expect(directory.counterCount).toBe(1);
      expect((await stored(directory)).counters).toEqual(['old']);
      // Exactly the cap, with existing names besides: created.
      await directory.getOrCreateMany(['old', ...names(newCountersPerCallMax), 'old']);
      expect(directory.counterCount).toBe(newCountersPerCallMax + 1);
    });

    it('directory: past countersMax new counters are resource_exhausted, all or nothing, and existing ones are still served', async () => {
      const directory = await open(threePairs, { countersMax: 3, shardsTotalMax: 100 });
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
      expect((await stored(directory)).counters).toEqual(['a', 'b', 'c']);
    });

    it('directory: past shardsTotalMax creation and growth are resource_exhausted; a membership counter costs its partitions', async () => {
      const directory = await open(threePairs, { countersMax: 100, shardsTotalMax: 20 });
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
      expect((await stored(directory)).shardRows).toBe(20);
    });

    it('directory: a call naming a counter of another kind creates none of its new counters', async () => {
      const directory = await open();
      await directory.getOrCreate('members', 'membership', 4);
      expect(await codeOfAsync(() => directory.getOrCreateMany(['new:0', 'members', 'new:1']))).toBe('failed_precondition');
      expect(directory.get('new:0')).toBeUndefined();
      expect(directory.counterCount).toBe(1);
      expect((await stored(directory)).counters).toEqual(['members']);
    });

    it('directory: partitions outside 1..memberPartitionsMax are invalid_argument and create nothing', async () => {
      const directory = await open();
      expect(await codeOfAsync(() => directory.getOrCreate('m', 'membership', 0))).toBe('invalid_argument');
      expect(await codeOfAsync(() => directory.getOrCreate('m', 'membership', 10_000))).toBe('invalid_argument');
      expect(directory.counterCount).toBe(0);
    });

    it('directory: reopened above a lowered cap, it keeps every counter, warns, and creates no more', async () => {
      const directory = await open();
      await directory.getOrCreateMany(['a', 'b', 'c']);
      await directory.close();
      const reopened = await open(threePairs, { countersMax: 2, shardsTotalMax: 2 });
      expect(reopened.counterCount).toBe(3);
      expect(reopened.warnings.join('\n')).toMatch(/3 counters, the limit is 2/);
      expect(reopened.warnings.join('\n')).toMatch(/3 shards, the limit is 2/);
      expect(await reopened.getOrCreateMany(['a', 'b', 'c'])).toHaveLength(3);
      expect(await codeOfAsync(() => reopened.getOrCreate('d'))).toBe('resource_exhausted');
    });
  });

  describe('lifecycle', () => {
    const lifecycleLimits = { countersMax: 1_000, shardsTotalMax: 10_000 };

    it('directory: a deleted counter is gone with its shards; its drops are owed until confirmed, across reopen', async () => {
      const directory = await open(twoPairs, lifecycleLimits);
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
      await directory.close();
      const reopened = await open(twoPairs, lifecycleLimits);
      expect(reopened.get('a')).toBeUndefined();
      expect(reopened.get('b')!.shards).toHaveLength(1);
      expect([reopened.counterCount, reopened.shardCount]).toEqual([1, 1]);
      expect(reopened.pendingShardTasks().map((task) => task.shardId)).toEqual(ids.slice(1));
      // A fresh counter of the old name has no growth history and one new shard.
      const again = await reopened.getOrCreate('a');
      expect(again).not.toBe(deleted);
      expect(again.growths).toEqual([]);
      expect(again.shards).toHaveLength(1);
    });

    it('directory: shard ids are never reused, even when the deleted counter held the highest ids and the directory reopens', async () => {
      let directory = await open(twoPairs, lifecycleLimits);
      await directory.getOrCreate('low');
      await directory.getOrCreate('high');
      await directory.setShards('high', 5);
      const highest = Math.max(...directory.get('high')!.shards.map((shard) => shard.shardId));
      await directory.deleteCounter('high');
      await directory.close();
      directory = await open(twoPairs, lifecycleLimits);
      // Never reused; not necessarily dense (a router reserves etcd's ids in blocks).
      const fresh = (await directory.getOrCreate('high')).shards[0]!.shardId;
      expect(fresh).toBeGreaterThan(highest);
      await directory.deleteCounter('high');
      await directory.deleteCounter('low');
      await directory.close();
      directory = await open(twoPairs, lifecycleLimits);
      expect((await directory.getOrCreate('next')).shards[0]!.shardId).toBeGreaterThan(fresh);
    });

    it('directory: the caps count live counters and shards only', async () => {
      const directory = await open(twoPairs, { countersMax: 2, shardsTotalMax: 3 });
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
      const directory = await open(twoPairs, lifecycleLimits);
      await directory.getOrCreate('c');
      await directory.setShards('c', 2);
      const ids = directory.get('c')!.shards.map((shard) => shard.shardId);
      expect(directory.get('c')!.generation).toBe(0);
      const first = await directory.clearCounter('c', Buffer.from('k1'), 60_000);
      expect([first.generation, first.applied]).toEqual([1, true]);
      expect(sameCounter(first.counter, directory.get('c'))).toBe(true);
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

      await directory.close();
      const reopened = await open(twoPairs, lifecycleLimits);
      expect(reopened.get('c')!.generation).toBe(2);
      expect(reopened.pendingShardTasks().map((task) => [task.shardId, task.kind, task.generation])).toEqual([[ids[1], 'clear', 2]]);
      expect(await reopened.clearCounter('c', Buffer.from('k1'), 60_000)).toMatchObject({ generation: 1, applied: false });
      // Past the window the key is forgotten: a new clear.
      clockMs += 60_001;
      expect(await reopened.clearCounter('c', Buffer.from('k1'), 60_000)).toMatchObject({ generation: 3, applied: true });
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

    it('directory: many counters deleted in one call; pending counts kept by kind; a round takes a bounded share per pair and skips a down pair', async () => {
      const directory = await open(twoPairs, lifecycleLimits);
      const counterNames = Array.from({ length: 40 }, (_, index) => `c${index}`);
      for (const name of counterNames) await directory.getOrCreate(name);
      const pairOf = new Map(counterNames.map((name) => [name, directory.get(name)!.shards[0]!.pairIndex]));
      expect((await directory.deleteCounters([...counterNames, 'never-existed', counterNames[0]!])).map((counter) => counter.name)).toEqual(
        counterNames,
      );
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
      await directory.close();
      expect((await open(twoPairs, lifecycleLimits)).pendingShardTaskCounts).toEqual({ drop: perPair.get(1)!, clear: 0 });
    });
  });

  describe('tombstones', () => {
    it('directory: a DeleteCounter records the name one incarnation past its last in the same transaction; a TTL delete records none; both survive a reopen', async () => {
      const directory = await open();
      await directory.getOrCreate('t');
      await directory.getOrCreate('ttl');
      expect((await directory.deleteCounters(['t'], { tombstone: 'next' })).map((counter) => counter.name)).toEqual(['t']);
      expect(directory.get('t')).toBeUndefined();
      expect(directory.tombstone('t')).toEqual({ name: 't', incarnation: 1, deletedMs: clockMs });
      await directory.deleteCounters(['ttl']);
      expect(directory.tombstone('ttl')).toBeUndefined();
      // A counter created under the name again is of incarnation 1; deleting it makes 2.
      await directory.getOrCreate('t');
      clockMs += 1_000;
      await directory.deleteCounters(['t'], { tombstone: 'next' });
      expect(directory.tombstone('t')).toEqual({ name: 't', incarnation: 2, deletedMs: clockMs });
      // A name with no counter: nothing deleted, no tombstone moved (bad input changes nothing).
      expect(await directory.deleteCounters(['never'], { tombstone: 'next' })).toEqual([]);
      expect(directory.tombstone('never')).toBeUndefined();
      await directory.close();
      const reopened = await open();
      expect([...reopened.tombstones()].sort((a, b) => (a.name < b.name ? -1 : 1))).toEqual([
        { name: 't', incarnation: 2, deletedMs: clockMs },
      ]);
    });

    it('directory: deleteUpTo deletes the counter and raises the tombstone once per incarnation: a repeat or a lower one changes nothing, a counter created since survives', async () => {
      const directory = await open();
      const first = await directory.getOrCreate('u');
      expect(await directory.deleteUpTo('u', 2)).toEqual({ deleted: first, applied: true });
      expect(directory.get('u')).toBeUndefined();
      expect(directory.tombstone('u')?.incarnation).toBe(2);
      expect(directory.pendingShardTasks().map((task) => [task.shardId, task.kind])).toEqual([[first.shards[0]!.shardId, 'drop']]);
      // Re-created at incarnation 2 (a peer's part, or an increment here): a resent or racing delete of 2 leaves it.
      const second = await directory.getOrCreate('u');
      expect(await directory.deleteUpTo('u', 2)).toEqual({ deleted: undefined, applied: false });
      expect(await directory.deleteUpTo('u', 1)).toEqual({ deleted: undefined, applied: false });
      expect(directory.get('u')?.shards[0]?.shardId).toBe(second.shards[0]!.shardId);
      // A name this region never had: the tombstone alone.
      expect(await directory.deleteUpTo('gone', 1)).toEqual({ deleted: undefined, applied: true });
      expect(directory.get('gone')).toBeUndefined();
      await directory.close();
      const reopened = await open();
      expect(reopened.tombstone('u')?.incarnation).toBe(2);
      expect(reopened.tombstone('gone')?.incarnation).toBe(1);
      expect(reopened.get('u')).toBeDefined();
    });

    it("directory: pruneTombstones forgets those past retention of names with no counter, keeps a live name's and newer ones", async () => {
      const directory = await open();
      await directory.deleteUpTo('old', 1);
      await directory.deleteUpTo('live', 1);
      await directory.getOrCreate('live');
      clockMs += 10_000;
      await directory.deleteUpTo('new', 1);
      expect(await directory.pruneTombstones(10_000)).toBe(1);
      expect([...directory.tombstones()].map((tombstone) => tombstone.name).sort()).toEqual(['live', 'new']);
      await directory.close();
      expect([...(await open()).tombstones()].map((tombstone) => tombstone.name).sort()).toEqual(['live', 'new']);
    });
  });
});
