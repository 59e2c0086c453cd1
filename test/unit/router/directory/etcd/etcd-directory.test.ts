// The etcd directory with several routers on one real etcd (a key prefix per
// test, a client per router as separate processes would have): changes seen
// through the watch, concurrent creation and growth never handing out a shard
// id twice, growth activated only once every live router acknowledged it (a
// dead one's lease expiring), pair updates won by exactly one router, and
// what a router does while etcd is gone and after it is back.
import { sameCounter } from '../../../../../src/router/directory/counter-view.ts';
import { Etcd3, KVClient } from 'etcd3';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { EtcdDirectory, etcdClientOptions, type EtcdDirectoryOptions } from '../../../../../src/router/directory/etcd/index.ts';
import { EtcdProcess } from '../../../../../src/cluster/etcd-process.ts';
import type { CounterInfo, PairAddresses } from '../../../../../src/router/directory/contract.ts';
import { growthActivationMarginMs, createLogger } from '../../../../../src/common/index.ts';
import { TallyError } from '../../../../../src/wire/index.ts';
import { makeTempDir, removeTempDir } from '../../../../helpers/temp-dir.ts';
import { codeOfAsync } from '../../../../helpers/rejection.ts';
import { waitFor } from '../../../../helpers/cluster.ts';
import { pause } from '../../../../helpers/pause.ts';

const threePairs: PairAddresses[] = [
  { primary: 'p0:1', follower: 'f0:1' },
  { primary: 'p1:1', follower: 'f1:1' },
  { primary: 'p2:1', follower: 'f2:1' },
];
const leaseTtlMs = 2_000;
const activationWaitMs = leaseTtlMs + growthActivationMarginMs;
const logger = createLogger('etcd-directory-test', 'error');

describe('etcd directory', () => {
  let dataDir: string;
  let etcd: EtcdProcess;
  let tests = 0;
  let prefix = '';
  const clients: Etcd3[] = [];
  const opened: EtcdDirectory[] = [];

  const newClient = (): Etcd3 => {
    const client = new Etcd3(etcdClientOptions([etcd.endpoint]));
    clients.push(client);
    return client;
  };
  /** A router's directory on its own client (or the one given), under this test's prefix. */
  const openRouter = async (routerId: string, options: Partial<EtcdDirectoryOptions> = {}): Promise<EtcdDirectory> => {
    const directory = await EtcdDirectory.open({
      client: options.client ?? newClient(),
      prefix,
      routerId,
      pairs: threePairs,
      logger,
      leaseTtlMs,
      ...options,
    });
    opened.push(directory);
    return directory;
  };
  /** The client a router's directory was opened with. */
  const clientOf = (directory: EtcdDirectory): Etcd3 => directory['client'];
  /** The raw value of a key under this test's prefix. */
  const read = async (key: string): Promise<{ value: string; lease: string } | undefined> => {
    const kv = (await clients[0]!.kv.range({ key: Buffer.from(prefix + key) })).kvs[0];
    return kv === undefined ? undefined : { value: kv.value.toString(), lease: kv.lease };
  };
  /** Holds true for `ms` (a negative claim needs a window; kept short). */
  const staysTrue = async (check: () => boolean, ms: number): Promise<void> => {
    const untilMs = Date.now() + ms;
    while (Date.now() < untilMs) {
      expect(check()).toBe(true);
      await pause(10);
    }
  };

  beforeAll(async () => {
    dataDir = makeTempDir('etcd-directory');
    etcd = new EtcdProcess({ dataDir });
    await etcd.start();
  });
  afterAll(async () => {
    await etcd.stop();
    removeTempDir(dataDir);
  });
  afterEach(async () => {
    vi.restoreAllMocks();
    if (!etcd.running) await etcd.start();
    for (const directory of opened.splice(0)) await directory.close();
    for (const client of clients.splice(0)) client.close();
  });
  const begin = (): void => {
    prefix = `/etcd-directory-${++tests}/`;
  };

  it('a counter created through one router is seen by the other, the same in both', async () => {
    begin();
    const a = await openRouter('a');
    const b = await openRouter('b');
    expect(a.liveRouterIds()).toEqual(['a', 'b']);
    const created = await a.getOrCreate('views');
    await waitFor(() => b.get('views'), { timeoutMs: 5_000, what: 'b to see views' });
    expect(b.get('views')!.shards).toEqual(created.shards);
    await b.setTtl('views', 60_000);
    await waitFor(() => a.get('views')!.ttlMs === 60_000, { timeoutMs: 5_000, what: 'a to see the ttl' });
    // Changed in place: a caller holding the counter sees it.
    expect(sameCounter(a.get('views'), created)).toBe(true);
    await b.deleteCounter('views');
    await waitFor(() => a.get('views') === undefined, { timeoutMs: 5_000, what: 'a to see the delete' });
    expect(a.pendingShardTasks().map((task) => [task.shardId, task.kind])).toEqual([[created.shards[0]!.shardId, 'drop']]);
  });

  it('a tombstone recorded through one router reaches the other through the watch; routers racing to delete a name up to one incarnation delete it once; a pruned tombstone leaves both', async () => {
    begin();
    const a = await openRouter('a');
    const b = await openRouter('b');
    const first = await a.getOrCreate('gone');
    await a.deleteCounters(['gone'], { tombstone: 'next' });
    await waitFor(() => b.tombstone('gone')?.incarnation === 1, { timeoutMs: 5_000, what: 'b to see the tombstone' });
    expect(b.get('gone')).toBeUndefined();
    // Re-created at incarnation 1, then two receivers (one per router) apply a peer's delete of incarnation 2 at once.
    const second = await b.getOrCreate('gone');
    expect(second.shards[0]!.shardId).not.toBe(first.shards[0]!.shardId);
    await waitFor(() => a.get('gone'), { timeoutMs: 5_000, what: 'a to see the new counter' });
    const outcomes = await Promise.all([a.deleteUpTo('gone', 2), b.deleteUpTo('gone', 2)]);
    expect(outcomes.filter((outcome) => outcome.applied)).toHaveLength(1);
    expect(outcomes.filter((outcome) => outcome.deleted !== undefined).map((outcome) => outcome.deleted!.shards[0]!.shardId)).toEqual([
      second.shards[0]!.shardId,
    ]);
    await waitFor(() => a.tombstone('gone')?.incarnation === 2 && b.tombstone('gone')?.incarnation === 2, {
      timeoutMs: 5_000,
      what: 'both at incarnation 2',
    });
    expect(await a.pruneTombstones(0)).toBe(1);
    await waitFor(() => b.tombstone('gone') === undefined, { timeoutMs: 5_000, what: 'b to see the tombstone go' });
    expect(await read('tombstones/gone')).toBeUndefined();
  });

  it('2 × 300 concurrent creations of overlapping names make one counter per name and never one shard id twice, not after deletes either', async () => {
    begin();
    const a = await openRouter('a');
    const b = await openRouter('b');
    // a from the low names up, b from the high ones down, in waves of 20 concurrent calls: many
    // transactions each, racing on disjoint names (only shard-id-next tells them apart) and on shared ones.
    const namesA = Array.from({ length: 300 }, (_, index) => `n:${index}`);
    const namesB = Array.from({ length: 300 }, (_, index) => `n:${449 - index}`);
    const inWaves = async (names: string[], create: (name: string, index: number) => Promise<CounterInfo>): Promise<CounterInfo[]> => {
      const created: CounterInfo[] = [];
      for (let start = 0; start < names.length; start += 20)
        created.push(...(await Promise.all(names.slice(start, start + 20).map((name, offset) => create(name, start + offset)))));
      return created;
    };
    const [fromA, fromB] = await Promise.all([
      inWaves(namesA, (name) => a.getOrCreate(name)),
      inWaves(namesB, (name, index) =>
        index % 2 === 0 ? b.getOrCreate(name) : b.getOrCreateMany([name, `n:${index}`]).then((got) => got[0]!),
      ),
    ]);
    await waitFor(() => a.counterCount === 450 && b.counterCount === 450, { timeoutMs: 10_000, what: 'both routers to hold 450 counters' });
    for (const [index, name] of namesA.entries()) expect(sameCounter(fromA[index], a.get(name))).toBe(true);
    for (const [index, name] of namesB.entries()) expect(sameCounter(fromB[index], b.get(name))).toBe(true);
    const idsOf = (directory: EtcdDirectory): number[] =>
      [...directory.liveCounters()].flatMap((counter) => counter.shards.map((shard) => shard.shardId));
    for (const counter of a.liveCounters()) expect(b.get(counter.name)!.shards).toEqual(counter.shards);
    const ids = idsOf(a);
    expect(new Set(ids).size).toBe(450);

    // Deletes through both, then more creations through both: new ids only.
    await Promise.all([a.deleteCounters(namesA.slice(0, 100)), b.deleteCounters(namesB.slice(200))]);
    const more = await Promise.all([
      Promise.all(Array.from({ length: 100 }, (_, index) => a.getOrCreate(`m:${index}`))),
      Promise.all(Array.from({ length: 100 }, (_, index) => b.getOrCreate(`m:${index + 50}`))),
    ]);
    await waitFor(() => a.counterCount === 400 && b.counterCount === 400, { timeoutMs: 10_000, what: 'both routers to hold 400 counters' });
    const newIds = more.flat().map((counter) => counter.shards[0]!.shardId);
    for (const id of newIds) expect(ids).not.toContain(id);
    expect(new Set(idsOf(b)).size).toBe(400);
    expect(a.pendingShardTaskCounts).toEqual({ drop: 200, clear: 0 });
    await waitFor(() => b.pendingShardTaskCount === 200, { timeoutMs: 5_000, what: 'b to hold every drop' });
  });

  it('concurrent growth of one counter from both routers ends the same everywhere', async () => {
    begin();
    const a = await openRouter('a');
    const b = await openRouter('b');
    await a.getOrCreate('c');
    await waitFor(() => b.get('c'), { timeoutMs: 5_000, what: 'b to see c' });
    await Promise.all([a.setShards('c', 4), b.setShards('c', 6)]);
    await waitFor(() => a.get('c')!.writableShardCount === 6 && b.get('c')!.writableShardCount === 6, {
      timeoutMs: 5_000,
      what: 'both routers to write 6 shards',
    });
    const counter = a.get('c')!;
    expect(counter.shards).toHaveLength(6);
    expect(b.get('c')!.shards).toEqual(counter.shards);
    expect(b.get('c')!.growths).toEqual(counter.growths);
    expect(new Set(counter.shards.map((shard) => shard.shardId)).size).toBe(6);
    // Each growth starts where writes went before it.
    expect(counter.growths.map((growth) => growth.previousShardCount)).toEqual(counter.growths.length === 1 ? [1] : [1, 4]);
  });

  it('a growth is announced to every router first and writable only once each has acknowledged it', async () => {
    begin();
    const a = await openRouter('a');
    const b = await openRouter('b');
    const counter = await a.getOrCreate('c');
    await waitFor(() => b.get('c'), { timeoutMs: 5_000, what: 'b to see c' });
    // b's acknowledgements (its presence writes) are held back until released.
    const clientB = clientOf(b);
    const put = clientB.kv.put.bind(clientB.kv);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    vi.spyOn(clientB.kv, 'put').mockImplementation(async (...args) => {
      await held;
      return put(...args);
    });
    let settled = false;
    const growth = a.setShards('c', 4).finally(() => (settled = true));
    await waitFor(() => b.get('c')!.shards.length === 4, { timeoutMs: 5_000, what: 'b to hold the announced shards' });
    // Announced: b reads the new shards; nobody writes them yet.
    expect([b.get('c')!.writableShardCount, counter.writableShardCount]).toEqual([1, 1]);
    await waitFor(async () => JSON.parse((await read('routers/a'))!.value).seenRevision > 0, {
      timeoutMs: 5_000,
      what: 'a to acknowledge',
    });
    await staysTrue(() => !settled && counter.writableShardCount === 1 && b.get('c')!.writableShardCount === 1, 500);
    release();
    const { previousShardCount } = await growth;
    expect(previousShardCount).toBe(1);
    expect(counter.writableShardCount).toBe(4);
    expect(counter.growths).toEqual([{ previousShardCount: 1, grownMs: expect.any(Number) }]);
    await waitFor(() => b.get('c')!.writableShardCount === 4, { timeoutMs: 5_000, what: 'b to write 4 shards' });
    expect(b.get('c')!.growths).toEqual(counter.growths);
  });

  it('a clear, a delete and a pair going out of sync resolve only once every live router has acknowledged them', async () => {
    begin();
    const a = await openRouter('a');
    const b = await openRouter('b');
    await a.getOrCreateMany(['cleared', 'deleted']);
    await a.updatePair(0, { inSync: true });
    await waitFor(() => b.get('deleted') !== undefined && b.pair(0).inSync, {
      timeoutMs: 5_000,
      what: 'b to see both and the pair in sync',
    });
    // b's acknowledgements (its presence writes) are held back until released.
    const clientB = clientOf(b);
    const put = clientB.kv.put.bind(clientB.kv);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    vi.spyOn(clientB.kv, 'put').mockImplementation(async (...args) => {
      await held;
      return put(...args);
    });
    const settled = { clear: false, delete: false, pair: false };
    const clear = a.clearCounter('cleared', Buffer.alloc(0), 60_000).finally(() => (settled.clear = true));
    const deletion = a.deleteCounters(['deleted']).finally(() => (settled.delete = true));
    const outOfSync = a.updatePair(0, { inSync: false }).finally(() => (settled.pair = true));
    // b has applied them (its watch runs), but has not said so: a does not answer yet.
    await waitFor(() => b.get('cleared')!.generation === 1 && b.get('deleted') === undefined && !b.pair(0).inSync, {
      timeoutMs: 5_000,
      what: 'b to apply the clear, the delete and the out-of-sync mark',
    });
    await staysTrue(() => !settled.clear && !settled.delete && !settled.pair, 500);
    release();
    expect((await clear).generation).toBe(1);
    expect((await deletion).map((counter) => counter.name)).toEqual(['deleted']);
    expect((await outOfSync).inSync).toBe(false);
  });

  it('a router gone without a word (its lease left to expire) holds a growth back at most about the lease TTL', async () => {
    begin();
    const a = await openRouter('a');
    const b = await openRouter('b');
    await a.getOrCreate('c');
    await waitFor(() => b.get('c'), { timeoutMs: 5_000, what: 'b to see c' });
    // As a killed process: no revoke, no more keepalives; its presence goes when etcd expires the lease.
    clientOf(b).close();
    const startedMs = Date.now();
    await a.setShards('c', 3);
    const waitedMs = Date.now() - startedMs;
    expect(a.get('c')!.writableShardCount).toBe(3);
    expect(a.liveRouterIds()).toEqual(['a']);
    // setShards fails past the lease TTL plus a margin: it succeeded, so b's lease expired within it.
    expect(waitedMs).toBeLessThan(activationWaitMs);
  });

  it('a growth left announced (its grower gave up: a router never acknowledged) is finished by the next setShards or by the periodic pass', async () => {
    begin();
    // A router that registered and then never follows the directory: it never acknowledges.
    const fakeClient = newClient();
    const fakeLease = await fakeClient.leaseClient.leaseGrant({ TTL: 60 });
    await fakeClient.kv.put({ key: Buffer.from(`${prefix}routers/stuck`), value: Buffer.from('{"seenRevision":0}'), lease: fakeLease.ID });
    const a = await openRouter('a');
    await a.getOrCreateMany(['by-set-shards', 'by-pass']);
    const refusals = await Promise.all(
      ['by-set-shards', 'by-pass'].map((name) => a.setShards(name, 4).catch((error: TallyError) => error)),
    );
    for (const refusal of refusals) {
      expect(refusal).toBeInstanceOf(TallyError);
      expect((refusal as TallyError).code).toBe('unavailable');
      expect((refusal as TallyError).message).toContain('stuck');
    }
    for (const name of ['by-set-shards', 'by-pass']) expect([a.get(name)!.shards.length, a.get(name)!.writableShardCount]).toEqual([4, 1]);
    const b = await openRouter('b');
    expect([b.get('by-pass')!.shards.length, b.get('by-pass')!.writableShardCount]).toEqual([4, 1]);
    await fakeClient.leaseClient.leaseRevoke({ ID: fakeLease.ID });
    await waitFor(() => b.liveRouterIds().length === 2, { timeoutMs: 5_000, what: 'the stuck router to be gone' });
    await b.setShards('by-set-shards', 4);
    expect(b.get('by-set-shards')!.writableShardCount).toBe(4);
    await waitFor(() => a.get('by-pass')!.writableShardCount === 4 && b.get('by-pass')!.writableShardCount === 4, {
      timeoutMs: 3 * activationWaitMs,
      what: 'the periodic pass to activate by-pass',
    });
    expect(a.get('by-pass')!.growths).toHaveLength(1);
  });

  it('concurrent pair updates through two routers: exactly one wins, the other is failed_precondition and sees the winner', async () => {
    begin();
    const a = await openRouter('a');
    const b = await openRouter('b');
    const outcomes = await Promise.allSettled([
      a.updatePair(0, { epoch: 2n, primary: 'f0:1', follower: 'p0:1', followerId: 'from-a' }),
      b.updatePair(0, { epoch: 2n, primary: 'f0:1', follower: 'p0:1', followerId: 'from-b' }),
    ]);
    const won = outcomes.filter((outcome) => outcome.status === 'fulfilled');
    const lost = outcomes.filter((outcome) => outcome.status === 'rejected');
    expect([won.length, lost.length]).toEqual([1, 1]);
    expect(((lost[0] as PromiseRejectedResult).reason as TallyError).code).toBe('failed_precondition');
    const winner = outcomes[0]!.status === 'fulfilled' ? 'from-a' : 'from-b';
    await waitFor(() => a.pair(0).followerId === winner && b.pair(0).followerId === winner, {
      timeoutMs: 5_000,
      what: 'both to hold the winner',
    });
    expect(a.pair(0)).toMatchObject({ epoch: 2n, primary: 'f0:1' });
    // The loser, having seen the winner, may decide again from there.
    const loser = winner === 'from-a' ? b : a;
    await loser.updatePair(0, { inSync: true });
    await waitFor(() => a.pair(0).inSync && b.pair(0).inSync, { timeoutMs: 5_000, what: 'both to see in sync' });
  });

  it('a pair update fails failed_precondition once the fence compare fails (no longer the supervisor)', async () => {
    begin();
    const client = newClient();
    await client.put(`${prefix}supervisor`).value('a');
    const a = await openRouter('a', { client, pairUpdateFence: (txn) => void txn.and('supervisor', 'Value', '==', 'a') });
    await a.updatePair(1, { inSync: true }, { asSupervisor: true });
    await client.put(`${prefix}supervisor`).value('b');
    const error = await a.updatePair(1, { inSync: false }, { asSupervisor: true }).catch((caught: TallyError) => caught);
    expect(error).toBeInstanceOf(TallyError);
    expect((error as TallyError).code).toBe('failed_precondition');
    expect((error as TallyError).message).toMatch(/no longer the supervisor/);
    expect(a.pair(1).inSync).toBe(true);
  });

  it('--pairs are registered by the first router; a later one uses etcd’s (none given), refuses different members, warns about fewer; a pair added later reaches every router', async () => {
    begin();
    const a = await openRouter('a');
    const b = await openRouter('b', { pairs: [] });
    expect(b.allPairs().map((pair) => pair.primary)).toEqual(['p0:1', 'p1:1', 'p2:1']);
    const moved = threePairs.map((pair, index) => (index === 2 ? { primary: 'p2:1', follower: 'other:1' } : pair));
    expect(await codeOfAsync(() => openRouter('c', { pairs: moved }))).toBe('failed_precondition');
    const d = await openRouter('d', { pairs: threePairs.slice(0, 2) });
    expect(d.allPairs()).toHaveLength(3);
    expect(d.warnings.join('\n')).toMatch(/etcd holds 3 node pairs but --pairs names 2/);
    // What `tally pair add` will write: the next index, created once.
    const stored = {
      primary: 'p3:1',
      follower: 'f3:1',
      epoch: '1',
      inSync: false,
      primaryId: '',
      followerId: '',
      ackedLsn: '0',
      legacy: false,
      replaced: false,
    };
    await clientOf(a).put(`${prefix}pairs/3`).value(JSON.stringify(stored));
    await waitFor(() => a.allPairs().length === 4 && b.allPairs().length === 4, { timeoutMs: 5_000, what: 'both to hold 4 pairs' });
    await a.getOrCreate('c');
    await a.setShards('c', 4);
    expect(
      a
        .get('c')!
        .shards.map((shard) => shard.pairIndex)
        .sort(),
    ).toEqual([0, 1, 2, 3]);
  });

  it('with no pairs in etcd and none configured it opens with a warning and creates nothing', async () => {
    begin();
    const a = await openRouter('a', { pairs: [] });
    expect(a.warnings.join('\n')).toMatch(/no node pairs/);
    expect(await codeOfAsync(() => a.getOrCreate('c'))).toBe('failed_precondition');
  });

  it('a shard id is not reused even when the counter holding the highest ids is removed from etcd by hand', async () => {
    begin();
    const a = await openRouter('a');
    await a.getOrCreate('kept');
    await a.getOrCreate('removed');
    await a.setShards('removed', 3);
    const highestId = Math.max(...a.get('removed')!.shards.map((shard) => shard.shardId));
    await clientOf(a).delete().key(`${prefix}counters/removed`);
    await waitFor(() => a.get('removed') === undefined, { timeoutMs: 5_000, what: 'the removal to reach memory' });
    expect(a.shardCount).toBe(1);
    expect((await a.getOrCreate('new')).shards[0]!.shardId).toBeGreaterThan(highestId);
  });

  it('a call of 1000 new counters is one etcd transaction (etcd runs with --max-txn-ops to take it), after one reservation of shard ids', async () => {
    begin();
    const a = await openRouter('a');
    const txn = vi.spyOn(KVClient.prototype, 'txn');
    const names = Array.from({ length: 1_000 }, (_, index) => `bulk:${index}`);
    await a.getOrCreateMany(names);
    // A block of shard ids reserved, then one transaction: a compare per new name.
    expect(txn.mock.calls.map(([request]) => request.compare?.length)).toEqual([1, 1_000]);
    expect(a.counterCount).toBe(1_000);
  });

  it('a router id held by a live router is refused (after waiting out a lease) with failed_precondition', async () => {
    begin();
    await openRouter('same');
    const error = await openRouter('same').catch((caught: TallyError) => caught);
    expect(error).toBeInstanceOf(TallyError);
    expect((error as TallyError).code).toBe('failed_precondition');
    expect((error as TallyError).message).toMatch(/router id same is held by a live router/);
  });

  it('a router whose lease was lost registers again and is fresh once it has caught up', async () => {
    begin();
    const a = await openRouter('a');
    const before = (await read('routers/a'))!;
    await clientOf(a).leaseClient.leaseRevoke({ ID: before.lease });
    await waitFor(async () => a.fresh && (await read('routers/a'))?.lease !== before.lease && a.liveRouterIds().includes('a'), {
      timeoutMs: 10_000,
      what: 'a to register again',
    });
    await a.getOrCreate('after');
  });

  it('a router whose keepalives fail stops vouching for its copy within half the TTL though its watch is up, lets its presence expire, and registers again once they pass', async () => {
    begin();
    const a = await openRouter('a');
    const before = (await read('routers/a'))!;
    const keepAlive = vi.spyOn(clientOf(a).leaseClient, 'leaseKeepAlive').mockRejectedValue(new Error('held down by the test'));
    await waitFor(() => !a.fresh, { timeoutMs: leaseTtlMs, what: 'a to stop vouching' });
    expect(a['watch']!.connected).toBe(true);
    expect(await codeOfAsync(() => a.getOrCreate('while-cut-off'))).toBe('unavailable');
    await waitFor(async () => (await read('routers/a')) === undefined, { timeoutMs: 2 * leaseTtlMs, what: 'a’s presence to expire' });
    keepAlive.mockRestore();
    await waitFor(async () => a.fresh && (await read('routers/a'))?.lease !== before.lease, {
      timeoutMs: 10_000,
      what: 'a to register again',
    });
    await a.getOrCreate('after');
  });

  it('with etcd SIGKILLed changes fail unavailable, fresh goes false within the TTL and reads still answer; once back, a change made while one router’s watch was down still reaches it', async () => {
    begin();
    const a = await openRouter('a');
    const b = await openRouter('b');
    await a.getOrCreate('before');
    await waitFor(() => b.get('before'), { timeoutMs: 5_000, what: 'b to see before' });
    await etcd.kill('SIGKILL');
    expect(await codeOfAsync(() => a.getOrCreate('during'))).toBe('unavailable');
    expect(await codeOfAsync(() => b.setTtl('before', 5_000))).toBe('unavailable');
    await waitFor(() => !a.fresh && !b.fresh, { timeoutMs: leaseTtlMs, what: 'both routers to stop vouching for their copy' });
    expect(await codeOfAsync(() => a.clearCounter('before', Buffer.alloc(0), 60_000))).toBe('unavailable');
    expect([a.get('before')?.name, b.get('before')?.name, a.get('during')]).toEqual(['before', 'before', undefined]);
    expect(a.allPairs()).toHaveLength(3);

    // etcd comes back; b's watch is held down while a changes the directory.
    const watchB = vi.spyOn(clientOf(b).watchClient, 'watch').mockRejectedValue(new Error('held down by the test'));
    await etcd.start();
    await waitFor(() => a.fresh, { timeoutMs: 20_000, what: 'a to be fresh again' });
    await a.getOrCreate('after');
    await a.setTtl('before', 5_000);
    expect([b.get('after'), b.fresh]).toEqual([undefined, false]);
    expect(await codeOfAsync(() => b.getOrCreate('b-after'))).toBe('unavailable');
    watchB.mockRestore();
    await waitFor(() => b.fresh && b.get('after') !== undefined && b.get('before')!.ttlMs === 5_000, {
      timeoutMs: 20_000,
      what: 'b to resume its watch and catch up',
    });
    await b.getOrCreate('b-after');
  });

  it('a router whose watch fell behind a compaction reads the directory again, deletes included', async () => {
    begin();
    const a = await openRouter('a');
    const b = await openRouter('b');
    await a.getOrCreateMany(['gone', 'kept']);
    await waitFor(() => b.get('kept'), { timeoutMs: 5_000, what: 'b to see kept' });
    const kept = b.get('kept')!;
    await etcd.kill('SIGKILL');
    const watchB = vi.spyOn(clientOf(b).watchClient, 'watch').mockRejectedValue(new Error('held down by the test'));
    await etcd.start();
    await waitFor(() => a.fresh, { timeoutMs: 20_000, what: 'a to be fresh again' });
    await a.deleteCounter('gone');
    await a.getOrCreate('new');
    await a.setTtl('kept', 0);
    const { header } = await clientOf(a).kv.range({ key: Buffer.from(`${prefix}counters/kept`) });
    await clientOf(a).kv.compact({ revision: header.revision, physical: true });
    watchB.mockRestore();
    await waitFor(() => b.fresh && b.get('new') !== undefined && b.get('gone') === undefined, { timeoutMs: 20_000, what: 'b to reload' });
    // The same counter, changed in place.
    expect(sameCounter(b.get('kept'), kept)).toBe(true);
    expect(kept.ttlMs).toBe(0);
    expect(b.pendingShardTaskCounts).toEqual({ drop: 1, clear: 0 });
  });
});
