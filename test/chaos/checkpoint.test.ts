// The bounded log under attack: checkpoints fold the log every 50 ms while
// load runs and nodes are SIGKILLed (often mid-fold); restarts recover from
// checkpoint + tail with nothing acknowledged lost and no drift.
import { afterEach, describe, expect, it } from 'vitest';
import { startCluster, scrapeMetric, waitFor, waitForHealthy, type TestCluster } from '../helpers/cluster.ts';
import { startLoad } from '../helpers/load.ts';

describe('chaos: checkpoints', () => {
  let tc: TestCluster | undefined;
  afterEach(async () => {
    await tc?.stop();
    tc = undefined;
  });

  it(
    'SIGKILL during frequent checkpoints under load loses nothing acknowledged; restarts recover identical totals',
    { timeout: 120_000 },
    async () => {
      tc = await startCluster({
        pairs: 1,
        metrics: true,
        nodeArgs: ['--checkpoint-interval-ms', '50'],
        routerArgs: ['--failover-timeout-ms', '1500', '--follower-timeout-ms', '800'],
      });
      const { client, cluster } = tc;
      await client.increment('folded', 1, { idempotencyKey: null });
      await client.setShards('folded', 3);
      await waitForHealthy(client);
      const load = startLoad(client, {
        concurrency: 16,
        counters: () => (Math.random() < 0.8 ? 'folded' : `folded:${Math.floor(Math.random() * 5)}`),
      });
      load.ledger.record('folded', 1n, 'ok');
      for (let round = 0; round < 4; round++) {
        await waitFor(() => load.ledger.okCalls > 300 * (round + 1), { timeoutMs: 30_000, what: 'load' });
        const victim = cluster.nodes[round % 2]!;
        await victim.process.stop('SIGKILL');
        await victim.process.start();
      }
      try {
        await waitForHealthy(client);
      } catch (error) {
        console.log(JSON.stringify(await client.clusterStatus(), (_k, v) => (typeof v === 'bigint' ? v.toString() : v), 1));
        console.log(
          tc.logs
            .filter((line) => !line.includes('"msg":"ready"'))
            .slice(-30)
            .join('\n'),
        );
        throw error;
      }
      await load.stop();
      for (const node of cluster.nodes) expect(await scrapeMetric(node.metricsPort, 'tally_checkpoint_lsn')).toBeGreaterThan(0);
      await load.ledger.expectWithinBounds(client);
      const report = await client.reconcile();
      expect(report.shardsDrifting).toBe(0);

      // A clean restart of everything recovers the very same totals from checkpoint + tail.
      const names = load.ledger.counters();
      const before = await client.readMany(names);
      await cluster.stop('SIGTERM');
      await cluster.start();
      const after = await waitFor(() => client.readMany(names), { timeoutMs: 15_000, what: 'the restarted cluster' });
      expect(after.map((read) => read.total)).toEqual(before.map((read) => read.total));
    },
  );

  it(
    'reconcile under load: while checkpoints fold a long log every 50 ms, every reconciliation during the load reports no drift',
    { timeout: 60_000 },
    async () => {
      // Out of sync (follower down) the primary keeps 30,000 entries unfolded
      // and folds the rest as they age: reconciliation replays a long tail in
      // several slices while the checkpointer deletes rows under it.
      tc = await startCluster({
        pairs: 1,
        metrics: true,
        nodeArgs: ['--checkpoint-interval-ms', '50', '--checkpoint-retain-entries', '30000'],
        routerArgs: ['--follower-timeout-ms', '800'],
      });
      const { client, cluster } = tc;
      await client.increment('busy', 1, { idempotencyKey: null });
      await client.setShards('busy', 4);
      await waitForHealthy(client);
      await cluster.node(0, 'follower').process.stop('SIGKILL');
      for (let batch = 0; batch < 10; batch++)
        await client.incrementBatch(Array.from({ length: 5_000 }, () => ({ counter: 'busy', amount: 1, idempotencyKey: null })));
      const load = startLoad(client, {
        concurrency: 16,
        counters: () => (Math.random() < 0.8 ? 'busy' : `busy:${Math.floor(Math.random() * 5)}`),
      });
      try {
        for (let round = 0; round < 5; round++) {
          // Push the log on, so the checkpointer has rows to fold during the replay.
          await client.incrementBatch(Array.from({ length: 5_000 }, () => ({ counter: 'busy', amount: 1, idempotencyKey: null })));
          const okBefore = load.ledger.okCalls;
          const report = await client.reconcile();
          expect(report.shardsChecked).toBeGreaterThan(0);
          expect(
            report.shardsDrifting,
            `round ${round}: ${JSON.stringify(report.shards, (_key, value) => (typeof value === 'bigint' ? value.toString() : value))}`,
          ).toBe(0);
          // The load really ran.
          await waitFor(() => load.ledger.okCalls > okBefore + 20, { timeoutMs: 10_000, what: 'load during reconcile' });
        }
        expect(await scrapeMetric(tc.routerMetricsPort, 'tally_reconcile_drift')).toBe(0);
      } finally {
        await load.stop();
      }
    },
  );
});
