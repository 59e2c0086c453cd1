// G11 against real processes: the router's and a primary node's wall clocks
// are stepped by hours (libfaketime; monotonic time untouched, as NTP leaves
// it) while they run. A counter's TTL, the dedup window and the replication
// lag must not notice. Needs the faketime package (fails without it).
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTallyClient } from '../../src/client/index.ts';
import { coalescedCallsInFlightMax } from '../../src/wire/index.ts';
import { makeFakeClock, type FakeClock } from '../helpers/fake-clock.ts';
import { holdsFor, pause, startCluster, waitFor, type TestCluster } from '../helpers/cluster.ts';
import { makeTempDir, removeTempDir } from '../helpers/temp-dir.ts';

const hourMs = 3_600_000;
const dedupWindowMs = 60_000;

describe('clock steps', () => {
  let tc: TestCluster;
  let clockDir: string;
  let routerClock: FakeClock;
  let primaryClock: FakeClock;
  beforeAll(async () => {
    clockDir = makeTempDir('clock-steps');
    routerClock = makeFakeClock(clockDir, 'router');
    primaryClock = makeFakeClock(clockDir, 'node-0-primary');
    const clocks: Record<string, FakeClock> = { router: routerClock, 'node-0-primary': primaryClock };
    tc = await startCluster({
      pairs: 1,
      nodeArgs: ['--dedup-window-ms', String(dedupWindowMs)],
      routerArgs: ['--dedup-window-ms', String(dedupWindowMs)],
      envOf: (name) => clocks[name]?.env,
    });
  });
  afterAll(async () => {
    await tc?.stop();
    if (clockDir !== undefined) removeTempDir(clockDir);
  });

  it('a counter with a 1 h TTL written just before the router’s clock steps +2 h keeps its total through many sweeps', async () => {
    await tc.client.increment('ttl:stepped', 7);
    await tc.client.configure('ttl:stepped', { ttlMs: hourMs });
    await tc.client.increment('ttl:stepped', 5);
    routerClock.setOffsetMs(2 * hourMs);
    // The sweeper runs every 100 ms: 1.5 s is a dozen passes over this directory.
    await holdsFor(async () => (await tc.client.listCounters({ prefix: 'ttl:stepped' })).counters.length === 1, 1_500, {
      what: 'the counter to stay listed',
    });
    expect((await tc.client.read('ttl:stepped')).total).toBe(12n);
    expect((await tc.client.describe('ttl:stepped')).idleMs).toBeLessThan(60_000);
    routerClock.setOffsetMs(0);
  }, 15_000);

  it('a keyed increment retried after the primary’s clock steps forward past the dedup window counts once', async () => {
    const first = await tc.client.increment('dedup:stepped', 3, { idempotencyKey: 'retried-key' });
    expect(first.applied).toBe(true);
    primaryClock.setOffsetMs(2 * hourMs);
    // Let the node's prune and checkpoint run on the stepped clock too.
    await pause(1_200);
    const retry = await tc.client.increment('dedup:stepped', 3, { idempotencyKey: 'retried-key' });
    expect(retry.applied).toBe(false);
    expect((await tc.client.read('dedup:stepped')).total).toBe(3n);
  }, 15_000);

  it('after a −1 h step the primary reports a small, non-negative replication lag', async () => {
    const follower = tc.cluster.nodes[1];
    follower!.process.signal('SIGSTOP');
    try {
      // Acknowledged once the router gives up on the silent follower: the commit stays unconfirmed.
      await tc.client.increment('lag:stepped', 1, { deadlineMs: 15_000 });
      primaryClock.setOffsetMs(-hourMs);
      await pause(300);
      const lagMs = await waitFor(
        async () => {
          const status = await tc.client.clusterStatus();
          // Shown on the follower's line, as its primary measures it.
          const lag = status.nodes.find((node) => node.address === follower!.address)!.replicationLagMs;
          return lag > 0 ? lag : undefined;
        },
        { timeoutMs: 5_000, what: 'the primary to report a lag' },
      );
      expect(lagMs).toBeGreaterThan(0);
      expect(lagMs).toBeLessThan(60_000);
    } finally {
      follower!.process.signal('SIGCONT');
    }
    await waitFor(async () => (await tc.client.clusterStatus()).nodes.every((node) => node.inSync), {
      timeoutMs: 15_000,
      what: 'the pair to be in sync again',
    });
  }, 30_000);

  it('the client library’s deadlines ignore its own wall clock: an increment queued behind stuck calls while the caller’s clock steps +2 h waits for its own deadline and succeeds', async () => {
    const coalescing = createTallyClient({ address: tc.cluster.routerAddress, deadlineMs: 5_000, coalesce: true });
    const realNow = Date.now.bind(Date);
    let stepped: { mockRestore(): void } | undefined;
    try {
      await coalescing.increment('client:stepped', 1);
      // A paused router answers nothing: calls to it stay in flight and fill the client's slots.
      tc.cluster.router.signal('SIGSTOP');
      const stuck: Promise<unknown>[] = [];
      for (let slot = 0; slot < coalescedCallsInFlightMax; slot++) {
        stuck.push(coalescing.increment('client:stepped', 10, { deadlineMs: 20_000 }));
        await pause(50);
      }
      const queued = coalescing.increment('client:stepped', 100, { deadlineMs: 20_000 });
      stepped = vi.spyOn(Date, 'now').mockImplementation(() => realNow() + 2 * hourMs);
      await pause(300);
      tc.cluster.router.signal('SIGCONT');
      // Before: "deadline exceeded while the increment waited to be sent" the moment a slot freed.
      expect((await queued).applied).toBe(true);
      await Promise.all(stuck);
    } finally {
      stepped?.mockRestore();
      tc.cluster.router.signal('SIGCONT');
      coalescing.close();
    }
    expect((await tc.client.read('client:stepped')).total).toBe(1n + 10n * BigInt(coalescedCallsInFlightMax) + 100n);
  }, 30_000);
});
