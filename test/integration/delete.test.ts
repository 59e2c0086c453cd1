// DeleteCounter against real processes: a deleted counter reads as never
// written, its name makes a new counter with new shard ids, both nodes of
// every pair free its shards (gauges), nothing comes back after SIGKILL and
// restart, a write routed to an old shard is refused, a pair that is down
// gets its drops when it returns, and only an admin may delete.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { credentials, status } from '@grpc/grpc-js';
import { ShardNodeClient, type shardV1 } from '../../src/common/index.ts';
import { createTallyClient, type TallyClient } from '../../src/client/index.ts';
import { scrapeMetric, startCluster, waitFor, waitForHealthy, type TestCluster } from '../helpers/cluster.ts';
import { rejection } from '../helpers/rejection.ts';
import { tally } from '../helpers/cli.ts';

/** Per node (pair order, primary then follower as started): one gauge's value. */
async function perNode(tc: TestCluster, name: string): Promise<number[]> {
  return Promise.all(tc.cluster.nodes.map((node) => scrapeMetric(node.metricsPort, name)));
}

/** Sends one Apply straight to a node, as a router routed before a delete would. */
function applyAt(address: string, request: shardV1.ApplyRequest): Promise<shardV1.ApplyResponse__Output> {
  const rpc = new ShardNodeClient(address, credentials.createInsecure());
  return new Promise((resolve, reject) =>
    rpc.Apply(request, { deadline: Date.now() + 5_000 }, (error, response) => {
      rpc.close();
      if (error || response === undefined) reject(error ?? new Error('no response'));
      else resolve(response);
    }),
  );
}

// The cases that kill no process share one cluster: each writes counters of
// its own names and counts gauges and totals from what it found at its start.
describe('delete on a running cluster', () => {
  let tc: TestCluster;
  beforeAll(async () => {
    tc = await startCluster({ pairs: 2, metrics: true });
  });
  afterAll(async () => {
    await tc?.stop();
  });

  it(
    'every kind reads as never written at once; both nodes of every pair free the shards (gauges); the name makes a new counter at 0 with new shard ids',
    { timeout: 60_000 },
    async () => {
      const { client } = tc;
      // Shards held and tombstones on every copy, from the cases before this one.
      const sumOf = async (name: string): Promise<number> => (await perNode(tc, name)).reduce((sum, count) => sum + count, 0);
      const heldBefore = await sumOf('tally_node_shards');
      const droppedBefore = await sumOf('tally_node_dropped_shards');
      // The router exports a cause's series from its first deletion of that cause.
      const deletedBefore = await scrapeMetric(tc.routerMetricsPort, 'tally_counters_deleted_total', { cause: 'delete' }).catch(() => 0);
      await client.increment('doomed', 5, { idempotencyKey: 'first' });
      await client.setShards('doomed', 4);
      await client.incrementBatch(Array.from({ length: 40 }, () => ({ counter: 'doomed', amount: 1, idempotencyKey: null })));
      await client.configure('doomed:window', { window: { bucketMs: 1_000, retentionMs: 60_000 } });
      await client.increment('doomed:window', 3);
      await client.addDistinct('doomed:distinct', ['a', 'b', 'c']);
      await client.configure('doomed:likes', { membershipPartitions: 4 });
      await client.setMember('doomed:likes', 7n, true);
      await client.increment('kept', 9);
      const names = ['doomed', 'doomed:window', 'doomed:distinct', 'doomed:likes'];
      const oldIds = new Set<number>();
      for (const name of names) for (const placement of (await client.describe(name)).placements) oldIds.add(placement.shardId);
      expect(oldIds.size).toBe(4 + 1 + 1 + 4);
      expect((await client.read('doomed', { consistency: 'cached' })).total).toBe(45n);
      await waitForHealthy(client);
      // Shards with a total on each copy: doomed's 4, the window's, the liked partition's, kept's.
      const shardsHeld = async (): Promise<number> => (await sumOf('tally_node_shards')) - heldBefore;
      await waitFor(async () => (await shardsHeld()) === 2 * 7, { timeoutMs: 10_000, what: 'the shard gauges to count every shard' });
      const countersBefore = (await client.clusterStatus()).counters;

      for (const name of names) {
        const deletion = await client.deleteCounter(name);
        expect(deletion).toEqual({ counter: name, shards: name === 'doomed' || name === 'doomed:likes' ? 4 : 1, shardsPending: 0 });
      }
      // Gone from the directory: reads answer as for a name never written; the cache forgot it too.
      expect((await client.clusterStatus()).counters).toBe(countersBefore - 4);
      for (const consistency of ['exact', 'cached'] as const) {
        const read = await client.read('doomed', { consistency });
        expect([read.total, read.shards], consistency).toEqual([0n, 0]);
      }
      expect((await client.countDistinct('doomed:distinct')).estimate).toBe(0);
      expect(await client.isMember('doomed:likes', [7n])).toEqual([false]);
      expect((await rejection(client.describe('doomed'))).grpcCode).toBe(status.NOT_FOUND);
      expect((await rejection(client.readWindow('doomed:window', 60_000))).grpcCode).toBe(status.NOT_FOUND);
      expect((await client.read('kept')).total).toBe(9n);

      // Every node, follower included, freed them: fewer shards held, one tombstone per dropped shard of its pair.
      await waitFor(
        async () => {
          return (await sumOf('tally_node_dropped_shards')) - droppedBefore === 2 * oldIds.size;
        },
        { timeoutMs: 10_000, what: 'every node to count its tombstones' },
      );
      const dropped = await perNode(tc, 'tally_node_dropped_shards');
      // Primary and follower of a pair hold the same tombstones.
      expect(dropped[0]).toBe(dropped[1]);
      expect(dropped[2]).toBe(dropped[3]);
      // Only kept's shard is left, on its pair's two nodes.
      expect(await shardsHeld()).toBe(2);
      expect(await scrapeMetric(tc.routerMetricsPort, 'tally_counters_deleted_total', { cause: 'delete' })).toBe(deletedBefore + 4);
      expect(await scrapeMetric(tc.routerMetricsPort, 'tally_shard_tasks_pending', { kind: 'drop' })).toBe(0);

      // The name is free: a new counter, at 0, on shard ids never used before. An old key is not remembered.
      expect((await client.increment('doomed', 2, { idempotencyKey: 'first' })).applied).toBe(true);
      expect((await client.read('doomed')).total).toBe(2n);
      const reborn = await client.describe('doomed');
      expect(reborn.shards).toBe(1);
      expect(oldIds.has(reborn.placements[0]!.shardId)).toBe(false);
      expect(reborn.placements[0]!.shardId).toBeGreaterThan(Math.max(...oldIds));
      expect((await client.setMember('doomed:likes', 7n, true)).count).toBe(1n);
      expect((await client.reconcile()).shardsDrifting).toBe(0);
    },
  );

  it('an unknown counter is NOT_FOUND and a bad name INVALID_ARGUMENT, changing nothing; the CLI deletes and says so', async () => {
    const { client, cluster } = tc;
    const countersBefore = (await client.clusterStatus()).counters;
    await client.increment('here', 3);
    expect((await rejection(client.deleteCounter('nowhere'))).grpcCode).toBe(status.NOT_FOUND);
    expect((await rejection(client.deleteCounter(''))).grpcCode).toBe(status.INVALID_ARGUMENT);
    expect((await rejection(client.deleteCounter('x'.repeat(300)))).grpcCode).toBe(status.INVALID_ARGUMENT);
    expect((await client.read('here')).total).toBe(3n);
    expect((await client.clusterStatus()).counters).toBe(countersBefore + 1);
    const deleted = await tally(['delete', 'here', '--router', cluster.routerAddress]);
    expect(deleted.code).toBe(0);
    expect(deleted.stdout).toMatch(/deleted here \(1 shard freed\)/);
    const again = await tally(['delete', 'here', '--router', cluster.routerAddress]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/does not exist/);
    expect((await client.clusterStatus()).counters).toBe(countersBefore);
  });
});

describe('delete', () => {
  let tc: TestCluster | undefined;
  afterEach(async () => {
    await tc?.stop();
    tc = undefined;
  });

  it(
    'after SIGKILL and restart of every process nothing comes back, and an increment routed to an old shard is refused NOT_FOUND',
    { timeout: 90_000 },
    async () => {
      tc = await startCluster({ pairs: 1, metrics: true, nodeArgs: ['--checkpoint-interval-ms', '200'] });
      const { client, cluster } = tc;
      await client.increment('ghost', 1);
      await client.setShards('ghost', 3);
      await client.incrementBatch(Array.from({ length: 30 }, (_, index) => ({ counter: 'ghost', amount: 1, idempotencyKey: `g${index}` })));
      await client.addDistinct('ghost:distinct', ['x', 'y']);
      const ids = (await client.describe('ghost')).placements.map((placement) => placement.shardId);
      await waitForHealthy(client);
      await client.deleteCounter('ghost');
      await client.deleteCounter('ghost:distinct');
      // Half the nodes restart after the drops were folded into the checkpoint, half replay them from the log tail.
      await waitFor(async () => (await perNode(tc!, 'tally_checkpoint_lsn'))[0]! > 0, { timeoutMs: 10_000, what: 'a checkpoint' });
      await cluster.router.stop('SIGKILL');
      for (const node of cluster.nodes) await node.process.stop('SIGKILL');
      for (const node of cluster.nodes) await node.process.start();
      await cluster.router.start();
      const restarted = createTallyClient({ address: cluster.routerAddress, deadlineMs: 10_000 });
      try {
        await waitForHealthy(restarted);
        expect((await restarted.read('ghost')).total).toBe(0n);
        expect((await restarted.countDistinct('ghost:distinct')).estimate).toBe(0);
        expect((await restarted.reconcile()).shardsDrifting).toBe(0);
        expect(await perNode(tc, 'tally_node_dropped_shards')).toEqual([4, 4]);
        expect(await perNode(tc, 'tally_node_shards')).toEqual([0, 0]);

        // A router that routed before the delete: its write to an old shard is refused, on its own group only.
        const primary = (await restarted.clusterStatus()).nodes.find((node) => node.role === 'primary')!;
        const response = await applyAt(primary.address, {
          epoch: String(primary.epoch),
          groups: [
            { items: [{ shardId: String(ids[1]), amount: '5', idempotencyKey: Buffer.from('late'), routedShardCount: 3 }] },
            { items: [{ shardId: String(Math.max(...ids) + 1000), amount: '1', idempotencyKey: Buffer.alloc(0) }] },
          ],
        });
        expect(response.results[0]!.code).toBe(status.NOT_FOUND);
        expect(response.results[1]!.code).toBe(status.OK);
        expect((await restarted.read('ghost')).total).toBe(0n);
        expect(await perNode(tc, 'tally_node_dropped_shards')).toEqual([4, 4]);
      } finally {
        restarted.close();
      }
    },
  );

  it(
    'with a pair down the counter is gone at once; its drops reach the pair when it returns (shards pending meanwhile)',
    { timeout: 90_000 },
    async () => {
      tc = await startCluster({ pairs: 2, metrics: true, routerArgs: ['--failover-wait-ms', '300'] });
      const { client, cluster } = tc;
      await client.increment('split', 1);
      await client.setShards('split', 2);
      await client.incrementBatch(Array.from({ length: 20 }, () => ({ counter: 'split', amount: 1, idempotencyKey: null })));
      const pairs = (await client.describe('split')).placements.map((placement) => placement.pair).sort();
      expect(pairs).toEqual([0, 1]);
      await waitForHealthy(client);
      for (const role of ['primary', 'follower'] as const) await cluster.node(1, role).process.stop('SIGKILL');

      const deletion = await client.deleteCounter('split');
      expect(deletion.shards).toBe(2);
      expect(deletion.shardsPending).toBe(1);
      expect((await client.read('split')).total).toBe(0n);
      expect(await scrapeMetric(tc.routerMetricsPort, 'tally_shard_tasks_pending', { kind: 'drop' })).toBe(1);
      // The name is free at once, on pair 0's side or pair 1's alike (a new counter, new shards).
      await client.increment('split', 4, { idempotencyKey: null, deadlineMs: 10_000 }).catch(() => undefined);

      for (const role of ['primary', 'follower'] as const) await cluster.node(1, role).process.start();
      await waitForHealthy(client);
      await waitFor(async () => (await scrapeMetric(tc!.routerMetricsPort, 'tally_shard_tasks_pending', { kind: 'drop' })) === 0, {
        timeoutMs: 15_000,
        what: 'the owed drop to be confirmed',
      });
      await waitFor(async () => (await perNode(tc!, 'tally_node_dropped_shards')).every((count) => count === 1), {
        timeoutMs: 10_000,
        what: 'a tombstone on every node',
      });
      expect((await client.reconcile()).shardsDrifting).toBe(0);
    },
  );

  it('with tokens set only the admin token may delete', { timeout: 60_000 }, async () => {
    tc = await startCluster({ pairs: 1, secure: true });
    const { client, certDir, cluster } = tc;
    await client.increment('guarded', 1);
    const fs = await import('node:fs');
    const path = await import('node:path');
    const user: TallyClient = createTallyClient({
      address: cluster.routerAddress,
      tls: { ca: fs.readFileSync(path.join(certDir!, 'ca.crt')) },
      token: fs.readFileSync(path.join(certDir!, 'client.token'), 'utf8').trim(),
      attemptsMax: 1,
    });
    const anonymous: TallyClient = createTallyClient({
      address: cluster.routerAddress,
      tls: { ca: fs.readFileSync(path.join(certDir!, 'ca.crt')) },
      attemptsMax: 1,
    });
    try {
      expect((await rejection(user.deleteCounter('guarded'))).grpcCode).toBe(status.PERMISSION_DENIED);
      expect((await rejection(anonymous.deleteCounter('guarded'))).grpcCode).toBe(status.UNAUTHENTICATED);
      expect((await user.read('guarded')).total).toBe(1n);
      expect((await client.deleteCounter('guarded')).shards).toBe(1);
      expect((await user.read('guarded')).total).toBe(0n);
    } finally {
      user.close();
      anonymous.close();
    }
  });
});
