// G1 and G3 against a primary restored from a recent copy of its own disk
// (same identity, a shorter log) while its supervisor changes: the router is
// killed with it, so the new supervisor knows only the directory's floor,
// which is written at most once a second. The follower holds entries of the
// primary's own epoch past the copy's end: the primary must step down (never
// commit over them, never answer a read) and the pair fail over to it.
// Before, the restored primary was kept, refused every read and write for
// good, and the pair never healed.
import fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { startCluster, waitFor, waitForHealthy, type TestCluster } from '../helpers/cluster.ts';
import { Ledger, classify } from '../helpers/load.ts';
import { makeTempDir, removeTempDir } from '../helpers/temp-dir.ts';

// A slow health check: the directory's floor (acked_lsn) is recorded at most
// once a round, so the writes after the copy are not in it when the router dies.
const routerArgs = ['--health-interval-ms', '5000', '--failover-timeout-ms', '1500', '--follower-timeout-ms', '800'];
const nodeArgs = ['--checkpoint-interval-ms', '600000'];

async function keyed(ledger: Ledger, increment: (key: string) => Promise<unknown>, from: number, count: number): Promise<void> {
  for (let index = from; index < from + count; index++) {
    try {
      await increment(`restored-${index}`);
      ledger.record('restored', 1n, 'ok');
    } catch (error) {
      ledger.record('restored', 1n, classify(error));
    }
  }
}

describe('chaos: a primary restored from an old copy of its disk', () => {
  let tc: TestCluster | undefined;
  let copyDir: string | undefined;
  afterEach(async () => {
    await tc?.stop();
    tc = undefined;
    if (copyDir !== undefined) removeTempDir(copyDir);
    copyDir = undefined;
  });

  it(
    'the primary back on a copy of its own disk taken before acknowledged writes, with a new supervisor, steps down; its follower takes over and nothing acknowledged is lost',
    { timeout: 90_000 },
    async () => {
      tc = await startCluster({ pairs: 1, routerArgs, nodeArgs });
      const { client, cluster } = tc;
      const ledger = new Ledger();
      const increment = (key: string) => client.increment('restored', 1, { idempotencyKey: key, deadlineMs: 3_000 });
      await keyed(ledger, increment, 0, 40);
      await waitForHealthy(client);
      const primary = cluster.node(0, 'primary');
      const follower = cluster.node(0, 'follower');

      // A consistent copy: the primary paused between commits.
      copyDir = makeTempDir('restored-copy');
      primary.process.signal('SIGSTOP');
      try {
        fs.cpSync(primary.dataDir, copyDir, { recursive: true });
      } finally {
        primary.process.signal('SIGCONT');
      }
      // Acknowledged in sync: both logs hold them; the copy does not.
      await keyed(ledger, increment, 40, 60);
      expect(ledger.okCalls).toBeGreaterThan(90);

      await Promise.all([primary.process.stop('SIGKILL'), cluster.router.stop('SIGKILL')]);
      fs.rmSync(primary.dataDir, { recursive: true, force: true });
      fs.cpSync(copyDir, primary.dataDir, { recursive: true });
      await primary.process.start();
      await cluster.router.start();

      await waitFor(async () => (await client.describe('restored')).placements[0]!.primary === follower.address, {
        timeoutMs: 30_000,
        what: 'the follower, which holds the acknowledged writes, to take over',
      });
      expect(tc.logs.some((line) => line.startsWith(`[${primary.process.name}]`) && line.includes('stepping down from serving'))).toBe(
        true,
      );
      await waitForHealthy(client, 30_000);
      await ledger.expectWithinBounds(client);
      expect((await client.read('restored')).total).toBe(ledger.ok.get('restored'));
      // The retries of every key count once.
      await keyed(new Ledger(), increment, 0, 100);
      expect((await client.read('restored')).total).toBe(100n);
    },
  );
});
