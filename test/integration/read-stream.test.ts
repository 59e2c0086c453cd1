// ReadStream against a real router and nodes: each page is answered by its
// sequence number as ReadMany would answer it; bad input fails its page
// alone with ReadMany's status and changes nothing; a malformed message ends
// the stream; overlapping readMany() calls of the client travel on it; an
// exact total read through it is never a partial sum (G3), with writes
// racing it and a counter's shards on both pairs; a stream cut mid-page and
// a router killed with pages in flight fail those pages, never answer a
// wrong total; a CACHED page read again while fresh touches no node.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, credentials, status, type ClientDuplexStream } from '@grpc/grpc-js';
import { createTallyClient, TallyError, type TallyClient } from '../../src/client/index.ts';
import { CounterServiceClient } from '../../src/client/counter-proto.ts';
import {
  ErrorReason,
  decodeStatusDetails,
  counterNameBytesMax,
  decodeReadStreamResponse,
  encodeReadStreamRequest,
  readManyCountersMax,
  type LeanReadStreamResponse,
  type ReadStreamRequestInput,
} from '../../src/wire/index.ts';
import { scrapeMetric, startCluster, waitFor, type TestCluster } from '../helpers/cluster.ts';
import { startRouterProxy } from '../helpers/router-proxy.ts';

type StreamCall = ClientDuplexStream<ReadStreamRequestInput, LeanReadStreamResponse>;

/** A raw ReadStream: every answer by sequence, and how it ended. */
function openStream(address: string, deadlineMs = 30_000) {
  const client = new CounterServiceClient(address, credentials.createInsecure());
  const call = client.ReadStream({ deadline: Date.now() + deadlineMs }) as unknown as StreamCall;
  const answers = new Map<string, LeanReadStreamResponse>();
  let ended: { code: number; details: string } | undefined;
  call.on('data', (response: LeanReadStreamResponse) => answers.set(String(response.sequence), response));
  call.on('error', (error: { code: number; details: string }) => (ended = { code: error.code, details: error.details }));
  call.on('status', (callStatus: { code: number; details: string }) => {
    if (callStatus.code === status.OK) ended = { code: status.OK, details: callStatus.details };
  });
  return {
    call,
    answers,
    ended: () => ended,
    send(sequence: number | bigint, counters: string[], consistency: string | number = 'EXACT'): void {
      call.write({ sequence, counters, consistency });
    },
    async answer(sequence: number | bigint): Promise<LeanReadStreamResponse> {
      await waitFor(() => answers.has(String(sequence)) || ended !== undefined, { timeoutMs: 20_000, what: `answer ${sequence}` });
      const response = answers.get(String(sequence));
      if (response === undefined) throw new Error(`stream ended before answering ${sequence}: ${JSON.stringify(ended)}`);
      return response;
    },
    async end(): Promise<NonNullable<typeof ended>> {
      await waitFor(() => ended !== undefined, { timeoutMs: 20_000, what: 'the stream to end' });
      return ended!;
    },
    close(): void {
      call.cancel();
      client.close();
    },
  };
}

/** ReadStreams the router has seen end OK (tally_rpc_total counts a stream once, when it ends). */
const readStreamsEnded = (tc: TestCluster) =>
  scrapeMetric(tc.routerMetricsPort, 'tally_rpc_total', { method: 'ReadStream', code: 'OK' }).catch(() => 0);

const routerReadCalls = (tc: TestCluster) => scrapeMetric(tc.routerMetricsPort, 'tally_router_node_calls_total', { kind: 'read' });

describe('ReadStream', () => {
  let tc: TestCluster;
  let unary: TallyClient;

  beforeAll(async () => {
    // A refresh interval far past the test: a CACHED read touches nodes only when it misses.
    tc = await startCluster({ pairs: 2, metrics: true, routerArgs: ['--refresh-interval-ms', '600000'] });
    unary = createTallyClient({ address: tc.cluster.routerAddress, deadlineMs: 10_000, readStream: false });
    await unary.incrementBatch([
      { counter: 'page:a', amount: 3 },
      { counter: 'page:b', amount: -2 },
      { counter: 'page:c', amount: 2n ** 60n },
    ]);
  });
  afterAll(async () => {
    unary?.close();
    await tc?.stop();
  });

  it('router: each page is answered by its sequence number with what ReadMany answers; a half-closed stream ends OK', async () => {
    const stream = openStream(tc.cluster.routerAddress);
    try {
      const page = ['page:c', 'page:a', 'page:never-written', 'page:b', 'page:a'];
      const sequences: (number | bigint)[] = [9, 2n ** 60n + 1n, 1];
      for (const sequence of sequences) stream.send(sequence, page, sequence === 1 ? 'CACHED' : 'EXACT');
      const byUnary = await unary.readMany(page);
      for (const sequence of sequences) {
        const { error, values } = await stream.answer(sequence);
        expect(error).toBeNull();
        expect(values.map((value) => [value.counter, BigInt(value.total), value.exact, value.shards])).toEqual(
          byUnary.map((value) => [value.counter, value.total, sequence !== 1, value.shards]),
        );
      }
      expect(byUnary.map((value) => value.total)).toEqual([2n ** 60n, 3n, 0n, -2n, 3n]);
      stream.call.end();
      expect((await stream.end()).code).toBe(status.OK);
    } finally {
      stream.close();
    }
  });

  it('router: a bad page (empty, oversized, unknown consistency, a name too long or empty) is answered with ReadMany status and NOT_APPLIED; the stream goes on; nothing changes', async () => {
    const countersBefore = (await unary.clusterStatus()).counters;
    const stream = openStream(tc.cluster.routerAddress);
    try {
      const tooLong = 'x'.repeat(counterNameBytesMax + 1);
      stream.send(1, ['page:a']);
      stream.send(2, []);
      stream.send(
        3,
        Array.from({ length: readManyCountersMax + 1 }, (_, index) => `page:over:${index}`),
      );
      stream.send(4, ['page:a'], 7);
      stream.send(5, ['page:a', tooLong]);
      stream.send(6, ['page:a', '']);
      stream.send(7, ['page:a', 'page:b']);
      const unaryError = await unary.readMany(['page:a', tooLong]).catch((error: unknown) => error);
      const expected: [number, number][] = [
        [2, status.INVALID_ARGUMENT],
        [3, status.RESOURCE_EXHAUSTED],
        [4, status.INVALID_ARGUMENT],
        [5, status.INVALID_ARGUMENT],
        [6, status.INVALID_ARGUMENT],
      ];
      for (const [sequence, code] of expected) {
        const { error, values } = await stream.answer(sequence);
        expect(values, `page ${sequence}`).toEqual([]);
        expect(error?.code, `page ${sequence}: ${error?.message}`).toBe(code);
        expect(error?.reason).toBe(ErrorReason.notApplied);
        expect(decodeStatusDetails(error!.statusDetails)?.reason).toBe(ErrorReason.notApplied);
      }
      expect((await stream.answer(4)).error?.message).toMatch(/consistency must be EXACT or CACHED, got 7/);
      expect((await stream.answer(5)).error?.message).toBe((unaryError as Error).message);
      expect((await stream.answer(1)).values.map((value) => BigInt(value.total))).toEqual([3n]);
      expect((await stream.answer(7)).values.map((value) => BigInt(value.total))).toEqual([3n, -2n]);
      expect(stream.ended()).toBeUndefined();
    } finally {
      stream.close();
    }
    expect((await unary.clusterStatus()).counters).toBe(countersBefore);
    expect((await unary.readMany(['page:a', 'page:b', 'page:over:0'])).map((value) => value.total)).toEqual([3n, -2n, 0n]);
  });

  it('router: a malformed message ends the stream INVALID_ARGUMENT; a page answered before it stands', async () => {
    const channel = new Client(tc.cluster.routerAddress, credentials.createInsecure());
    const call = channel.makeBidiStreamRequest('/counter.v1.CounterService/ReadStream', (bytes: Buffer) => bytes, decodeReadStreamResponse);
    const answers: LeanReadStreamResponse[] = [];
    let ended: { code: number; details: string } | undefined;
    call.on('data', (response: LeanReadStreamResponse) => answers.push(response));
    call.on('error', (error: { code: number; details: string }) => (ended = error));
    try {
      call.write(encodeReadStreamRequest({ sequence: 1, counters: ['page:a'] }));
      await waitFor(() => answers.length === 1, { timeoutMs: 10_000, what: 'the first answer' });
      expect(BigInt(answers[0]!.values[0]!.total)).toBe(3n);
      // Field 15 (the sequence number), a varint cut after its first byte.
      call.write(Buffer.from([0x78, 0xff]));
      await waitFor(() => ended !== undefined, { timeoutMs: 10_000, what: 'the stream to end' });
      expect(ended!.code).toBe(status.INVALID_ARGUMENT);
      expect(ended!.details).toMatch(/malformed/);
    } finally {
      call.cancel();
      channel.close();
    }
  });

  it('client: overlapping readMany calls travel on the ReadStream, and an exact total read there is never a partial sum while writes race it (G3)', async () => {
    const name = 'page:racing';
    await unary.increment(name, 1);
    await unary.setShards(name, 6);
    const reader = createTallyClient({ address: tc.cluster.routerAddress, deadlineMs: 10_000 });
    const streamsBefore = await readStreamsEnded(tc);
    let acknowledged = 1n;
    let sent = 1n;
    let writing = true;
    const writer = (async () => {
      while (writing) {
        sent += 10n;
        await unary.incrementBatch(Array.from({ length: 10 }, () => ({ counter: name, amount: 1 })));
        acknowledged += 10n;
      }
    })();
    try {
      let reads = 0;
      const readers = Array.from({ length: 4 }, async () => {
        for (let round = 0; round < 12; round++) {
          const floor = acknowledged;
          const [value, fixed] = await reader.readMany([name, 'page:a']);
          // Everything acknowledged before the read began, nothing never sent: a sum of every shard.
          expect(value!.total).toBeGreaterThanOrEqual(floor);
          expect(value!.total).toBeLessThanOrEqual(sent);
          expect(value!.shards).toBe(6);
          expect(fixed!.total).toBe(3n);
          reads++;
        }
      });
      await Promise.all(readers);
      expect(reads).toBe(48);
    } finally {
      writing = false;
      await writer;
      reader.close();
    }
    expect((await unary.read(name)).total).toBe(acknowledged);
    // The client's stream ends OK when it is closed: the reads went on it.
    await waitFor(async () => (await readStreamsEnded(tc)) > streamsBefore, { timeoutMs: 10_000, what: 'the client ReadStream to end' });
  });

  it('router: a CACHED page read again while fresh is answered from router memory without a node call', async () => {
    const page = ['page:a', 'page:b', 'page:c'];
    const first = await unary.readMany(page, { consistency: 'cached' });
    expect(first.map((value) => value.total)).toEqual([3n, -2n, 2n ** 60n]);
    const callsBefore = await routerReadCalls(tc);
    const stream = openStream(tc.cluster.routerAddress);
    try {
      for (let sequence = 1; sequence <= 20; sequence++) stream.send(sequence, page, 'CACHED');
      for (let sequence = 1; sequence <= 20; sequence++) {
        const { error, values } = await stream.answer(sequence);
        expect(error).toBeNull();
        expect(values.map((value) => [BigInt(value.total), value.exact])).toEqual([
          [3n, false],
          [-2n, false],
          [2n ** 60n, false],
        ]);
      }
      expect((await unary.readMany(page, { consistency: 'cached' })).map((value) => value.total)).toEqual([3n, -2n, 2n ** 60n]);
    } finally {
      stream.close();
    }
    expect(await routerReadCalls(tc)).toBe(callsBefore);
    // An exact page does call the nodes: the count above would have seen it.
    await unary.readMany(page);
    expect(await routerReadCalls(tc)).toBeGreaterThan(callsBefore);
  });

  it('router: a stream cut mid-page fails its unanswered pages UNAVAILABLE, never a partial total; the router serves the next call', async () => {
    // Answers held back 150 ms: when the proxy drops, pages the router read are unanswered.
    const proxy = await startRouterProxy(tc.cluster.routerAddress, 150);
    const reader = createTallyClient({ address: proxy.address, deadlineMs: 10_000 });
    try {
      const results: Promise<bigint | TallyError>[] = [];
      const sender = setInterval(() => {
        for (let index = 0; index < 3; index++)
          results.push(
            reader.readMany(['page:a', 'page:c']).then(
              (values) => values[0]!.total + values[1]!.total,
              (error: TallyError) => error,
            ),
          );
      }, 10);
      await waitFor(async () => results.length > 30, { timeoutMs: 10_000, what: 'pages in flight' });
      await proxy.kill();
      clearInterval(sender);
      const settled = await Promise.all(results);
      const failed = settled.filter((result) => result instanceof TallyError);
      expect(failed.length).toBeGreaterThan(0);
      for (const failure of failed) {
        expect(failure.code, failure.message).toMatch(/unavailable|deadline_exceeded/);
      }
      for (const total of settled.filter((result) => typeof result === 'bigint')) expect(total).toBe(3n + 2n ** 60n);
    } finally {
      reader.close();
      await proxy.kill();
    }
    expect((await unary.readMany(['page:a'])).map((value) => value.total)).toEqual([3n]);
  });

  it('router: killed with pages in flight on a stream, those pages fail UNAVAILABLE and none answers a wrong total; after its restart the stream reopens', async () => {
    const reader = createTallyClient({ address: tc.cluster.routerAddress, deadlineMs: 5_000 });
    try {
      await reader.readMany(['page:a']);
      const results: Promise<bigint | TallyError>[] = [];
      for (let index = 0; index < 40; index++)
        results.push(
          reader.readMany(['page:a', 'page:b']).then(
            (values) => values[0]!.total + values[1]!.total,
            (error: TallyError) => error,
          ),
        );
      await tc.cluster.router.stop('SIGKILL');
      const settled = await Promise.all(results);
      for (const result of settled) {
        if (typeof result === 'bigint') expect(result).toBe(1n);
        else expect(result.code, result.message).toMatch(/unavailable|deadline_exceeded/);
      }
      await tc.cluster.router.start();
      await waitFor(
        async () => {
          const pages = await Promise.all([0, 1, 2].map(() => reader.readMany(['page:a', 'page:b']).catch(() => undefined)));
          return pages.every((page) => page !== undefined && page[0]!.total === 3n && page[1]!.total === -2n);
        },
        { timeoutMs: 20_000, what: 'pages on a new stream after the restart' },
      );
    } finally {
      reader.close();
    }
  });
});
