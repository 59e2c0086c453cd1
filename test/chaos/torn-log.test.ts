// G1, G3 and G11 under a damaged disk: a node is SIGKILLed with its partner
// under acknowledged load, a frame of its log's write-ahead file is torn under
// later commits or a page of its log is overwritten (a corrupted page), and it
// comes back first, alone. No exact read may go below what was acknowledged,
// and once its partner returns the damaged node must be refilled, never
// trusted. A commit cut short after the last one (what a crash mid-write
// leaves) is not damage: that log is served as it is, under its identity.
import { describe, expect, it } from 'vitest';
import { status } from '@grpc/grpc-js';
import { TallyError, type TallyClient } from '../../src/client/index.ts';
import type { NodeProcess } from '../../src/cluster/local-cluster.ts';
import { holdsFor, startCluster, waitFor, waitForHealthy, type TestCluster } from '../helpers/cluster.ts';
import { expectNoDrift, startLoad, type Ledger } from '../helpers/load.ts';
import { corruptLogPage as corruptPage, cutWalMidFrame, logFileIn, tearWal as tearLog } from '../helpers/log-damage.ts';

// Checkpoints far apart: the rows written under load stay in the log's tail, where replay reads them.
const nodeArgs = ['--checkpoint-interval-ms', '600000'];
const routerArgs = ['--failover-timeout-ms', '1500', '--follower-timeout-ms', '800'];
/** Commits after the torn frame: more than the load can leave unanswered, so some were acknowledged. */
const commitsCut = 20;

function logFile(node: NodeProcess): string {
  return logFileIn(node.dataDir);
}

function tearWal(node: NodeProcess): string {
  const cut = tearLog(node.dataDir, commitsCut);
  if (cut === undefined) throw new Error(`${logFile(node)}-wal holds no commit to tear`);
  return cut;
}

function corruptLogPage(node: NodeProcess, seed: number): string {
  return corruptPage(node.dataDir, seed);
}

function cutMidFrame(node: NodeProcess): string {
  const cut = cutWalMidFrame(node.dataDir);
  if (cut === undefined) throw new Error(`${logFile(node)}-wal holds no frame to cut`);
  return cut;
}

function isUnavailable(error: unknown): boolean {
  return error instanceof TallyError && error.grpcCode === status.UNAVAILABLE;
}

/** Exact reads for durationMs: each must fail UNAVAILABLE or return at least what was acknowledged. */
async function expectNoReadBelowAcknowledged(client: TallyClient, ledger: Ledger, durationMs: number): Promise<void> {
  const counters = ledger.counters();
  const seen: string[] = [];
  await holdsFor(
    async () => {
      try {
        for (const read of await client.readMany(counters, { deadlineMs: 2_000 })) {
          const ok = ledger.ok.get(read.counter) ?? 0n;
          if (read.total < ok) seen.push(`${read.counter}: exact read ${read.total}, acknowledged ${ok}`);
        }
      } catch (error) {
        if (!isUnavailable(error)) seen.push(`read failed other than UNAVAILABLE: ${(error as Error).message}`);
      }
      return seen.length === 0;
    },
    durationMs,
    { intervalMs: 100, what: 'exact reads at or above the acknowledged' },
  ).catch(() => undefined);
  expect(seen.slice(0, 3)).toEqual([]);
}

interface Attack {
  name: string;
  victim: 'primary' | 'follower';
  damage: (node: NodeProcess) => string;
  setAside: boolean;
}

// Each attack on a cluster of its own, all at once: most of an attack is
// waiting out a restart, a refill and a failover, so four in a row spent four
// times the wall time on waiting.
describe.concurrent('chaos: torn and corrupted logs', () => {
  const attacks: Attack[] = [
    { name: 'a write-ahead frame torn under later commits on the follower', victim: 'follower', damage: tearWal, setAside: true },
    { name: 'a write-ahead frame torn under later commits on the primary', victim: 'primary', damage: tearWal, setAside: true },
    { name: 'a corrupted log page on the primary', victim: 'primary', damage: (node) => corruptLogPage(node, 25), setAside: true },
    { name: 'a commit cut short mid-frame after the last one on the primary', victim: 'primary', damage: cutMidFrame, setAside: false },
  ];
  for (const attack of attacks) {
    it(
      `torn log: ${attack.name}, both nodes killed under load and the damaged one back first: no exact read below the acknowledged, and ${attack.setAside ? 'the damaged log is refilled from its partner' : 'the log is served as it is, under its identity'}`,
      { timeout: 40_000 },
      async () => {
        const tc: TestCluster = await startCluster({ pairs: 1, routerArgs, nodeArgs });
        try {
          await attackOn(tc, attack);
        } finally {
          await tc.stop();
        }
      },
    );
  }
});

async function attackOn(tc: TestCluster, attack: Attack): Promise<void> {
  const { client, cluster } = tc;
  const victim = cluster.node(0, attack.victim);
  const partner = cluster.node(0, attack.victim === 'primary' ? 'follower' : 'primary');
  await client.increment('torn:load', 1, { idempotencyKey: null });
  await client.setShards('torn:load', 4);
  await waitForHealthy(client);
  const victimIdBefore = (await client.clusterStatus()).nodes.find((node) => node.address === victim.address)!.nodeId;

  const load = startLoad(client, { concurrency: 4, counters: () => 'torn:load' });
  load.ledger.record('torn:load', 1n, 'ok');
  await waitFor(() => load.ledger.okCalls > 400, { timeoutMs: 15_000, what: 'acknowledged load' });
  await Promise.all([victim.process.stop('SIGKILL'), partner.process.stop('SIGKILL')]);
  await load.stop();
  const how = attack.damage(victim);

  // The damaged node alone: it may refuse, never answer less than was acknowledged.
  await victim.process.start();
  await expectNoReadBelowAcknowledged(client, load.ledger, 4_000);

  await partner.process.start();
  await waitForHealthy(client, 20_000);
  await load.ledger.expectWithinBounds(client);
  await expectNoDrift(client);
  const victimAfter = (await client.clusterStatus()).nodes.find((node) => node.address === victim.address)!;
  const victimLines = tc.logs.filter((line) => line.startsWith(`[${victim.process.name}]`));
  if (attack.setAside) {
    expect(victimAfter.nodeId, `${how}: the damaged log must be set aside, not served`).not.toBe(victimIdBefore);
    expect(victimLines.some((line) => line.includes('log failed its checks'))).toBe(true);
  } else {
    expect(victimAfter.nodeId, `${how}: a commit cut short is discarded, the log kept`).toBe(victimIdBefore);
    expect(victimLines.some((line) => line.includes('log failed its checks'))).toBe(false);
    expect(victimLines.some((line) => line.includes('cut short'))).toBe(true);
  }

  // The refilled node alone holds everything acknowledged.
  await partner.process.stop('SIGKILL');
  await waitFor(() => client.readMany(load.ledger.counters(), { deadlineMs: 2_000 }), {
    timeoutMs: 15_000,
    what: 'an exact read from the refilled node alone',
  });
  await load.ledger.expectWithinBounds(client);
}
