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

  it('checkpoint: SIGKILL during frequent checkpoints under load loses nothing acknowledged; restarts recover identical totals', { timeout: 120_000 }, async () => {
    tc = await startCluster({ pairs: 1, metrics: true, nodeArgs: ['--checkpoint-interval-ms', '50'], routerArgs: ['--failover-timeout-ms', '1500', '--follower-timeout-ms', '800'] });
    const { client, cluster } = tc;
    await client.increment('folded', 1, { idempotencyKey: null });
    await client.setShards('folded', 3);
    await waitForHealthy(client);
    const load = startLoad(client, { concurrency: 16, counters: () => (Math.random() < 0.8 ? 'folded' : `folded:${Math.floor(Math.random() * 5)}`) });
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
      console.log(tc.logs.filter((line) => !line.includes('"msg":"ready"')).slice(-30).join('\n'));
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
  });
});
