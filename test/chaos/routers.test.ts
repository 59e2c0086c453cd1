// G9 under attack: routers and etcd SIGKILLed. The router holding the
// supervisor lease dies and a primary after it: the other router takes over
// supervision and fails the pair over. Keyed load spread over two routers,
// each SIGKILLed in turn: every total exact. etcd killed under load: nothing
// acknowledged is lost, and writes fail UNAVAILABLE instead of guessing.
import { afterEach, describe, expect, it } from 'vitest';
import { createTallyClient, TallyError, type TallyClient } from '../../src/client/index.ts';
import { pause, startCluster, waitFor, type TestCluster } from '../helpers/cluster.ts';
import { classify, Ledger } from '../helpers/load.ts';

const leaseTtlMs = 2_000;
const routerArgs = ['--router-lease-ttl-ms', String(leaseTtlMs), '--failover-timeout-ms', '1500', '--follower-timeout-ms', '800'];

describe('chaos: several routers', () => {
  let tc: TestCluster | undefined;
  const clients: TallyClient[] = [];
  const clientOf = (address: string): TallyClient => {
    const client = createTallyClient({ address, deadlineMs: 10_000 });
    clients.push(client);
    return client;
  };
  afterEach(async () => {
    for (const client of clients.splice(0)) client.close();
    await tc?.stop();
    tc = undefined;
  });

  it('the supervisor router SIGKILLed, then a primary: the other router takes over supervision and fails the pair over', async () => {
    tc = await startCluster({ pairs: 2, routers: 2, etcd: 'own', routerArgs });
    const { cluster } = tc;
    const [first, second] = cluster.routers.map((router) => clientOf(router.address));
    await first!.increment('before', 4);
    await waitFor(async () => (await first!.clusterStatus()).supervisor !== '', { timeoutMs: 10_000, what: 'a supervisor' });
    const supervisorId = (await first!.clusterStatus()).supervisor;
    const supervisorIndex = cluster.routers.findIndex((router) => router.name === supervisorId);
    expect(supervisorIndex).toBeGreaterThanOrEqual(0);
    const survivor = supervisorIndex === 0 ? second! : first!;
    const epochBefore = (await survivor.clusterStatus()).pairs[0]!.epoch;

    const killedMs = Date.now();
    await cluster.routers[supervisorIndex]!.process.stop('SIGKILL');
    await cluster.node(0, 'primary').process.stop('SIGKILL');
    // The survivor waits out the dead router's lease, takes supervision, and promotes pair 0's follower.
    await waitFor(
      async () => {
        const status = await survivor.clusterStatus().catch(() => undefined);
        return status !== undefined && status.pairs[0]!.epoch > epochBefore && status.supervisor !== supervisorId;
      },
      { timeoutMs: 30_000, intervalMs: 50, what: 'failover by the surviving router' },
    );
    const failoverMs = Date.now() - killedMs;
    console.log(`supervisor router killed -> pair failed over by the other router: ${failoverMs} ms (lease ttl ${leaseTtlMs} ms)`);
    await survivor.increment('before', 1, { idempotencyKey: 'after-failover' });
    expect((await survivor.read('before')).total).toBe(5n);
  }, 90_000);

  it('keyed load over two routers, each SIGKILLed in turn: every total exact, at least 90% of calls succeed first try', async () => {
    tc = await startCluster({ pairs: 2, routers: 2, etcd: 'own', routerArgs });
    const { cluster } = tc;
    const addresses = cluster.routerAddresses;
    // One client with both routers: it moves off a dead one by itself; a keyed retry may go to either.
    const client = createTallyClient({ addresses, deadlineMs: 4_000 });
    clients.push(client);
    const counters = ['k0', 'k1', 'k2', 'k3'];
    const applied = new Map<string, bigint>(counters.map((counter) => [counter, 0n]));
    let calls = 0;
    let firstTry = 0;
    let running = true;
    const writers = Array.from({ length: 8 }, async (_, writer) => {
      let sequence = 0;
      while (running) {
        const counter = counters[sequence % counters.length]!;
        const key = `w${writer}-${sequence++}`;
        calls++;
        let attempt = 0;
        // A keyed increment is retried until it is acknowledged: exactly once in the total.
        for (;;) {
          try {
            await client.increment(counter, 1, { idempotencyKey: key, deadlineMs: 4_000 });
            if (attempt === 0) firstTry++;
            applied.set(counter, applied.get(counter)! + 1n);
            break;
          } catch {
            attempt++;
            await pause(50);
          }
        }
      }
    });
    for (const router of cluster.routers) {
      await pause(1_500);
      await router.process.stop('SIGKILL');
      await pause(1_000);
      await router.process.start();
    }
    await pause(1_000);
    running = false;
    await Promise.all(writers);
    const reader = clientOf(addresses[0]!);
    for (const read of await reader.readMany(counters)) expect(read.total, read.counter).toBe(applied.get(read.counter));
    console.log(
      `keyed load over two routers killed in turn: ${calls} calls, ${firstTry} first try (${((firstTry / calls) * 100).toFixed(1)}%)`,
    );
    expect(firstTry / calls).toBeGreaterThanOrEqual(0.9);
  }, 120_000);

  it('etcd SIGKILLed under load: nothing acknowledged is lost; once the lease may have lapsed writes fail UNAVAILABLE; after it returns writes succeed', async () => {
    tc = await startCluster({ pairs: 2, routers: 2, etcd: 'own', routerArgs });
    const { cluster } = tc;
    const [first, second] = cluster.routers.map((router) => clientOf(router.address));
    const ledger = new Ledger();
    let running = true;
    let sequence = 0;
    // Existing counters and new ones, through both routers.
    const writers = [first!, second!, first!, second!].map(async (client) => {
      while (running) {
        const counter = sequence % 3 === 0 ? `fresh-${sequence}` : `old-${sequence % 4}`;
        sequence++;
        try {
          await client.increment(counter, 1, { idempotencyKey: null, deadlineMs: 3_000 });
          ledger.record(counter, 1n, 'ok');
        } catch (error) {
          ledger.record(counter, 1n, classify(error));
          await pause(20);
        }
      }
    });
    await pause(1_000);
    await cluster.etcd!.kill('SIGKILL');
    // Past the lease TTL: neither router may trust its view; nothing is acknowledged on a guess.
    await pause(leaseTtlMs + 500);
    const okWhileGone = ledger.okCalls;
    const refusals: string[] = [];
    for (const client of [first!, second!]) {
      for (const counter of ['old-1', 'brand-new']) {
        try {
          await client.increment(counter, 1, { idempotencyKey: null, deadlineMs: 3_000 });
          refusals.push(`${counter}: acknowledged with etcd gone`);
        } catch (error) {
          expect(error).toBeInstanceOf(TallyError);
          refusals.push(`${counter}: ${(error as TallyError).code}`);
        }
      }
      await expect(client.read('old-1')).rejects.toMatchObject({ code: 'unavailable' });
    }
    expect(
      refusals.every((refusal) => refusal.endsWith('unavailable')),
      refusals.join('; '),
    ).toBe(true);
    await pause(500);
    // The writers' calls fail too while etcd is gone.
    expect(ledger.okCalls - okWhileGone).toBe(0);
    await cluster.etcd!.start();
    await waitFor(
      async () => {
        try {
          await first!.increment('old-1', 1, { idempotencyKey: 'after-etcd', deadlineMs: 2_000 });
          await second!.increment('old-2', 1, { idempotencyKey: 'after-etcd', deadlineMs: 2_000 });
          return true;
        } catch {
          return false;
        }
      },
      { timeoutMs: 30_000, what: 'writes through both routers after etcd returned' },
    );
    running = false;
    await Promise.all(writers);
    ledger.record('old-1', 1n, 'ok');
    ledger.record('old-2', 1n, 'ok');
    await ledger.expectWithinBounds(first!);
    await ledger.expectWithinBounds(second!);
  }, 120_000);

  it('a second router on the same SQLite directory refuses to start, in one line', async () => {
    tc = await startCluster({ pairs: 1 });
    const { cluster } = tc;
    const { ManagedProcess, routerMainPath } = await import('../../src/cluster/managed-process.ts');
    const lines: string[] = [];
    const second = new ManagedProcess({
      name: 'second-router',
      script: routerMainPath,
      args: [
        '--listen',
        '127.0.0.1:0',
        '--pairs',
        `${cluster.node(0, 'primary').address},${cluster.node(0, 'follower').address}`,
        '--data-dir',
        `${tc.dataDir}/router`,
        '--metrics-port',
        '0',
      ],
      onLine: (_name, line) => lines.push(line),
    });
    await expect(second.start(20_000)).rejects.toThrow();
    expect(lines.join('\n')).toMatch(/in use by another router/);
    // The first router goes on serving.
    await tc.client.increment('still-served', 1);
    expect((await tc.client.read('still-served')).total).toBe(1n);
  }, 60_000);
});
