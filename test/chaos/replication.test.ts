// G1 with followers, G3 follower fallback, G5 and G8 under attack: SIGKILL
// and SIGSTOP real node processes during load, then check every counter
// against the client's ledger (ok <= total <= ok + unknown), every pair back
// in sync, and reconciliation reporting zero drift.
import { afterEach, describe, expect, it } from 'vitest';
import { credentials, status } from '@grpc/grpc-js';
import { ShardNodeClient } from '../../src/common/index.ts';
import { TallyError, type TallyClient } from '../../src/client/index.ts';
import { holdsFor, startCluster, waitFor, waitForHealthy, type TestCluster } from '../helpers/cluster.ts';
import { Ledger, classify, startLoad, expectNoDrift } from '../helpers/load.ts';
import type { RawRpcClient } from '../helpers/raw-client.ts';

const routerArgs = ['--failover-timeout-ms', '1500', '--follower-timeout-ms', '800'];

async function readFails(client: TallyClient, counter: string): Promise<boolean> {
  try {
    await client.read(counter, { deadlineMs: 2_000 });
    return false;
  } catch (error) {
    return error instanceof TallyError && error.grpcCode === status.UNAVAILABLE;
  }
}

describe('chaos: replication and failover', () => {
  let tc: TestCluster | undefined;
  afterEach(async () => {
    await tc?.stop();
    tc = undefined;
  });

  it(
    'kill a whole pair: primary and follower SIGKILLed together mid-load and restarted lose nothing acknowledged',
    { timeout: 90_000 },
    async () => {
      tc = await startCluster({ pairs: 2, routerArgs });
      const { client, cluster } = tc;
      await client.increment('hot', 1);
      await client.setShards('hot', 4);
      await waitForHealthy(client);
      const load = startLoad(client, {
        concurrency: 32,
        counters: () => (Math.random() < 0.5 ? 'hot' : `cold:${Math.floor(Math.random() * 10)}`),
      });
      load.ledger.record('hot', 1n, 'ok');
      await waitFor(() => load.ledger.okCalls > 300, { timeoutMs: 20_000, what: 'load' });
      await Promise.all([cluster.node(0, 'primary').process.stop('SIGKILL'), cluster.node(0, 'follower').process.stop('SIGKILL')]);
      const okAtKill = load.ledger.okCalls;
      // Half of hot's shards live on pair 1: unkeyed writes keep landing there.
      await waitFor(() => load.ledger.okCalls > okAtKill + 100, { timeoutMs: 20_000, what: 'writes to continue on the other pair' });
      await Promise.all([cluster.node(0, 'primary').process.start(), cluster.node(0, 'follower').process.start()]);
      await waitForHealthy(client);
      await load.stop();
      await load.ledger.expectWithinBounds(client);
      await expectNoDrift(client);
    },
  );

  it(
    'paused primary: SIGSTOP past the failover timeout, promotion, SIGCONT: the old primary acknowledges nothing under its old epoch',
    { timeout: 90_000 },
    async () => {
      tc = await startCluster({ pairs: 1, routerArgs });
      const { client, cluster } = tc;
      await client.increment('paused', 1);
      await client.setShards('paused', 2);
      await waitForHealthy(client);
      const before = await client.describe('paused');
      const oldPrimary = cluster.node(0, 'primary');
      const shardId = before.placements[0]!.shardId;
      const oldEpoch = before.placements[0]!.epoch;
      expect(before.placements[0]!.primary).toBe(oldPrimary.address);

      const load = startLoad(client, { concurrency: 16, counters: () => 'paused' });
      load.ledger.record('paused', 1n, 'ok');
      await waitFor(() => load.ledger.okCalls > 200, { timeoutMs: 20_000, what: 'load' });

      oldPrimary.process.signal('SIGSTOP');
      // A write that reaches the paused primary under its old epoch: it waits in the socket.
      const raw = new ShardNodeClient(oldPrimary.address, credentials.createInsecure()) as unknown as RawRpcClient;
      const fencedAmount = 1_000_000n;
      const staleWrite = new Promise<unknown>((resolve) => {
        raw.Apply!(
          {
            epoch: String(oldEpoch),
            groups: [{ items: [{ shardId: String(shardId), amount: fencedAmount.toString(), idempotencyKey: Buffer.alloc(0) }] }],
          },
          { deadline: Date.now() + 30_000 },
          (error: unknown, response: unknown) => resolve(error ?? response),
        );
      });
      try {
        await waitFor(async () => (await client.describe('paused')).placements[0]!.primary !== oldPrimary.address, {
          timeoutMs: 15_000,
          what: 'the follower to be promoted',
        });
        const okAtPromotion = load.ledger.okCalls;
        await waitFor(() => load.ledger.okCalls > okAtPromotion + 100, { timeoutMs: 15_000, what: 'writes to the new primary' });
      } finally {
        oldPrimary.process.signal('SIGCONT');
      }
      const outcome = await staleWrite;
      raw.close();
      // Refused or failed: never acknowledged.
      expect(outcome).toHaveProperty('code');
      expect([status.FAILED_PRECONDITION, status.UNAVAILABLE]).toContain((outcome as { code: number }).code);

      await waitForHealthy(client);
      await load.stop();
      const after = await client.describe('paused');
      expect(after.placements[0]!.epoch).toBeGreaterThan(oldEpoch);
      expect(after.placements[0]!.follower).toBe(oldPrimary.address);
      // The fenced million is in no copy: bounds hold with it counted nowhere.
      await load.ledger.expectWithinBounds(client);
      await expectNoDrift(client);
    },
  );

  it(
    'stale follower is never promoted: the shard stays UNAVAILABLE until its primary returns with everything',
    { timeout: 90_000 },
    async () => {
      tc = await startCluster({ pairs: 1, routerArgs });
      const { client, cluster } = tc;
      const ledger = new Ledger();
      await client.increment('stale', 1);
      ledger.record('stale', 1n, 'ok');
      await waitForHealthy(client);
      const primary = cluster.node(0, 'primary');
      const follower = cluster.node(0, 'follower');

      await follower.process.stop('SIGKILL');
      await waitFor(async () => !(await client.clusterStatus()).nodes[0]!.inSync, {
        timeoutMs: 10_000,
        what: 'the pair to fall out of sync',
      });
      for (let index = 0; index < 50; index++) {
        try {
          await client.increment('stale', 2);
          ledger.record('stale', 2n, 'ok');
        } catch (error) {
          ledger.record('stale', 2n, classify(error));
        }
      }
      expect(ledger.okCalls).toBeGreaterThan(40);

      await primary.process.stop('SIGKILL');
      // Longer than the failover timeout, and with the stale follower back: no promotion, no partial total.
      await holdsFor(() => readFails(client, 'stale'), 2_500);
      await follower.process.start();
      await holdsFor(
        async () => (await readFails(client, 'stale')) && (await client.describe('stale')).placements[0]!.primary === primary.address,
        2_000,
      );

      await primary.process.start();
      await waitForHealthy(client);
      await ledger.expectWithinBounds(client);
      expect((await client.read('stale')).total).toBeGreaterThanOrEqual(1n + 2n * 40n);
      await expectNoDrift(client);
    },
  );

  it(
    'back in sync under load: a follower restarted while increments keep flowing rejoins the pair without the load stopping, and holds everything acknowledged when its primary is killed at once',
    { timeout: 90_000 },
    async () => {
      // Under steady load a commit is always in flight, so a status rarely
      // shows the follower exactly caught up; the pair must still rejoin.
      tc = await startCluster({ pairs: 1, routerArgs });
      const { client, cluster } = tc;
      await client.increment('rejoin', 1);
      await client.setShards('rejoin', 4);
      await waitForHealthy(client);
      const load = startLoad(client, {
        concurrency: 16,
        batchSize: 100,
        counters: () => (Math.random() < 0.5 ? 'rejoin' : `rejoin:${Math.floor(Math.random() * 50)}`),
      });
      load.ledger.record('rejoin', 1n, 'ok');
      try {
        await waitFor(() => load.ledger.okCalls > 3_000, { timeoutMs: 20_000, what: 'load' });
        const follower = cluster.node(0, 'follower');
        await follower.process.stop('SIGKILL');
        await waitFor(async () => !(await client.clusterStatus()).nodes[0]!.inSync, {
          timeoutMs: 10_000,
          what: 'the pair to fall out of sync',
        });
        await follower.process.start();
        const okAtRestart = load.ledger.okCalls;
        await waitFor(async () => (await client.clusterStatus()).nodes[0]!.inSync, {
          timeoutMs: 15_000,
          what: 'the pair back in sync while the load goes on',
        });
        expect(load.ledger.okCalls, 'the load was still running when the pair rejoined').toBeGreaterThan(okAtRestart);
        // In sync is a promise: the follower holds everything acknowledged. Test it at once, by
        // killing the primary the moment the pair rejoined and letting the follower take over.
        const primary = cluster.node(0, 'primary');
        await primary.process.stop('SIGKILL');
        await waitFor(async () => (await client.describe('rejoin')).placements[0]!.primary === follower.address, {
          timeoutMs: 15_000,
          what: 'the rejoined follower promoted',
        });
        const okAtPromotion = load.ledger.okCalls;
        await waitFor(() => load.ledger.okCalls > okAtPromotion + 1_000, { timeoutMs: 20_000, what: 'writes on the promoted follower' });
        await primary.process.start();
        // Back in sync while the load goes on. No follower lag at all
        // (waitForHealthy) only once it stops: a pair under steady load
        // has a commit in flight at almost every moment.
        await waitFor(async () => (await client.clusterStatus()).pairs.every((pair) => pair.inSync), {
          timeoutMs: 30_000,
          what: 'the restarted node in sync with the promoted one while the load goes on',
        });
      } finally {
        await load.stop();
      }
      await waitForHealthy(client);
      await load.ledger.expectWithinBounds(client);
      await expectNoDrift(client);
    },
  );

  it('catch-up: a follower down for 10,000 increments catches up exactly (same totals, same last lsn)', { timeout: 90_000 }, async () => {
    tc = await startCluster({ pairs: 1, routerArgs });
    const { client, cluster } = tc;
    await client.increment('catchup', 1);
    await client.setShards('catchup', 4);
    await waitForHealthy(client);
    const follower = cluster.node(0, 'follower');
    await follower.process.stop('SIGKILL');
    await waitFor(async () => !(await client.clusterStatus()).nodes[0]!.inSync, {
      timeoutMs: 10_000,
      what: 'the pair to fall out of sync',
    });
    let written = 0;
    for (let batch = 0; batch < 20; batch++) {
      await client.incrementBatch(
        Array.from({ length: 500 }, (_, index) => ({ counter: index % 2 === 0 ? 'catchup' : `catchup:${index % 7}`, amount: 1 })),
      );
      written += 500;
    }
    expect(written).toBe(10_000);
    const primaryLsnBefore = (await client.clusterStatus()).nodes[0]!.lastLsn;
    expect((await client.clusterStatus()).nodes[1]!.health).toBe('UNREACHABLE');

    await follower.process.start();
    await waitForHealthy(client);
    const nodes = (await client.clusterStatus()).nodes;
    expect(nodes[0]!.lastLsn).toBe(primaryLsnBefore);
    expect(nodes[1]!.lastLsn).toBe(nodes[0]!.lastLsn);
    const report = await client.reconcile('catchup');
    expect(report.shardsDrifting).toBe(0);
    expect(report.shards).toHaveLength(4);
    for (const shard of report.shards) {
      expect(shard.followerMemory).toBe(shard.primaryMemory);
      expect(shard.followerLog).toBe(shard.primaryLog);
    }
    expect((await client.read('catchup')).total).toBe(5_001n);
    await expectNoDrift(client);
  });
});
