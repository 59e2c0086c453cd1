// The router's call guards attacked: floods of maximum-size messages without
// a token and with one, more calls than the router serves at once, and calls
// that would outlive the deadline ceiling. Every refused call must cost the
// router its headers, not a decode, and an honest caller must keep being served.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { credentials, makeGenericClientConstructor, Metadata, status, type Client, type ServiceError } from '@grpc/grpc-js';
import { listRequestBytesMax } from '../../src/common/index.ts';
import { messageBytesMax } from '../../src/wire/index.ts';
import { createTallyClient, type TallyClient } from '../../src/client/index.ts';
import { scrapeMetric, startCluster, waitFor, type TestCluster } from '../helpers/cluster.ts';
import { rejection } from '../helpers/rejection.ts';
import { makeTempDir, removeTempDir } from '../helpers/temp-dir.ts';
import { pause } from '../helpers/pause.ts';

/** An IncrementBatch of `bytes` (just under), as wire bytes: items {counter: "f", amount: 1}, 7 bytes each. */
function incrementBatchBytes(bytes: number): Buffer {
  const item = Buffer.from([0x0a, 0x05, 0x0a, 0x01, 0x66, 0x10, 0x01]);
  const count = Math.floor(bytes / item.length);
  const message = Buffer.alloc(count * item.length);
  for (let offset = 0; offset < message.length; offset += item.length) item.copy(message, offset);
  return message;
}

/** A client of one CounterService method that sends bytes as they are: what an attacker's client would send. */
function rawMethodClient(
  method: string,
  address: string,
  options: Record<string, number> = {},
): Client & Record<string, (...args: unknown[]) => void> {
  const passThrough = (bytes: Buffer): Buffer => bytes;
  const Constructor = makeGenericClientConstructor(
    {
      [method]: {
        path: `/counter.v1.CounterService/${method}`,
        requestStream: false,
        responseStream: false,
        requestSerialize: passThrough,
        requestDeserialize: passThrough,
        responseSerialize: passThrough,
        responseDeserialize: passThrough,
      },
    },
    `Raw${method}`,
  );
  return new Constructor(address, credentials.createInsecure(), options) as Client & Record<string, (...args: unknown[]) => void>;
}

function sendRaw(address: string, message: Buffer, token: string | undefined, times: number, concurrency: number): Promise<number[]> {
  const raw = rawMethodClient('IncrementBatch', address, { 'grpc.max_send_message_length': messageBytesMax });
  const metadata = new Metadata();
  if (token !== undefined) metadata.set('authorization', `Bearer ${token}`);
  const codes: number[] = [];
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < times) {
      next++;
      const code = await new Promise<number>((resolve) =>
        raw.IncrementBatch!(message, metadata, { deadline: Date.now() + 30_000 }, (error: ServiceError | null) =>
          resolve(error === null ? status.OK : error.code),
        ),
      );
      codes.push(code);
    }
  };
  return Promise.all(Array.from({ length: concurrency }, worker)).then(() => {
    raw.close();
    return codes;
  });
}

/** Resident memory of a process now and its peak so far, in MB (Linux /proc). */
function memoryMb(pid: number): { rssMb: number; peakMb: number } {
  const text = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string): number => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(text)![1]) / 1024;
  return { rssMb: kb('VmRSS'), peakMb: kb('VmHWM') };
}

/** Reads an honest counter every intervalMs until stopped; the slowest read, in ms. */
function honestReads(client: TallyClient, counter: string): { stop: () => Promise<{ slowestMs: number; reads: number }> } {
  let running = true;
  let slowestMs = 0;
  let reads = 0;
  const loop = (async () => {
    while (running) {
      const startedMs = performance.now();
      await client.read(counter);
      slowestMs = Math.max(slowestMs, performance.now() - startedMs);
      reads++;
      await pause(50);
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      return { slowestMs, reads };
    },
  };
}

describe('call guards', () => {
  let tc: TestCluster;
  let tokenDir: string;
  let honest: TallyClient;
  const adminToken = 'admin-token-'.padEnd(40, 'a');
  const clientToken = 'client-token-'.padEnd(40, 'c');

  beforeAll(async () => {
    tokenDir = makeTempDir('tokens');
    fs.writeFileSync(path.join(tokenDir, 'admin.token'), adminToken);
    fs.writeFileSync(path.join(tokenDir, 'client.token'), clientToken);
    tc = await startCluster({
      pairs: 1,
      metrics: true,
      routerArgs: [
        '--admin-token-file',
        path.join(tokenDir, 'admin.token'),
        '--client-token-file',
        path.join(tokenDir, 'client.token'),
        '--large-calls-in-flight-max',
        '8',
      ],
    });
    honest = createTallyClient({ address: tc.cluster.routerAddress, token: clientToken, deadlineMs: 5_000 });
    await honest.increment('honest', 5n);
  });

  afterAll(async () => {
    honest?.close();
    await tc?.stop();
    removeTempDir(tokenDir);
  });

  it('unauthenticated flood: 48 IncrementBatch calls of ~3.9 MB, 8 at a time, are refused on their headers; memory and honest reads hold', async () => {
    const pid = tc.cluster.router.pid!;
    const before = memoryMb(pid);
    const reads = honestReads(honest, 'honest');
    const codes = await sendRaw(tc.cluster.routerAddress, incrementBatchBytes(3_900_000), undefined, 48, 8);
    const { slowestMs, reads: readCount } = await reads.stop();
    const after = memoryMb(pid);
    const growthMb = after.peakMb - before.rssMb;
    console.log(
      `unauthenticated flood: router RSS ${before.rssMb.toFixed(0)} MB -> peak ${after.peakMb.toFixed(0)} MB (+${growthMb.toFixed(0)}); slowest of ${readCount} honest reads ${slowestMs.toFixed(0)} ms`,
    );
    expect(new Set(codes)).toEqual(new Set([status.UNAUTHENTICATED]));
    expect(codes).toHaveLength(48);
    // Before the guards: 109 MB -> 2.5 GB and honest reads timing out at 5 s.
    expect(growthMb).toBeLessThan(150);
    expect(readCount).toBeGreaterThan(0);
    expect(slowestMs).toBeLessThan(1_000);
    expect((await honest.read('f')).total).toBe(0n);
    expect(
      await scrapeMetric(tc.routerMetricsPort, 'tally_router_calls_refused_total', { reason: 'unauthenticated' }),
    ).toBeGreaterThanOrEqual(48);
  });

  it("a token holder's flood of batches over IncrementBatch's byte bound is refused undecoded: RESOURCE_EXHAUSTED, nothing applied", async () => {
    const pid = tc.cluster.router.pid!;
    const before = memoryMb(pid);
    const reads = honestReads(honest, 'honest');
    const message = incrementBatchBytes(3_900_000);
    expect(message.length).toBeGreaterThan(listRequestBytesMax.IncrementBatch!);
    const codes = await sendRaw(tc.cluster.routerAddress, message, clientToken, 48, 8);
    const { slowestMs } = await reads.stop();
    const after = memoryMb(pid);
    console.log(
      `authenticated oversize flood: router RSS ${before.rssMb.toFixed(0)} MB -> peak ${after.peakMb.toFixed(0)} MB; slowest honest read ${slowestMs.toFixed(0)} ms`,
    );
    expect(new Set(codes)).toEqual(new Set([status.RESOURCE_EXHAUSTED]));
    // Each in-flight call may hold its message (8 large calls in flight here); nothing is decoded.
    expect(after.peakMb - before.rssMb).toBeLessThan(250);
    expect(slowestMs).toBeLessThan(1_000);
    expect((await honest.read('f')).total).toBe(0n);
  });

  it('a message over its method bound names the bound; a small RPC cannot carry megabytes', async () => {
    // Read's request is a counter name: 4 KiB bounds it, whatever the server-wide 4 MiB message limit.
    const raw = rawMethodClient('Read', tc.cluster.routerAddress);
    const metadata = new Metadata();
    metadata.set('authorization', `Bearer ${clientToken}`);
    // Field 1 (counter), a string of 100,000 bytes.
    const name = Buffer.alloc(100_000, 0x61);
    const message = Buffer.concat([Buffer.from([0x0a, 0xa0, 0x8d, 0x06]), name]);
    const error = await new Promise<ServiceError | null>((resolve) =>
      raw.Read!(message, metadata, (failure: ServiceError | null) => resolve(failure)),
    );
    raw.close();
    expect(error?.code).toBe(status.RESOURCE_EXHAUSTED);
    expect(error?.details).toMatch(/Read request of 100004 bytes; the limit for Read is 4096 bytes/);
  });

  it('more large calls than the router serves at once: the excess is refused RESOURCE_EXHAUSTED at once; small calls still pass', async () => {
    // Calls that stay in flight: the pair's primary is paused, so each batch waits for its node call.
    const primary = tc.cluster.node(0, 'primary');
    primary.process.signal('SIGSTOP');
    try {
      const batch = Array.from({ length: 10 }, (_, index) => ({ counter: `held-${index}`, amount: 1n }));
      // One attempt per call: the client would otherwise send a busy refusal (NOT_APPLIED, with a RetryInfo) again.
      const once = createTallyClient({ address: tc.cluster.routerAddress, token: clientToken, attemptsMax: 1 });
      const outcomes = Array.from({ length: 20 }, () =>
        once.incrementBatch(batch, { deadlineMs: 3_000 }).then(
          () => 'ok',
          (error: { grpcCode: number; message: string }) => (error.grpcCode === status.RESOURCE_EXHAUSTED ? error.message : 'other'),
        ),
      );
      // The refusals come back while the held calls still wait.
      const busy = await waitFor(
        async () => {
          const settled = await Promise.all(outcomes.map((outcome) => Promise.race([outcome, Promise.resolve('pending')])));
          const refused = settled.filter((outcome) => outcome.startsWith('server busy'));
          return refused.length >= 12 ? refused : undefined;
        },
        { timeoutMs: 2_000, what: '12 of 20 batches refused as busy' },
      );
      expect(busy[0]).toMatch(/^server busy: 8 large calls in flight/);
      expect(await scrapeMetric(tc.routerMetricsPort, 'tally_router_calls_in_flight')).toBeGreaterThanOrEqual(8);
      // A read is not a large call: it is not refused (it may still wait for the paused node; only its status matters).
      const health = await honest.clusterStatus().catch((error: { grpcCode: number }) => error.grpcCode);
      expect(health).not.toBe(status.RESOURCE_EXHAUSTED);
      primary.process.signal('SIGCONT');
      await Promise.all(outcomes);
      once.close();
    } finally {
      primary.process.signal('SIGCONT');
    }
    expect(await scrapeMetric(tc.routerMetricsPort, 'tally_router_calls_refused_total', { reason: 'busy' })).toBeGreaterThanOrEqual(12);
    await waitFor(async () => (await scrapeMetric(tc.routerMetricsPort, 'tally_router_calls_in_flight')) === 0, {
      timeoutMs: 10_000,
      what: 'calls in flight back to 0',
    });
  });
});

describe('deadline ceiling', () => {
  let tc: TestCluster;

  beforeAll(async () => {
    tc = await startCluster({ pairs: 1, routerArgs: ['--call-deadline-max-ms', '500'] });
  });

  afterAll(async () => {
    await tc?.stop();
  });

  it('a call asking for more time than the ceiling ends DEADLINE_EXCEEDED at the ceiling, naming it; the router keeps serving', async () => {
    await tc.client.increment('slow', 1n);
    const primary = tc.cluster.node(0, 'primary');
    primary.process.signal('SIGSTOP');
    try {
      const startedMs = Date.now();
      const error = await rejection(tc.client.reconcile('slow', { deadlineMs: 20_000 }));
      const tookMs = Date.now() - startedMs;
      expect(error.grpcCode).toBe(status.DEADLINE_EXCEEDED);
      expect(error.message).toMatch(/ends any call after 500 ms/);
      expect(tookMs).toBeLessThan(5_000);
    } finally {
      primary.process.signal('SIGCONT');
    }
    await waitFor(async () => (await tc.client.read('slow')).total === 1n, { timeoutMs: 15_000, what: 'reads after SIGCONT' });
  });
});
