// G1 under a crash in the middle of a commit: an LD_PRELOAD shim SIGKILLs a
// node between SQLite's two writes of one write-ahead frame (its header, then
// its page), so the file ends in a commit cut short, exactly as a crash
// leaves it. That commit was never acknowledged (a commit is acknowledged
// after its fsync); the log must be served as it is, never set aside: on a
// pair out of sync it holds the only copy of what was acknowledged.
import fs from 'node:fs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { TallyClient } from '../../src/client/index.ts';
import { startCluster, waitFor, waitForHealthy, type TestCluster } from '../helpers/cluster.ts';
import { buildMidFrameKiller, type MidFrameKiller } from '../helpers/kill-mid-frame.ts';
import { Ledger, classify, expectNoDrift, startLoad } from '../helpers/load.ts';

// Checkpoints far apart: the commits stay in the write-ahead file, where the crash cuts one short.
const nodeArgs = ['--checkpoint-interval-ms', '600000'];
const routerArgs = ['--failover-timeout-ms', '1500', '--follower-timeout-ms', '800'];

function filesSetAside(dataDir: string): string[] {
  return fs.readdirSync(dataDir).filter((name) => name.includes('.corrupt-') || name.endsWith('-corrupt'));
}

/** The log identity the router reports for the node at address, once it reports one (a node just restarted may show none yet). */
async function nodeIdAt(client: TallyClient, address: string): Promise<string> {
  return waitFor(
    async () => {
      const nodeId = (await client.clusterStatus()).nodes.find((node) => node.address === address)?.nodeId;
      return nodeId === undefined || nodeId === '' ? undefined : nodeId;
    },
    { timeoutMs: 10_000, what: `the identity of ${address}` },
  );
}

/** Keyed increments one at a time, each recorded ok, unknown or failed; returns the keys of the unknown ones. */
async function keyedIncrements(client: TallyClient, ledger: Ledger, counter: string, from: number, count: number): Promise<string[]> {
  const unknownKeys: string[] = [];
  for (let index = from; index < from + count; index++) {
    const key = `${counter}:${index}`;
    try {
      await client.increment(counter, 1, { idempotencyKey: key, deadlineMs: 2_000 });
      ledger.record(counter, 1n, 'ok');
    } catch (error) {
      const outcome = classify(error);
      ledger.record(counter, 1n, outcome);
      if (outcome === 'unknown') unknownKeys.push(key);
    }
  }
  return unknownKeys;
}

describe('chaos: a crash in the middle of a write-ahead frame', () => {
  let killer: MidFrameKiller;
  let tc: TestCluster | undefined;
  beforeAll(() => {
    killer = buildMidFrameKiller();
  });
  afterAll(() => killer.dispose());
  afterEach(async () => {
    killer.disarm();
    await tc?.stop();
    tc = undefined;
  });

  it(
    'crash mid-frame: a primary acknowledging alone (its follower paused) is killed between a frame header and its page; it comes back on its own log, nothing acknowledged is lost, and the pair heals',
    { timeout: 90_000 },
    async () => {
      tc = await startCluster({
        pairs: 1,
        routerArgs,
        nodeArgs,
        envOf: (name) => (name === 'node-0-primary' ? killer.env : undefined),
      });
      const { client, cluster } = tc;
      const primary = cluster.node(0, 'primary');
      const follower = cluster.node(0, 'follower');
      const ledger = new Ledger();
      await client.increment('midframe', 1, { idempotencyKey: 'midframe:first' });
      ledger.record('midframe', 1n, 'ok');
      await waitForHealthy(client);
      const primaryId = await nodeIdAt(client, primary.address);

      follower.process.signal('SIGSTOP');
      try {
        await waitFor(async () => !(await client.clusterStatus()).nodes[0]!.inSync, {
          timeoutMs: 10_000,
          what: 'the pair out of sync: the primary acknowledges alone',
        });
        const before = await keyedIncrements(client, ledger, 'midframe', 0, 150);
        expect(ledger.okCalls, ledger.topReasons()).toBeGreaterThanOrEqual(140);

        killer.arm();
        const unknownKeys = [...before, ...(await keyedIncrements(client, ledger, 'midframe', 150, 1))];
        await waitFor(() => !primary.process.running, { timeoutMs: 10_000, what: 'the primary killed mid-frame' });
        killer.disarm();

        await primary.process.start();
        expect(filesSetAside(primary.dataDir), 'the log must be served as it is, not set aside').toEqual([]);
        expect(tc.logs.some((line) => line.startsWith(`[${primary.process.name}]`) && line.includes('cut short'))).toBe(true);
        expect(tc.logs.some((line) => line.startsWith(`[${primary.process.name}]`) && line.includes('log failed its checks'))).toBe(false);
        // The primary alone holds what it acknowledged: it serves every bit of it before its follower is back.
        await waitFor(() => client.read('midframe', { deadlineMs: 2_000 }), {
          timeoutMs: 15_000,
          what: 'an exact read from the primary alone',
        });
        await ledger.expectWithinBounds(client);
        expect(await nodeIdAt(client, primary.address)).toBe(primaryId);

        // The unknown attempt retried with its key counts at most once.
        for (const key of unknownKeys) {
          await client.increment('midframe', 1, { idempotencyKey: key, deadlineMs: 5_000 });
          ledger.record('midframe', 1n, 'ok');
          ledger.unknown.set('midframe', (ledger.unknown.get('midframe') ?? 0n) - 1n);
        }
      } finally {
        follower.process.signal('SIGCONT');
      }
      await waitForHealthy(client, 30_000);
      await ledger.expectWithinBounds(client);
      await expectNoDrift(client);
    },
  );

  it(
    'crash mid-frame: everything killed at once under load (the primary between a frame header and its page, then its follower and the router): every node comes back on its own log, nothing acknowledged is lost',
    { timeout: 90_000 },
    async () => {
      tc = await startCluster({
        pairs: 1,
        routerArgs,
        nodeArgs,
        envOf: (name) => (name.startsWith('node-') ? killer.env : undefined),
      });
      const { client, cluster } = tc;
      const primary = cluster.node(0, 'primary');
      const follower = cluster.node(0, 'follower');
      await client.increment('midframe:load', 1, { idempotencyKey: null });
      await client.setShards('midframe:load', 4);
      await waitForHealthy(client);
      const idsBefore = [await nodeIdAt(client, primary.address), await nodeIdAt(client, follower.address)];

      const load = startLoad(client, { concurrency: 8, batchSize: 10, counters: () => 'midframe:load' });
      load.ledger.record('midframe:load', 1n, 'ok');
      await waitFor(() => load.ledger.okCalls > 300, { timeoutMs: 20_000, what: 'acknowledged load' });
      killer.arm();
      await waitFor(() => !primary.process.running, { timeoutMs: 10_000, what: 'the primary killed mid-frame' });
      await Promise.all([follower.process.stop('SIGKILL'), cluster.router.stop('SIGKILL')]);
      await load.stop();
      killer.disarm();

      await Promise.all([primary.process.start(), follower.process.start()]);
      await cluster.router.start();
      await waitForHealthy(client, 30_000);
      for (const node of [primary, follower]) expect(filesSetAside(node.dataDir), node.process.name).toEqual([]);
      expect(tc.logs.some((line) => line.includes('log failed its checks'))).toBe(false);
      const idsAfter = [await nodeIdAt(client, primary.address), await nodeIdAt(client, follower.address)];
      expect(idsAfter.sort()).toEqual(idsBefore.sort());
      await load.ledger.expectWithinBounds(client);
      await expectNoDrift(client);
    },
  );
});
