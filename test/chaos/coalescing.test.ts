// The coalescing client under faults: a caller's deadline holds while its
// increment waits behind a stuck batch, and keyed increments coalesced
// across a primary's SIGKILL are counted once (G1, G2).
import { afterEach, describe, expect, it } from 'vitest';
import { status } from '@grpc/grpc-js';
import { TallyError } from '../../src/client/index.ts';
import { coalescedCallsInFlightMax } from '../../src/wire/index.ts';
import { Ledger, classify } from '../helpers/load.ts';
import { pause, scrapeMetric, startCluster, waitFor, waitForHealthy, type TestCluster } from '../helpers/cluster.ts';

const routerArgs = ['--failover-timeout-ms', '1500', '--follower-timeout-ms', '800'];

describe('chaos: coalescing client', () => {
  let tc: TestCluster | undefined;
  afterEach(async () => {
    tc?.cluster.router.signal('SIGCONT');
    await tc?.stop();
    tc = undefined;
  });

  it(
    'an increment whose deadline passes while queued behind stuck batches fails DEADLINE_EXCEEDED and is never sent',
    { timeout: 60_000 },
    async () => {
      tc = await startCluster({ pairs: 1, coalesce: true });
      const { client, cluster } = tc;
      await client.increment('stuck', 1);
      // A paused router takes the first call and answers nothing: it stays in flight.
      cluster.router.signal('SIGSTOP');
      // Stuck calls fill the client's in-flight slots, one tick apart (calls
      // made in the same tick would share a batch).
      const stuck: Promise<unknown>[] = [];
      for (let slot = 0; slot < coalescedCallsInFlightMax; slot++) {
        stuck.push(client.increment('stuck', 10, { deadlineMs: 30_000 }));
        await pause(50);
      }
      // Queued behind them: its deadline passes before their attempts' (2 s) do.
      const queued = await client.increment('stuck', 100, { deadlineMs: 200 }).catch((error: unknown) => error);
      expect(queued).toBeInstanceOf(TallyError);
      expect((queued as TallyError).grpcCode).toBe(status.DEADLINE_EXCEEDED);
      expect((queued as TallyError).message).toMatch(/not sent/);
      cluster.router.signal('SIGCONT');
      // Their keys carry them through their own timeouts: each applied once.
      await Promise.all(stuck);
      expect((await client.read('stuck')).total).toBe(1n + 10n * BigInt(coalescedCallsInFlightMax));
    },
  );

  it(
    'keyed increments coalesced across a primary SIGKILL are counted once: ok <= total <= ok + unknown, nothing lost',
    { timeout: 90_000 },
    async () => {
      tc = await startCluster({ pairs: 2, routerArgs, metrics: true, coalesce: true });
      const { client, cluster } = tc;
      const counters = ['kill:hot', 'kill:a', 'kill:b'];
      await client.incrementBatch(counters.map((counter) => ({ counter, amount: 1 })));
      await client.setShards('kill:hot', 4);
      await waitForHealthy(client);
      // Batches, on the client's IncrementStream or as IncrementBatch calls.
      const batchCount = async (): Promise<number> => {
        let count = 0;
        for (const rpc of ['increment_batch', 'increment_stream'])
          count += await scrapeMetric(tc!.routerMetricsPort, 'tally_increment_latency_seconds_count', { rpc }).catch(() => 0);
        return count;
      };
      const batchesBefore = await batchCount();
      const ledger = new Ledger();
      for (const counter of counters) ledger.record(counter, 1n, 'ok');
      let running = true;
      const writers = Array.from({ length: 48 }, async (_, writer) => {
        for (let sequence = 0; running; sequence++) {
          const counter = counters[(writer + sequence) % counters.length]!;
          const amount = BigInt((writer % 3) + 1);
          try {
            // The client's own key: its retries across the failover are safe.
            await client.increment(counter, amount, { deadlineMs: 15_000 });
            ledger.record(counter, amount, 'ok');
          } catch (error) {
            ledger.record(counter, amount, classify(error));
            ledger.recordError(error);
            await pause(20);
          }
        }
      });
      await waitFor(() => ledger.okCalls > 500, { timeoutMs: 30_000, what: 'load to build up' });
      await cluster.node(0, 'primary').process.stop('SIGKILL');
      const okAtKill = ledger.okCalls;
      await waitFor(() => ledger.okCalls > okAtKill + 1_000, { timeoutMs: 30_000, what: 'writes after the failover' });
      running = false;
      await Promise.all(writers);
      await ledger.expectWithinBounds(client);
      // Keyed and retried within 15 s: the failover cost no caller its increment.
      expect(ledger.unknownCalls, ledger.topReasons()).toBe(0);
      const batches = (await batchCount()) - batchesBefore;
      expect(batches).toBeGreaterThan(0);
      expect(batches).toBeLessThan(ledger.okCalls);
    },
  );
});
