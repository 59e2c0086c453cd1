// Time to live against real processes: Configure and the router default set
// it, Describe and ListCounters show it, writes restart the idle clock and a
// router restart restarts it too (never early); bad TTLs change nothing.
// Expiry itself deletes through DeleteCounter: its test is at the end.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { credentials, status } from '@grpc/grpc-js';
import { AdminServiceClient, counterTtlMsMax, expiryDeletesPerSecondMax } from '../../src/common/index.ts';
import { newCountersPerCallMax } from '../../src/wire/index.ts';
import { startCluster, pause, scrapeMetric, waitFor, type TestCluster } from '../helpers/cluster.ts';
import { tally } from '../helpers/cli.ts';
import { rejection } from '../helpers/rejection.ts';
import type { RawRpcClient } from '../helpers/raw-client.ts';

const hourMs = 3_600_000;

describe('counter TTL', () => {
  let tc: TestCluster;
  let raw: RawRpcClient;
  let router: string[];
  beforeAll(async () => {
    // A default long enough that nothing here can expire while the tests run.
    tc = await startCluster({ pairs: 1, metrics: true, routerArgs: ['--counter-ttl-ms', String(hourMs)] });
    raw = new AdminServiceClient(tc.cluster.routerAddress, credentials.createInsecure()) as unknown as RawRpcClient;
    router = ['--router', tc.cluster.routerAddress];
  });
  afterAll(async () => {
    raw?.close();
    await tc?.stop();
  });

  it('a counter follows the router default until Configure gives it its own, exempts it, or returns it to the default', async () => {
    await tc.client.increment('ttl:a', 1);
    expect(await tc.client.describe('ttl:a')).toMatchObject({ ttlMs: hourMs, ttlFrom: 'default' });
    expect(await tc.client.configure('ttl:a', { ttlMs: 60_000 })).toMatchObject({ ttlMs: 60_000, ttlFrom: 'counter' });
    const listed = async (): Promise<number> => (await tc.client.listCounters({ prefix: 'ttl:a' })).counters[0]!.ttlMs;
    expect(await listed()).toBe(60_000);
    expect(await tc.client.configure('ttl:a', { ttlMs: 'never' })).toMatchObject({ ttlMs: 0, ttlFrom: 'never' });
    expect(await listed()).toBe(0);
    expect(await tc.client.configure('ttl:a', { ttlMs: 'default' })).toMatchObject({ ttlMs: hourMs, ttlFrom: 'default' });
    expect(await listed()).toBe(hourMs);
    // Other settings leave the TTL alone.
    await tc.client.configure('ttl:a', { ttlMs: 90_000 });
    expect(await tc.client.configure('ttl:a', { autoscale: false })).toMatchObject({ ttlMs: 90_000, autoscale: false });
  });

  it('writes of every kind restart the idle clock; reads do not', async () => {
    await tc.client.increment('ttl:idle', 1);
    await tc.client.addDistinct('ttl:idle-distinct', ['x']);
    await tc.client.setMember('ttl:idle-member', 1, true);
    await pause(1_200);
    const names = ['ttl:idle', 'ttl:idle-distinct', 'ttl:idle-member'];
    for (const name of names) expect((await tc.client.describe(name)).idleMs, name).toBeGreaterThanOrEqual(1_200);
    await tc.client.read('ttl:idle');
    await tc.client.countDistinct('ttl:idle-distinct');
    await tc.client.isMember('ttl:idle-member', [1]);
    for (const name of names) expect((await tc.client.describe(name)).idleMs, name).toBeGreaterThanOrEqual(1_200);
    await tc.client.incrementBatch([{ counter: 'ttl:idle', amount: 1 }]);
    await tc.client.addDistinct('ttl:idle-distinct', ['y']);
    await tc.client.setMember('ttl:idle-member', 1, false);
    for (const name of names) expect((await tc.client.describe(name)).idleMs, name).toBeLessThan(1_200);
  });

  it('a TTL out of bounds, never with a length, or on an unknown counter is refused and changes nothing', async () => {
    await tc.client.configure('ttl:guarded', { window: { bucketMs: 1_000, retentionMs: 60_000 } });
    await tc.client.configure('ttl:guarded', { ttlMs: 120_000 });
    const countersBefore = (await tc.client.clusterStatus()).counters;
    const rawConfigure = (request: object): Promise<number> =>
      new Promise((resolve) => {
        raw.Configure!(request, { deadline: Date.now() + 5_000 }, (error: { code: number } | null) => resolve(error?.code ?? status.OK));
      });
    expect(await rawConfigure({ counter: 'ttl:guarded', ttl: { ttlMs: 999 } })).toBe(status.INVALID_ARGUMENT);
    expect(await rawConfigure({ counter: 'ttl:guarded', ttl: { ttlMs: String(counterTtlMsMax + 1) } })).toBe(status.INVALID_ARGUMENT);
    expect(await rawConfigure({ counter: 'ttl:guarded', ttl: { ttlMs: '18446744073709551615' } })).toBe(status.INVALID_ARGUMENT);
    expect(await rawConfigure({ counter: 'ttl:guarded', ttl: { ttlMs: 5_000, never: true } })).toBe(status.INVALID_ARGUMENT);
    // Refused whole: the window change riding with a bad TTL is not made either.
    expect(await rawConfigure({ counter: 'ttl:guarded', window: { bucketMs: 0, retentionMs: 0 }, ttl: { ttlMs: 1 } })).toBe(
      status.INVALID_ARGUMENT,
    );
    expect(await tc.client.describe('ttl:guarded')).toMatchObject({ ttlMs: 120_000, ttlFrom: 'counter', windowBucketMs: 1_000 });
    const unknown = await rejection(tc.client.configure('ttl:ghost', { ttlMs: 60_000 }));
    expect(unknown.grpcCode).toBe(status.NOT_FOUND);
    expect((await rejection(tc.client.describe('ttl:ghost'))).grpcCode).toBe(status.NOT_FOUND);
    // 0 would mean "the default" on the wire: the client asks for words.
    expect((await rejection(tc.client.configure('ttl:guarded', { ttlMs: 0 }))).code).toBe('invalid_argument');
    expect((await tc.client.clusterStatus()).counters).toBe(countersBefore);
  });

  it('cli: configure --ttl sets, exempts and resets a TTL; describe and ls show it; a bad --ttl is a usage error', async () => {
    await tc.client.increment('ttl:cli', 1);
    const set = await tally(['configure', 'ttl:cli', '--ttl', '2h', ...router]);
    expect(set.code, set.stderr).toBe(0);
    expect(set.stdout.trim()).toBe('ttl:cli: autoscale on, 1 shard, ttl 2h');
    expect((await tally(['describe', 'ttl:cli', ...router])).stdout.split('\n')[0]).toMatch(/, ttl 2h, idle \d+m?s$/);
    expect((await tally(['ls', 'ttl:cli', ...router])).stdout).toBe('ttl:cli  total  1 shard  ttl 2h\n');
    expect((await tally(['configure', 'ttl:cli', '--ttl', 'never', ...router])).stdout.trim()).toBe(
      'ttl:cli: autoscale on, 1 shard, never expires',
    );
    expect((await tally(['ls', 'ttl:cli', ...router])).stdout).toBe('ttl:cli  total  1 shard\n');
    expect((await tally(['configure', 'ttl:cli', '--ttl', 'default', ...router])).stdout.trim()).toBe(
      'ttl:cli: autoscale on, 1 shard, ttl 1h (default)',
    );
    const zero = await tally(['configure', 'ttl:cli', '--ttl', '0', ...router]);
    expect(zero.code).toBe(2);
    expect(zero.stderr).toBe('tally: --ttl must be longer than 0, got "0"\n');
    const short = await tally(['configure', 'ttl:cli', '--ttl', '500ms', ...router]);
    expect(short.code).toBe(1);
    expect(short.stderr).toMatch(/^tally: invalid_argument: ttl_ms must be 1000\.\.\d+ [^\n]*\n$/);
  });

  it('a router restart keeps every TTL and restarts every idle clock (an expiry is postponed, never brought forward)', async () => {
    await tc.client.increment('ttl:restart', 1);
    await tc.client.configure('ttl:restart', { ttlMs: 30_000 });
    await pause(1_500);
    expect((await tc.client.describe('ttl:restart')).idleMs).toBeGreaterThanOrEqual(1_500);
    await tc.cluster.router.stop('SIGKILL');
    await tc.cluster.router.start();
    const after = await waitFor(() => tc.client.describe('ttl:restart'), { timeoutMs: 20_000, what: 'the restarted router' });
    expect(after).toMatchObject({ ttlMs: 30_000, ttlFrom: 'counter' });
    expect(after.idleMs).toBeLessThan(1_500);
    expect(await tc.client.describe('ttl:a')).toMatchObject({ ttlMs: 90_000, ttlFrom: 'counter' });
  }, 60_000);

  it('metrics: the router exports tally_counters_deleted_total{cause="ttl"} from its start', async () => {
    expect(await scrapeMetric(tc.routerMetricsPort, 'tally_counters_deleted_total', { cause: 'ttl' })).toBe(0);
  });
});

/** Creates counters (one increment each), newCountersPerCallMax per call. */
async function createCounters(tc: TestCluster, names: readonly string[]): Promise<void> {
  for (let start = 0; start < names.length; start += newCountersPerCallMax) {
    const items = names.slice(start, start + newCountersPerCallMax).map((counter) => ({ counter, amount: 1, idempotencyKey: null }));
    await tc.client.incrementBatch(items);
  }
}

describe('counter expiry', () => {
  // Expiry deletes through the same path as DeleteCounter (CounterLifecycle), in batches.
  it('ttl: 3,000 idle counters expire at a bounded rate while a hot one is written; the router stays responsive; caps count live counters', async () => {
    const ttlMs = 4_000;
    // Six seconds of expiry at expiryDeletesPerSecondMax: long enough to see the rate held and the hot counter served.
    const idleCount = 3_000;
    // Room for the idle counters and a few more: a second 3,000 fits only once the first are gone.
    const tc = await startCluster({
      pairs: 1,
      metrics: true,
      routerArgs: ['--counter-ttl-ms', String(ttlMs), '--counters-max', String(idleCount + 100)],
    });
    try {
      await tc.client.increment('hot', 1);
      await tc.client.increment('keep', 1);
      await tc.client.configure('keep', { ttlMs: 'never' });
      const firstCreatedMs = Date.now();
      const idle = Array.from({ length: idleCount }, (_, index) => `idle:${index}`);
      await createCounters(tc, idle);
      const idleLeft = async (): Promise<number> => {
        const names: string[] = [];
        for await (const counter of tc.client.allCounters({ prefix: 'idle:', pageSize: 1_000 })) names.push(counter.name);
        return names.length;
      };
      // Never early: within the TTL of the first creation every idle counter is there.
      if (Date.now() < firstCreatedMs + ttlMs - 500) expect(await idleLeft()).toBe(idleCount);

      // The hot counter is written every 100 ms and read every 50 ms throughout.
      let hotAcknowledged = 1n;
      const readLatenciesMs: number[] = [];
      let stopped = false;
      const writer = (async () => {
        while (!stopped) {
          await tc.client.increment('hot', 1);
          hotAcknowledged++;
          await pause(100);
        }
      })();
      const reader = (async () => {
        while (!stopped) {
          const startedMs = performance.now();
          await tc.client.read('hot');
          readLatenciesMs.push(performance.now() - startedMs);
          await pause(50);
        }
      })();
      let firstGoneMs: number | undefined;
      await waitFor(
        async () => {
          const left = await idleLeft();
          if (left < idleCount && firstGoneMs === undefined) firstGoneMs = Date.now();
          return left === 0;
        },
        { timeoutMs: 120_000, intervalMs: 500, what: 'every idle counter to expire' },
      );
      const expiryMs = Date.now() - firstGoneMs!;
      stopped = true;
      await Promise.all([writer, reader]);

      expect(firstGoneMs! - firstCreatedMs).toBeGreaterThanOrEqual(ttlMs);
      // Bounded rate: idleCount at expiryDeletesPerSecondMax cannot go much faster than this.
      expect(expiryMs).toBeGreaterThanOrEqual((idleCount / expiryDeletesPerSecondMax) * 1_000 * 0.75);
      expect((await tc.client.read('hot')).total).toBe(hotAcknowledged);
      expect((await tc.client.describe('keep')).ttlFrom).toBe('never');
      expect(await scrapeMetric(tc.routerMetricsPort, 'tally_counters_deleted_total', { cause: 'ttl' })).toBe(idleCount);
      await waitFor(async () => (await scrapeMetric(tc.routerMetricsPort, 'tally_directory_counters')) === 2, { timeoutMs: 5_000 });
      const sorted = [...readLatenciesMs].sort((left, right) => left - right);
      const p99Ms = sorted[Math.floor(sorted.length * 0.99)]!;
      console.info(
        `expiry: ${idleCount} counters in ${expiryMs} ms (${Math.round((idleCount / expiryMs) * 1_000)}/s); hot reads during it: ${sorted.length}, p99 ${p99Ms.toFixed(1)} ms, max ${sorted.at(-1)!.toFixed(1)} ms`,
      );
      // Honest on a loaded 2-core machine: a stalled event loop shows as reads of seconds.
      expect(p99Ms).toBeLessThan(250);
      // The caps count live counters only: as many again fit now.
      await createCounters(
        tc,
        idle.map((name) => `${name}:again`),
      );
    } finally {
      await tc.stop();
    }
  }, 240_000);
});
