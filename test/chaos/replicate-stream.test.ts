// The primary-to-follower ReplicateStream under attack, on real processes
// and real logs: a follower paused (SIGSTOP) with frames in flight, then
// resumed; a primary killed with frames in flight and the follower
// promoted. A client-side ledger must hold ok <= total <= ok + unknown for
// every counter, and the two logs must agree (no drift) once it is over.
import { afterEach, describe, expect, it } from 'vitest';
import { startCluster, waitFor, waitForHealthy, type TestCluster } from '../helpers/cluster.ts';
import { expectNoDrift, startLoad } from '../helpers/load.ts';
import { pause } from '../helpers/pause.ts';

const routerArgs = ['--failover-timeout-ms', '1500', '--follower-timeout-ms', '800'];

describe('chaos: the replication stream', () => {
  let tc: TestCluster | undefined;
  afterEach(async () => {
    await tc?.stop();
    tc = undefined;
  });

  it(
    'a follower paused mid-stream (frames in flight) and resumed: the stream is abandoned on its deadline and reopened, nothing acknowledged is lost, the logs agree',
    { timeout: 60_000 },
    async () => {
      tc = await startCluster({ pairs: 1, routerArgs });
      const { client, cluster } = tc;
      await client.increment('paused', 1);
      await client.setShards('paused', 2);
      await waitForHealthy(client);
      const load = startLoad(client, {
        concurrency: 8,
        batchSize: 20,
        counters: () => (Math.random() < 0.5 ? 'paused' : `paused:${Math.floor(Math.random() * 10)}`),
      });
      load.ledger.record('paused', 1n, 'ok');
      const follower = cluster.node(0, 'follower');
      try {
        await waitFor(() => load.ledger.okCalls > 200, { timeoutMs: 15_000, what: 'load' });
        follower.process.signal('SIGSTOP');
        // Past the frame deadline (1 s) and the follower timeout: the primary abandons the stream, the pair leaves sync.
        await pause(2_500);
        const okWhilePaused = load.ledger.okCalls;
        follower.process.signal('SIGCONT');
        await waitFor(async () => (await client.clusterStatus()).nodes[0]!.inSync, { timeoutMs: 20_000, what: 'the pair back in sync' });
        await waitFor(() => load.ledger.okCalls > okWhilePaused + 100, { timeoutMs: 10_000, what: 'writes after the resume' });
      } finally {
        follower.process.signal('SIGCONT');
        await load.stop();
      }
      await load.ledger.expectWithinBounds(client);
      await expectNoDrift(client);
    },
  );

  it(
    'a primary killed with frames in flight: the follower is promoted holding everything acknowledged (ok <= total <= ok + unknown)',
    { timeout: 60_000 },
    async () => {
      tc = await startCluster({ pairs: 1, routerArgs });
      const { client, cluster } = tc;
      await client.increment('inflight', 1);
      await client.setShards('inflight', 2);
      await waitForHealthy(client);
      const load = startLoad(client, {
        concurrency: 16,
        batchSize: 50,
        counters: () => (Math.random() < 0.5 ? 'inflight' : `inflight:${Math.floor(Math.random() * 20)}`),
      });
      load.ledger.record('inflight', 1n, 'ok');
      const primary = cluster.node(0, 'primary');
      const follower = cluster.node(0, 'follower');
      try {
        await waitFor(() => load.ledger.okCalls > 500, { timeoutMs: 15_000, what: 'load' });
        await primary.process.stop('SIGKILL');
        await waitFor(async () => (await client.describe('inflight')).placements[0]!.primary === follower.address, {
          timeoutMs: 15_000,
          what: 'the follower promoted',
        });
        const okAtPromotion = load.ledger.okCalls;
        await waitFor(() => load.ledger.okCalls > okAtPromotion + 50, { timeoutMs: 10_000, what: 'writes on the promoted follower' });
      } finally {
        await load.stop();
      }
      await load.ledger.expectWithinBounds(client);
      await primary.process.start();
      await waitForHealthy(client);
      await load.ledger.expectWithinBounds(client);
      await expectNoDrift(client);
      expect(load.ledger.okCalls).toBeGreaterThan(500);
    },
  );
});
