// G8 and G1 against a value that moves on a disk: while a follower is paused,
// stored amounts in its log change (a page that passes SQLite's quick_check,
// a row that still looks like one a writer could make). Before checksums it
// rejoined, was promoted and served 123 for 120 acknowledged. Now its
// scrubber reads the log, the checksum fails, the node stops and its log is
// set aside at the next start; it is refilled from its primary, and promoted
// it serves exactly what was acknowledged.
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { startCluster, waitFor, waitForHealthy, type TestCluster } from '../helpers/cluster.ts';
import { Ledger, classify } from '../helpers/load.ts';

const routerArgs = ['--failover-timeout-ms', '1500', '--follower-timeout-ms', '800'];
// Checkpoints far apart (the keyed rows stay rows of the log); a scrubber fast enough to pass in well under a second.
const nodeArgs = ['--checkpoint-interval-ms', '600000', '--scrub-entries-per-second', '100000'];

/** Adds `by` to the amounts of the newest `rows` keyed rows of a stopped or paused node's log, as a disk that moved them. */
function moveStoredAmounts(dataDir: string, rows: number, by: number): number {
  const db = new Database(path.join(dataDir, 'node.sqlite'));
  try {
    db.pragma('busy_timeout = 5000');
    return db
      .prepare(`UPDATE log SET amount = amount + ? WHERE lsn IN (SELECT lsn FROM log WHERE idem_key IS NOT NULL ORDER BY lsn DESC LIMIT ?)`)
      .run(by, rows).changes;
  } finally {
    db.close();
  }
}

describe('chaos: a stored value moved on a disk', () => {
  let tc: TestCluster | undefined;
  afterEach(async () => {
    await tc?.stop();
    tc = undefined;
  });

  it(
    'flipped value: amounts moved on a paused follower are found by its scrubber; it stops, is refilled from its primary, and promoted serves exactly what was acknowledged',
    { timeout: 90_000 },
    async () => {
      tc = await startCluster({ pairs: 1, routerArgs, nodeArgs });
      const { client, cluster } = tc;
      const ledger = new Ledger();
      for (let index = 0; index < 120; index++) {
        try {
          await client.increment('flipped', 1, { idempotencyKey: `flipped-${index}` });
          ledger.record('flipped', 1n, 'ok');
        } catch (error) {
          ledger.record('flipped', 1n, classify(error));
        }
      }
      await waitForHealthy(client);
      const primary = cluster.node(0, 'primary');
      const follower = cluster.node(0, 'follower');
      const followerIdBefore = (await client.clusterStatus()).nodes.find((node) => node.address === follower.address)!.nodeId;

      follower.process.signal('SIGSTOP');
      let moved: number;
      try {
        moved = moveStoredAmounts(follower.dataDir, 3, 1);
      } finally {
        follower.process.signal('SIGCONT');
      }
      expect(moved).toBe(3);
      await waitFor(() => !follower.process.running, { timeoutMs: 20_000, what: 'the follower to stop on the damage its scrubber found' });
      const followerLines = tc.logs.filter((line) => line.startsWith(`[${follower.process.name}]`));
      expect(followerLines.some((line) => line.includes('scrub found the log damaged') && line.includes('checksum'))).toBe(true);

      await follower.process.start();
      expect(fs.readdirSync(follower.dataDir).some((name) => name.includes('.corrupt-'))).toBe(true);
      // Refilled while the pair is idle: the primary asks its follower where it stands once sync is dropped.
      await waitForHealthy(client, 30_000);
      const followerAfter = (await client.clusterStatus()).nodes.find((node) => node.address === follower.address)!;
      expect(followerAfter.nodeId, 'the damaged log was set aside: a new identity, refilled').not.toBe(followerIdBefore);

      // The refilled follower alone.
      await primary.process.stop('SIGKILL');
      await waitFor(async () => (await client.describe('flipped')).placements[0]!.primary === follower.address, {
        timeoutMs: 15_000,
        what: 'the refilled follower promoted',
      });
      await ledger.expectWithinBounds(client);
      expect((await client.read('flipped')).total).toBe(ledger.ok.get('flipped'));
    },
  );
});
