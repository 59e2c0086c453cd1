// G2 under attack: retries with the same key apply at most once, across
// concurrency, shard growth, failover, node and router restarts, and the
// dedup window's end.
import { afterEach, describe, expect, it } from 'vitest';
import { status } from '@grpc/grpc-js';
import { TallyError } from '../../src/client/index.ts';
import { pause, scrapeMetric, startCluster, waitFor, waitForHealthy, type TestCluster } from '../helpers/cluster.ts';

const routerArgs = ['--failover-timeout-ms', '1500', '--follower-timeout-ms', '800'];

describe('chaos: idempotency keys', () => {
  let tc: TestCluster | undefined;
  afterEach(async () => {
    await tc?.stop();
    tc = undefined;
  });

  it('the same key sent 100 times concurrently applies once; 99 responses say applied=false', async () => {
    tc = await startCluster({ pairs: 2, routerArgs });
    const { client } = tc;
    await client.increment('once', 1, { idempotencyKey: null });
    await client.setShards('once', 4);
    const results = await Promise.all(Array.from({ length: 100 }, () => client.increment('once', 5, { idempotencyKey: 'order-42' })));
    expect(results.filter((result) => result.applied)).toHaveLength(1);
    expect(results.filter((result) => !result.applied)).toHaveLength(99);
    expect(new Set(results.map((result) => result.shard)).size).toBe(1);
    expect((await client.read('once')).total).toBe(6n);
    // A batch carrying the same key twice applies it once too.
    const batch = await client.incrementBatch([
      { counter: 'once', amount: 7, idempotencyKey: 'order-43' },
      { counter: 'once', amount: 7, idempotencyKey: 'order-43' },
      { counter: 'once', amount: 5, idempotencyKey: 'order-42' },
    ]);
    expect(batch.map((result) => result.applied)).toEqual([true, false, false]);
    expect((await client.read('once')).total).toBe(13n);
  });

  it('a retry after SetShards growth, and a retry after failover, is still applied once', { timeout: 60_000 }, async () => {
    tc = await startCluster({ pairs: 2, routerArgs });
    const { client, cluster } = tc;
    const keys = Array.from({ length: 40 }, (_, index) => `grow-${index}`);
    for (const key of keys) expect((await client.increment('grown', 1, { idempotencyKey: key })).applied).toBe(true);
    await client.setShards('grown', 3);
    await client.setShards('grown', 8);
    // Every key now hashes to a home among 8 shards; most moved. None applies again.
    for (const key of keys) expect((await client.increment('grown', 1, { idempotencyKey: key })).applied).toBe(false);
    expect((await client.read('grown')).total).toBe(40n);
    // New keys still apply once, and stay deduplicated.
    expect((await client.increment('grown', 1, { idempotencyKey: 'fresh' })).applied).toBe(true);
    expect((await client.increment('grown', 1, { idempotencyKey: 'fresh' })).applied).toBe(false);

    await waitForHealthy(client);
    await cluster.node(0, 'primary').process.stop('SIGKILL');
    await cluster.node(1, 'primary').process.stop('SIGKILL');
    // After failover the promoted followers know every key.
    for (const key of [...keys, 'fresh']) {
      const result = await client.increment('grown', 1, { idempotencyKey: key, deadlineMs: 15_000 });
      expect(result.applied).toBe(false);
    }
    expect((await client.read('grown')).total).toBe(41n);
    expect((await client.describe('grown')).placements.every((placement) => placement.epoch === 2)).toBe(true);
  });

  it(
    'exactly once under chaos: keyed retries while nodes are SIGKILLed and the router restarts sum exactly',
    { timeout: 120_000 },
    async () => {
      tc = await startCluster({ pairs: 2, routerArgs });
      const { client, cluster } = tc;
      const counters = ['exact:hot', ...Array.from({ length: 5 }, (_, index) => `exact:cold:${index}`)];
      await client.incrementBatch(counters.map((counter) => ({ counter, amount: 1, idempotencyKey: `seed-${counter}` })));
      await client.setShards('exact:hot', 6);
      await waitForHealthy(client);
      const intended = new Map<string, bigint>(counters.map((counter) => [counter, 1n]));
      let running = true;
      let acknowledged = 0;
      const writers = Array.from({ length: 24 }, async (_, writer) => {
        for (let sequence = 0; running; sequence++) {
          const counter = sequence % 3 === 0 ? counters[1 + (sequence % 5)]! : 'exact:hot';
          const amount = BigInt((writer % 4) + 1);
          const key = `w${writer}-${sequence}`;
          intended.set(counter, intended.get(counter)! + amount);
          // Retry with the same key until acknowledged, whatever happens.
          for (;;) {
            try {
              await client.increment(counter, amount, { idempotencyKey: key, deadlineMs: 4_000 });
              acknowledged++;
              break;
            } catch (error) {
              expect(error).toBeInstanceOf(TallyError);
              await pause(50);
            }
          }
        }
      });
      const chaosUntilMs = Date.now() + 16_000;
      let routerRestarted = false;
      while (Date.now() < chaosUntilMs) {
        await pause(1_500);
        if (!routerRestarted && Date.now() > chaosUntilMs - 9_000) {
          routerRestarted = true;
          await cluster.router.stop('SIGKILL');
          await cluster.router.start();
          continue;
        }
        const victim = cluster.nodes[Math.floor(Math.random() * cluster.nodes.length)]!;
        await victim.process.stop('SIGKILL');
        await pause(1_000);
        await victim.process.start();
      }
      await waitForHealthy(client, 30_000);
      running = false;
      await Promise.all(writers);
      expect(routerRestarted).toBe(true);
      expect(acknowledged).toBeGreaterThan(300);
      const reads = await client.readMany(counters);
      for (const read of reads) expect(read.total, read.counter).toBe(intended.get(read.counter));
      expect((await client.reconcile()).shardsDrifting).toBe(0);
    },
  );

  it(
    'nodes holding 200 keys in memory still deduplicate the oldest of 1,000 keys from disk: live, after a primary restart, and on a promoted follower',
    { timeout: 90_000 },
    async () => {
      tc = await startCluster({ pairs: 1, routerArgs, nodeArgs: ['--dedup-keys-in-memory-max', '200'], metrics: true });
      const { client, cluster } = tc;
      for (let batch = 0; batch < 10; batch++) {
        const results = await client.incrementBatch(
          Array.from({ length: 100 }, (_, n) => ({ counter: 'deep', amount: 1, idempotencyKey: `deep-${batch * 100 + n}` })),
        );
        expect(results.every((result) => result.applied)).toBe(true);
      }
      expect((await client.read('deep')).total).toBe(1_000n);
      await waitForHealthy(client);
      const primaryNow = async () => {
        const address = (await client.clusterStatus()).nodes.find((node) => node.role === 'primary')!.address;
        return cluster.nodes.find((node) => node.address === address)!;
      };
      const retryOldest = async (when: string) => {
        for (const key of ['deep-0', 'deep-1', 'deep-500']) {
          expect((await client.increment('deep', 1, { idempotencyKey: key, deadlineMs: 15_000 })).applied, `${key} ${when}`).toBe(false);
        }
        expect((await client.read('deep')).total, when).toBe(1_000n);
      };

      // Live: the primary's memory holds the newest 200 keys; deep-0 comes from its log.
      const first = await primaryNow();
      await retryOldest('live');
      await waitFor(async () => (await scrapeMetric(first.metricsPort, 'tally_dedup_disk_lookups_total')) >= 3, {
        timeoutMs: 5_000,
        what: 'disk lookups on the primary',
      });
      expect(await scrapeMetric(first.metricsPort, 'tally_dedup_keys')).toBeLessThanOrEqual(200);
      await waitFor(async () => (await scrapeMetric(first.metricsPort, 'tally_dedup_window_covered_seconds')) === 86_400, {
        timeoutMs: 5_000,
        what: 'the whole window reported covered',
      });

      // Restart: the primary comes back with only the newest 200 keys in memory.
      await first.process.stop('SIGKILL');
      await first.process.start();
      await waitForHealthy(client);
      await retryOldest('after the primary restarted');

      // Failover: whichever node is primary now dies; the other is promoted and finds deep-0 in its own log.
      const second = await primaryNow();
      const promoted = cluster.nodes.find((node) => node !== second)!;
      await second.process.stop('SIGKILL');
      await waitFor(async () => (await primaryNow()) === promoted, { timeoutMs: 20_000, what: 'the follower to be promoted' });
      await retryOldest('after failover');
      await waitFor(async () => (await scrapeMetric(promoted.metricsPort, 'tally_dedup_disk_lookups_total')) >= 3, {
        timeoutMs: 5_000,
        what: 'disk lookups on the promoted node',
      });
      // New keys still apply once.
      expect((await client.increment('deep', 1, { idempotencyKey: 'deep-new', deadlineMs: 15_000 })).applied).toBe(true);
      expect((await client.read('deep')).total).toBe(1_001n);
    },
  );

  it('a key is accepted again after the dedup window', async () => {
    const window = ['--dedup-window-ms', '1500'];
    tc = await startCluster({ pairs: 1, routerArgs: [...routerArgs, ...window], nodeArgs: window });
    const { client } = tc;
    expect((await client.increment('windowed', 1, { idempotencyKey: 'k' })).applied).toBe(true);
    expect((await client.increment('windowed', 1, { idempotencyKey: 'k' })).applied).toBe(false);
    await waitFor(async () => (await client.increment('windowed', 1, { idempotencyKey: 'k' })).applied, {
      timeoutMs: 10_000,
      intervalMs: 200,
      what: 'the key to expire',
    });
    expect((await client.read('windowed')).total).toBe(2n);
  });

  it(
    'client: an unkeyed increment (idempotencyKey: null) is not retried; a keyed one rides out a failover',
    { timeout: 60_000 },
    async () => {
      tc = await startCluster({ pairs: 1, routerArgs });
      const { client, cluster } = tc;
      await client.increment('single', 1);
      await waitForHealthy(client);
      // Paused, not dead: the unkeyed call reaches it and times out, so its
      // outcome is unknown and neither the router nor the client may send it again.
      cluster.node(0, 'primary').process.signal('SIGSTOP');
      const unkeyed = await client.increment('single', 1, { idempotencyKey: null, deadlineMs: 10_000 }).catch((error: unknown) => error);
      expect((unkeyed as TallyError).grpcCode).toBe(status.UNAVAILABLE);
      // The client's own retries (same generated key) carry it across the promotion.
      const keyed = await client.increment('single', 1, { deadlineMs: 15_000 });
      expect(keyed.applied).toBe(true);
      expect((await client.read('single')).total).toBe(2n);
    },
  );
});
