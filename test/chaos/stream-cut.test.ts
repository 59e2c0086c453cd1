// A router->node stream cut mid-frame, with frames the node has applied but
// whose answers have not reached the router: the router's own NodePool
// (src/router/nodes) writes through a TCP proxy to a real primary, the
// proxy holds answers back and is then dropped. Every frame in flight
// must fail with an unknown outcome (never not-applied), and the node's
// total must satisfy ok <= total <= ok + unknown.
import { afterEach, describe, expect, it } from 'vitest';
import { NodePool } from '../../src/router/nodes/index.ts';
import { monotonicNowMs, TallyError } from '../../src/wire/index.ts';
import { startCluster, waitFor, waitForHealthy, type TestCluster } from '../helpers/cluster.ts';
import { startRouterProxy, startStallableProxy } from '../helpers/router-proxy.ts';
import { pause } from '../helpers/pause.ts';

describe('chaos: a router-node stream cut mid-frame', () => {
  let tc: TestCluster | undefined;
  afterEach(async () => {
    await tc?.stop();
    tc = undefined;
  });

  it(
    'frames applied by the node whose answers are cut off fail as unknown outcome, never not-applied; ok <= total <= ok + unknown',
    { timeout: 60_000 },
    async () => {
      tc = await startCluster({ pairs: 1 });
      const { client } = tc;
      await client.increment('cut', 1);
      await waitForHealthy(client);
      const placement = (await client.describe('cut')).placements[0]!;
      // Answers held back 300 ms: at the cut, frames the node committed are still unanswered.
      const proxy = await startRouterProxy(placement.primary, 300);
      const pool = new NodePool(5_000, () => BigInt(placement.epoch), { onCall: () => undefined });
      const { sender } = pool.get(proxy.address);
      let ok = 1n;
      let unknown = 0n;
      let running = true;
      const writers = Array.from({ length: 8 }, async (_, writer) => {
        const amount = BigInt(writer + 1);
        while (running) {
          try {
            const result = await sender.send([{ shardId: placement.shardId, amount: amount.toString(), idempotencyKey: Buffer.alloc(0) }]);
            expect(result.code).toBe(0);
            ok += amount;
          } catch (error) {
            expect(error).toBeInstanceOf(TallyError);
            if (!(error as TallyError).certainlyNotApplied) unknown += amount;
            await pause(20);
          }
        }
      });
      await pause(1_500);
      await proxy.kill();
      await pause(500);
      running = false;
      await Promise.all(writers);
      pool.close();
      const total = (await client.read('cut')).total;
      expect(total).toBeGreaterThanOrEqual(ok);
      expect(total).toBeLessThanOrEqual(ok + unknown);
      // The cut did land mid-frame: the node holds increments the router never heard answered.
      expect(total).toBeGreaterThan(ok);
      expect(unknown).toBeGreaterThan(0n);
      // Calls after the cut may be refused as not applied: the proxy is gone, nothing was sent (counted in neither bound).
    },
  );

  it(
    'a connection that goes silent (blackholed) costs one frame deadline, not keepalive: the stream reopens on a new connection and writes go on',
    { timeout: 60_000 },
    async () => {
      tc = await startCluster({ pairs: 1 });
      const { client } = tc;
      await client.increment('stall', 1);
      await waitForHealthy(client);
      const placement = (await client.describe('stall')).placements[0]!;
      const proxy = await startStallableProxy(placement.primary);
      // Frame deadline 300 ms; keepalive would notice a dead connection only after 10 + 5 s.
      const pool = new NodePool(300, () => BigInt(placement.epoch), { onCall: () => undefined });
      const { sender } = pool.get(proxy.address);
      let ok = 1n;
      let unknown = 0n;
      let lastOkMs = monotonicNowMs();
      let running = true;
      const writers = Array.from({ length: 4 }, async () => {
        while (running) {
          try {
            await sender.send([{ shardId: placement.shardId, amount: '1', idempotencyKey: Buffer.alloc(0) }]);
            ok += 1n;
            lastOkMs = monotonicNowMs();
          } catch (error) {
            if (!(error as TallyError).certainlyNotApplied) unknown += 1n;
            await pause(20);
          }
        }
      });
      await pause(1_000);
      const stalledAtMs = monotonicNowMs();
      proxy.stall();
      await waitFor(() => lastOkMs > stalledAtMs + 50, { timeoutMs: 5_000, what: 'a write acknowledged after the stall' });
      const recoveredMs = lastOkMs - stalledAtMs;
      const okAtRecovery = ok;
      await waitFor(() => ok > okAtRecovery + 50n, { timeoutMs: 5_000, what: 'writes to go on over the new connection' });
      running = false;
      await Promise.all(writers);
      pool.close();
      await proxy.kill();
      expect(recoveredMs).toBeLessThan(3_000);
      expect(unknown).toBeGreaterThan(0n);
      const total = (await client.read('stall')).total;
      expect(total).toBeGreaterThanOrEqual(ok);
      expect(total).toBeLessThanOrEqual(ok + unknown);
    },
  );
});
