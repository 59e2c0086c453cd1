// A client with two router addresses loses the router it uses under load.
// With the other address dead too, calls fail as with one address; with the
// other live (a proxy to the same router, dropped while answers are held
// back), keyed writes and reads move there and unkeyed writes that may have
// applied are not sent again. Either way no increment counts twice:
// ok <= total <= ok + unknown against an exact read.
import { afterEach, describe, expect, it } from 'vitest';
import { createTallyClient, type TallyClient } from '../../src/client/index.ts';
import { startCluster, waitFor, type TestCluster } from '../helpers/cluster.ts';
import { Ledger, classify } from '../helpers/load.ts';
import { deadAddress, startRouterProxy } from '../helpers/router-proxy.ts';
import { pause } from '../helpers/pause.ts';

interface Writer {
  client: TallyClient;
  counter: string;
  keyed: boolean;
  concurrency: number;
}

/** Writers of positive amounts into one ledger until stop(); keyed ones let the client make each call's key. */
function startWriters(writers: Writer[], ledger: Ledger): { stop: () => Promise<void> } {
  let running = true;
  const loops = writers.flatMap((writer) =>
    Array.from({ length: writer.concurrency }, async (_, index) => {
      const amount = BigInt((index % 5) + 1);
      while (running) {
        try {
          await writer.client.increment(writer.counter, amount, { deadlineMs: 3_000, ...(writer.keyed ? {} : { idempotencyKey: null }) });
          ledger.record(writer.counter, amount, 'ok');
        } catch (error) {
          ledger.record(writer.counter, amount, classify(error));
          ledger.recordError(error);
          await pause(10);
        }
      }
    }),
  );
  return {
    stop: async () => {
      running = false;
      await Promise.all(loops);
    },
  };
}

/** Exact reads until stop(): how many succeeded and the failures. */
function startReaders(
  client: TallyClient,
  counter: string,
  concurrency: number,
): { stop: () => Promise<{ ok: number; failures: string[] }> } {
  let running = true;
  let ok = 0;
  const failures: string[] = [];
  const loops = Array.from({ length: concurrency }, async () => {
    while (running) {
      try {
        await client.read(counter, { deadlineMs: 3_000 });
        ok++;
      } catch (error) {
        failures.push((error as Error).message);
        await pause(10);
      }
    }
  });
  return {
    stop: async () => {
      running = false;
      await Promise.all(loops);
      return { ok, failures };
    },
  };
}

describe('router loss under load', () => {
  let tc: TestCluster | undefined;
  const clients: TallyClient[] = [];
  afterEach(async () => {
    for (const client of clients.splice(0)) client.close();
    await tc?.stop();
    tc = undefined;
  });

  it('the router a client uses is SIGKILLed mid-load and its other address is dead: calls fail UNAVAILABLE as with one address, none counts twice', async () => {
    tc = await startCluster({ pairs: 1 });
    const live = tc.cluster.routerAddress;
    const addresses = [live, await deadAddress()];
    const plain = createTallyClient({ addresses });
    const coalescing = createTallyClient({ addresses, coalesce: true });
    clients.push(plain, coalescing);
    const ledger = new Ledger();
    const load = startWriters(
      [
        { client: plain, counter: 'loss:unkeyed', keyed: false, concurrency: 8 },
        { client: plain, counter: 'loss:keyed', keyed: true, concurrency: 8 },
        { client: coalescing, counter: 'loss:coalesced-unkeyed', keyed: false, concurrency: 8 },
        { client: coalescing, counter: 'loss:coalesced-keyed', keyed: true, concurrency: 8 },
      ],
      ledger,
    );
    await waitFor(() => ledger.okCalls > 400, { timeoutMs: 20_000, what: '400 increments before the kill' });
    await tc.cluster.router.stop('SIGKILL');
    const okAtKill = ledger.okCalls;
    await waitFor(() => ledger.unknownCalls > 50, { timeoutMs: 20_000, what: 'calls failing while no router is up' });
    await load.stop();
    // Nothing succeeds without a router: at most the answers already on their way.
    expect(ledger.okCalls - okAtKill).toBeLessThan(64);
    // As with one address: every failure leaves the outcome unknown (UNAVAILABLE or DEADLINE_EXCEEDED), none is another code.
    expect(ledger.failedCalls, ledger.topReasons()).toBe(0);
    expect(ledger.topReasons(20)).toMatch(/UNAVAILABLE|No connection established|Connection dropped|not sent to/i);

    await tc.cluster.router.start();
    const fresh = createTallyClient({ address: live, deadlineMs: 10_000 });
    clients.push(fresh);
    await waitFor(() => fresh.read('loss:unkeyed').then(() => true), { timeoutMs: 30_000, what: 'the restarted router' });
    await ledger.expectWithinBounds(fresh);
  });

  it('the router a client uses is lost mid-load while its other address lives: keyed writes and reads move there, unkeyed writes that may have applied fail and are not sent again', async () => {
    tc = await startCluster({ pairs: 1 });
    const live = tc.cluster.routerAddress;
    // Answers held back 100 ms: when the proxy drops, calls the router has applied are still unanswered.
    const proxy = await startRouterProxy(live, 100);
    const addresses = [proxy.address, live];
    const plain = createTallyClient({ addresses });
    const coalescing = createTallyClient({ addresses, coalesce: true });
    clients.push(plain, coalescing);
    const ledger = new Ledger();
    const load = startWriters(
      [
        { client: plain, counter: 'moved:unkeyed', keyed: false, concurrency: 8 },
        { client: plain, counter: 'moved:keyed', keyed: true, concurrency: 8 },
        { client: coalescing, counter: 'moved:coalesced-unkeyed', keyed: false, concurrency: 8 },
        { client: coalescing, counter: 'moved:coalesced-keyed', keyed: true, concurrency: 8 },
      ],
      ledger,
    );
    const readers = startReaders(plain, 'moved:keyed', 4);
    await waitFor(() => ledger.okCalls > 400, { timeoutMs: 20_000, what: '400 increments before the loss' });
    await proxy.kill();
    const okAtLoss = ledger.okCalls;
    await waitFor(() => ledger.okCalls > okAtLoss + 400, { timeoutMs: 20_000, what: '400 more increments through the live router' });
    await load.stop();
    const reads = await readers.stop();

    const fresh = createTallyClient({ address: live, deadlineMs: 10_000 });
    clients.push(fresh);
    await ledger.expectWithinBounds(fresh);
    // Unkeyed calls in flight through the lost router failed, outcome unknown, as with one address.
    expect(ledger.unknown.get('moved:unkeyed') ?? 0n, ledger.topReasons()).toBeGreaterThan(0n);
    expect(ledger.failedCalls, ledger.topReasons()).toBe(0);
    // Keyed calls and reads all succeeded: each went again, to the live router.
    expect(ledger.unknown.get('moved:keyed') ?? 0n, ledger.topReasons()).toBe(0n);
    expect(ledger.unknown.get('moved:coalesced-keyed') ?? 0n, ledger.topReasons()).toBe(0n);
    expect(reads.failures).toEqual([]);
    expect(reads.ok).toBeGreaterThan(0);

    // The router applied some of the unkeyed calls whose answers were lost: a
    // client that sent them again would have gone past ok + unknown above.
    const applied = await fresh.readMany(['moved:unkeyed', 'moved:coalesced-unkeyed']);
    const unanswered = applied.reduce((sum, read) => sum + read.total - (ledger.ok.get(read.counter) ?? 0n), 0n);
    expect(unanswered).toBeGreaterThan(0n);
  });
});
