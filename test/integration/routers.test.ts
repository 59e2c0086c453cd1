// Several routers on one directory in etcd (G9, and G3 "through any router"),
// with real processes: two routers, two pairs, a real etcd. A counter made
// through one is read through the other at once; growth through one while
// the other reads exactly never yields a partial sum; a keyed retry through
// the other router applies once, before and after growth.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTallyClient, type TallyClient } from '../../src/client/index.ts';
import { pause, startCluster, waitFor, type TestCluster } from '../helpers/cluster.ts';
import { classify, Ledger } from '../helpers/load.ts';

describe('several routers on etcd', () => {
  let tc: TestCluster;
  let a: TallyClient;
  let b: TallyClient;

  beforeAll(async () => {
    // Cached totals refreshed every 5 s: a CACHED read must not lean on a refresh round to forget a counter cleared elsewhere.
    tc = await startCluster({
      pairs: 2,
      routers: 2,
      etcd: 'own',
      routerArgs: ['--router-lease-ttl-ms', '2000', '--refresh-interval-ms', '5000'],
    });
    const [first, second] = tc.cluster.routerAddresses;
    a = createTallyClient({ address: first!, deadlineMs: 10_000 });
    b = createTallyClient({ address: second!, deadlineMs: 10_000 });
  }, 60_000);

  afterAll(async () => {
    a?.close();
    b?.close();
    await tc?.stop();
  });

  it('a counter created through one router is read exactly through the other at once, every kind of read', async () => {
    for (let index = 0; index < 20; index++) {
      await a.increment(`made-on-a-${index}`, index + 1);
      // No wait: the read barrier looks the unknown name up in etcd.
      expect((await b.read(`made-on-a-${index}`)).total).toBe(BigInt(index + 1));
    }
    const many = await b.readMany(['made-on-a-0', 'made-on-a-19', 'never-written']);
    expect(many.map((read) => read.total)).toEqual([1n, 20n, 0n]);
    await b.addDistinct('seen-on-b', ['x', 'y']);
    expect((await a.countDistinct(['seen-on-b'])).estimate).toBe(2);
    const status = await a.clusterStatus();
    expect(status.directoryStore).toBe('etcd');
    expect([...status.routers].sort()).toEqual(['router-1', 'router-2']);
    expect(['router-1', 'router-2']).toContain(status.supervisor);
    expect((await b.clusterStatus()).supervisor).toBe(status.supervisor);
  });

  it('growth through one router while both write and the other reads exactly never yields a partial sum', async () => {
    const counter = 'race';
    const ledger = new Ledger();
    let running = true;
    // Writers on both routers; each write's outcome in the ledger.
    const writers = [a, b, a, b].map(async (client) => {
      while (running) {
        try {
          await client.increment(counter, 1, { idempotencyKey: null, deadlineMs: 5_000 });
          ledger.record(counter, 1n, 'ok');
        } catch (error) {
          ledger.record(counter, 1n, classify(error));
          ledger.recordError(error);
        }
      }
    });
    // Readers through the router that did not grow it: every read covers what was acknowledged before it began.
    const violations: string[] = [];
    let reads = 0;
    const readers = [b, b, a].map(async (client) => {
      let previous = 0n;
      while (running) {
        const acknowledgedBefore = ledger.ok.get(counter) ?? 0n;
        const { total } = await client.read(counter);
        reads++;
        if (total < acknowledgedBefore) violations.push(`read ${total} < ${acknowledgedBefore} acknowledged before it began`);
        if (total < previous) violations.push(`read ${total} after ${previous}: went backwards`);
        previous = total;
      }
    });
    await pause(300);
    for (const shards of [2, 3, 5, 8, 12, 16]) {
      await a.setShards(counter, shards);
      await pause(150);
    }
    // Enough calls to mean something, however slow a loaded machine makes them.
    await waitFor(() => ledger.okCalls > 100 && reads > 20, { timeoutMs: 20_000, what: '100 writes and 20 reads' });
    running = false;
    await Promise.all([...writers, ...readers]);
    expect(violations, ledger.topReasons()).toEqual([]);
    expect((await b.describe(counter)).shards).toBe(16);
    await ledger.expectWithinBounds(b);
    await ledger.expectWithinBounds(a);
  }, 90_000);

  it('a keyed retry through the other router applies once, before and after growth made by either', async () => {
    const keys = Array.from({ length: 30 }, (_, index) => `order-${index}`);
    for (const key of keys) expect((await a.increment('keyed', 2, { idempotencyKey: key })).applied).toBe(true);
    for (const key of keys) expect((await b.increment('keyed', 2, { idempotencyKey: key })).applied).toBe(false);
    await b.setShards('keyed', 6);
    for (const key of keys) expect((await a.increment('keyed', 2, { idempotencyKey: key })).applied).toBe(false);
    await a.setShards('keyed', 11);
    for (const key of keys) expect((await b.increment('keyed', 2, { idempotencyKey: key })).applied).toBe(false);
    expect((await a.read('keyed')).total).toBe(60n);
    expect((await b.read('keyed')).total).toBe(60n);
  }, 60_000);

  it('an increment through the other router right after a clear or a delete returned is never lost', async () => {
    for (let round = 0; round < 15; round++) {
      const counter = `cut-${round % 3}`;
      await a.increment(counter, 5);
      await a.clear(counter);
      // At once, through the router that did not clear: it must already tag the new generation.
      await b.increment(counter, 1);
      expect((await a.read(counter)).total, `round ${round}`).toBe(1n);
      expect((await b.read(counter)).total, `round ${round}`).toBe(1n);
      await b.deleteCounter(counter);
      await a.increment(counter, 2);
      expect((await b.read(counter)).total, `round ${round} after delete`).toBe(2n);
      await a.deleteCounter(counter);
    }
  }, 90_000);

  it('clear and delete through one router are seen by the other', async () => {
    await a.increment('to-clear', 5);
    await a.increment('to-delete', 7);
    expect((await b.read('to-clear')).total).toBe(5n);
    await b.clear('to-clear');
    expect((await a.read('to-clear')).total).toBe(0n);
    await a.increment('to-clear', 1);
    expect((await b.read('to-clear')).total).toBe(1n);
    await a.deleteCounter('to-delete');
    await waitFor(async () => (await b.read('to-delete')).total === 0n, { timeoutMs: 5_000, what: 'delete seen by router-2' });
    await b.increment('to-delete', 3);
    expect((await a.read('to-delete')).total).toBe(3n);
  }, 60_000);

  it("a CACHED read through the other router after a clear or a delete there serves neither the pre-clear total nor a deleted counter's", async () => {
    for (let round = 0; round < 5; round++) {
      const cleared = `cached-clear-${round}`;
      const deleted = `cached-delete-${round}`;
      await a.increment(cleared, 100);
      await a.increment(deleted, 100);
      // Both cached on b.
      expect((await b.read(cleared, { consistency: 'cached' })).total).toBe(100n);
      expect((await b.read(deleted, { consistency: 'cached' })).total).toBe(100n);
      await a.clear(cleared);
      await a.deleteCounter(deleted);
      await a.increment(deleted, 5);
      // Once b's exact reads show the clear and the new counter, its cached ones must too.
      await waitFor(async () => (await b.read(cleared)).total === 0n && (await b.read(deleted)).total === 5n, {
        timeoutMs: 5_000,
        what: 'the clear and the delete seen by router-2',
      });
      expect((await b.read(cleared, { consistency: 'cached' })).total, `round ${round}: cached after a clear`).toBe(0n);
      expect((await b.read(deleted, { consistency: 'cached' })).total, `round ${round}: cached after delete and re-create`).toBe(5n);
    }
  }, 60_000);
});
