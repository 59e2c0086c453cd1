// A rolling restart, as docs/kubernetes.md "Upgrade" does it, under load:
// two routers on etcd, then every node pair follower first, then primary,
// each process SIGTERMed and started again on its data, waiting for the
// pair to be back in sync before the next. Keyed writers retry each key
// until it is acknowledged: every keyed total is exact. Unkeyed writers keep
// a ledger: acknowledged <= total <= acknowledged + unknown. The routers keep
// their ids across the restart (presence in etcd), and no shard drifts.
import { afterAll, describe, expect, it } from 'vitest';
import { createTallyClient, type TallyClient } from '../../src/client/index.ts';
import { pause, startCluster, waitFor, type TestCluster } from '../helpers/cluster.ts';
import { expectNoDrift, startLoad } from '../helpers/load.ts';

const routerArgs = ['--router-lease-ttl-ms', '2000', '--failover-timeout-ms', '1500', '--follower-timeout-ms', '800'];

/** Both nodes of the pair answer, the pair is in sync and its follower level. */
async function pairInSync(client: TallyClient, pair: number): Promise<boolean> {
  const status = await client.clusterStatus({ deadlineMs: 2_000 });
  const nodes = status.nodes.filter((node) => node.pair === pair);
  return nodes.every((node) => node.health === 'SERVING' && node.inSync && node.error === '' && node.replicationLagEntries === 0n);
}

describe('chaos: rolling restart', () => {
  let tc: TestCluster | undefined;
  const clients: TallyClient[] = [];

  afterAll(async () => {
    for (const client of clients) client.close();
    await tc?.stop();
  });

  it('every router, then every node (follower first, in sync before the next), SIGTERMed and started under keyed and unkeyed load; every total exact', async () => {
    tc = await startCluster({ pairs: 2, routers: 2, etcd: 'own', routerArgs });
    const { cluster } = tc;
    const client = createTallyClient({ addresses: cluster.routerAddresses, deadlineMs: 4_000 });
    clients.push(client);
    await waitFor(() => pairInSync(client, 0), { timeoutMs: 20_000, what: 'pair 0 in sync' });
    await waitFor(() => pairInSync(client, 1), { timeoutMs: 20_000, what: 'pair 1 in sync' });
    const routerIds = (await client.clusterStatus()).routers.sort();

    const counters = ['roll:k0', 'roll:k1', 'roll:k2', 'roll:k3'];
    const acknowledged = new Map<string, bigint>(counters.map((counter) => [counter, 0n]));
    let running = true;
    let keyedCalls = 0;
    let retries = 0;
    const keyedWriters = Array.from({ length: 6 }, async (_, writer) => {
      for (let sequence = 0; running; sequence++) {
        const counter = counters[sequence % counters.length]!;
        const key = `w${writer}-${sequence}`;
        keyedCalls++;
        // Retried with the same key until acknowledged: in the total exactly once.
        for (;;) {
          try {
            await client.increment(counter, 1, { idempotencyKey: key, deadlineMs: 4_000 });
            acknowledged.set(counter, acknowledged.get(counter)! + 1n);
            break;
          } catch {
            retries++;
            await pause(50);
          }
        }
      }
    });
    const unkeyed = startLoad(client, { counters: () => `roll:u${Math.floor(Math.random() * 4)}`, concurrency: 2 });

    const restart = async (process: { stop(signal: NodeJS.Signals): Promise<void>; start(): Promise<void> }): Promise<void> => {
      await process.stop('SIGTERM');
      await process.start();
    };
    // Routers one at a time (a Deployment's rollout, maxUnavailable 1): each back and serving before the next.
    for (const router of cluster.routers) {
      await pause(500);
      await restart(router.process);
      const alone = createTallyClient({ address: router.address, deadlineMs: 2_000 });
      clients.push(alone);
      await waitFor(async () => (await alone.clusterStatus()).routers.length === 2, { timeoutMs: 20_000, what: `${router.name} back` });
    }
    // Nodes: per pair the follower first, then the primary (a failover), each time in sync before going on.
    for (const pair of [0, 1]) {
      for (const role of ['follower', 'primary'] as const) {
        await pause(500);
        const address = (await client.clusterStatus()).nodes.find((node) => node.pair === pair && node.role === role)!.address;
        const node = cluster.nodes.find((candidate) => candidate.address === address)!;
        await restart(node.process);
        await waitFor(() => pairInSync(client, pair), { timeoutMs: 20_000, what: `pair ${pair} in sync after its ${role} restarted` });
      }
    }
    await pause(500);
    running = false;
    await Promise.all(keyedWriters);
    await unkeyed.stop();

    // Both routers came back under the ids they had.
    expect((await client.clusterStatus()).routers.sort()).toEqual(routerIds);
    const reader = createTallyClient({ address: cluster.routerAddresses[0]!, deadlineMs: 10_000 });
    clients.push(reader);
    for (const read of await reader.readMany(counters)) expect(read.total, read.counter).toBe(acknowledged.get(read.counter));
    await unkeyed.ledger.expectWithinBounds(reader);
    expect(unkeyed.ledger.okCalls, unkeyed.ledger.topReasons()).toBeGreaterThan(50);
    expect(keyedCalls).toBeGreaterThan(100);
    await expectNoDrift(reader);
    console.log(
      `rolling restart: ${keyedCalls} keyed calls (${retries} retries), unkeyed ok ${unkeyed.ledger.okCalls} unknown ${unkeyed.ledger.unknownCalls} failed ${unkeyed.ledger.failedCalls}`,
    );
  }, 120_000);
});
