// IncrementStream against a real router and nodes, spoken raw: each batch is
// answered by its sequence number as IncrementBatch would answer it; a bad
// batch fails alone; a malformed message ends the stream; a flood is refused
// RESOURCE_EXHAUSTED by sequence; a stream cut mid-batch leaves its batches
// of unknown outcome within ok <= total <= ok + unknown.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, credentials, status, type ClientDuplexStream } from '@grpc/grpc-js';
import { createTallyClient, type TallyClient } from '../../src/client/index.ts';
import { CounterServiceClient } from '../../src/client/counter-proto.ts';
import {
  ErrorReason,
  decodeStatusDetails,
  batchItemsMax,
  decodeIncrementStreamResponse,
  encodeIncrementStreamRequest,
  streamBatchesInFlightMax,
  type IncrementRequestInput,
  type IncrementStreamRequestInput,
  type LeanIncrementStreamResponse,
} from '../../src/wire/index.ts';
import { startCluster, waitFor, type TestCluster } from '../helpers/cluster.ts';
import { startLoad } from '../helpers/load.ts';
import { startRouterProxy } from '../helpers/router-proxy.ts';

type StreamCall = ClientDuplexStream<IncrementStreamRequestInput, LeanIncrementStreamResponse>;

/** A raw IncrementStream: what it sends, every answer by sequence, and how it ended. */
function openStream(address: string, deadlineMs = 30_000) {
  const client = new CounterServiceClient(address, credentials.createInsecure());
  const call = client.IncrementStream({ deadline: Date.now() + deadlineMs }) as unknown as StreamCall;
  const answers = new Map<string, LeanIncrementStreamResponse>();
  const order: string[] = [];
  let ended: { code: number; details: string; reason?: string | undefined } | undefined;
  call.on('data', (response: LeanIncrementStreamResponse) => {
    answers.set(String(response.sequence), response);
    order.push(String(response.sequence));
  });
  call.on('error', (error: { code: number; details: string; metadata?: { get(key: string): unknown[] } }) => {
    const bytes = error.metadata?.get('grpc-status-details-bin')[0];
    ended = { code: error.code, details: error.details, reason: Buffer.isBuffer(bytes) ? decodeStatusDetails(bytes)?.reason : undefined };
  });
  call.on('status', (callStatus: { code: number; details: string }) => {
    if (callStatus.code === status.OK) ended = { code: status.OK, details: callStatus.details };
  });
  return {
    call,
    answers,
    order,
    ended: () => ended,
    send(sequence: number | bigint, items: IncrementRequestInput[]): void {
      call.write({ sequence, items });
    },
    async answer(sequence: number | bigint): Promise<LeanIncrementStreamResponse> {
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

const unkeyed = (counter: string, amount = 1): IncrementRequestInput => ({ counter, amount });

describe('IncrementStream', () => {
  let tc: TestCluster;
  let unary: TallyClient;

  beforeAll(async () => {
    tc = await startCluster({ pairs: 2, metrics: true });
    unary = createTallyClient({ address: tc.cluster.routerAddress, deadlineMs: 10_000 });
  });
  afterAll(async () => {
    unary?.close();
    await tc?.stop();
  });

  it('router: each batch is answered by its sequence number with one result per item, in any order; a half-closed stream ends OK', async () => {
    const stream = openStream(tc.cluster.routerAddress);
    try {
      // Sequence numbers are the client's: any order, any uint64.
      const sequences: (number | bigint)[] = [7, 3, 2n ** 60n + 1n, 1];
      // The first batch creates 1,000 counters (a directory transaction); those after it touch one: they may well be answered first.
      stream.send(
        sequences[0]!,
        Array.from({ length: 1_000 }, (_, index) => unkeyed(`stream:new:${index}`)),
      );
      for (const sequence of sequences.slice(1)) stream.send(sequence, [unkeyed('stream:one', 2), unkeyed('stream:two', 3)]);
      for (const sequence of sequences) {
        const response = await stream.answer(sequence);
        expect(response.error).toBeNull();
        expect(response.results).toHaveLength(sequence === 7 ? 1_000 : 2);
        expect(response.results.every((result) => result.applied)).toBe(true);
      }
      expect(stream.order.sort()).toEqual(sequences.map(String).sort());
      stream.call.end();
      expect((await stream.end()).code).toBe(status.OK);
      const [one, two, created] = await unary.readMany(['stream:one', 'stream:two', 'stream:new:999']);
      expect([one!.total, two!.total, created!.total]).toEqual([6n, 9n, 1n]);
    } finally {
      stream.close();
    }
  });

  it('router: an idempotency key dedups across the stream and unary calls', async () => {
    const stream = openStream(tc.cluster.routerAddress);
    try {
      const key = Buffer.from('stream-key-1');
      stream.send(1, [{ counter: 'stream:keyed', amount: 5, idempotencyKey: key }]);
      expect((await stream.answer(1)).results[0]!.applied).toBe(true);
      expect((await unary.increment('stream:keyed', 5, { idempotencyKey: key })).applied).toBe(false);
      const unaryKey = Buffer.from('unary-key-1');
      expect((await unary.increment('stream:keyed', 7, { idempotencyKey: unaryKey })).applied).toBe(true);
      stream.send(2, [
        { counter: 'stream:keyed', amount: 7, idempotencyKey: unaryKey },
        { counter: 'stream:keyed', amount: 5, idempotencyKey: key },
      ]);
      const again = await stream.answer(2);
      expect(again.results.map((result) => result.applied)).toEqual([false, false]);
      expect((await unary.read('stream:keyed')).total).toBe(12n);
    } finally {
      stream.close();
    }
  });

  it('router: a bad batch is answered by its sequence with the status, message and reason IncrementBatch gives it; the stream goes on', async () => {
    const stream = openStream(tc.cluster.routerAddress);
    try {
      const bad: IncrementRequestInput[] = [unkeyed('stream:fine'), unkeyed('')];
      stream.send(1, [unkeyed('stream:fine')]);
      stream.send(2, bad);
      stream.send(3, []);
      stream.send(
        4,
        Array.from({ length: batchItemsMax + 1 }, () => unkeyed('stream:fine')),
      );
      stream.send(5, [{ counter: 'stream:fine', amount: 0 }]);
      stream.send(6, [unkeyed('stream:fine')]);
      const unaryError = await unary
        .incrementBatch(bad.map((item) => ({ counter: item.counter!, amount: 1 })))
        .catch((error: unknown) => error);
      const expected: [number, number][] = [
        [2, status.INVALID_ARGUMENT],
        [3, status.INVALID_ARGUMENT],
        [4, status.RESOURCE_EXHAUSTED],
        [5, status.INVALID_ARGUMENT],
      ];
      for (const [sequence, code] of expected) {
        const { error, results } = await stream.answer(sequence);
        expect(results, `batch ${sequence}`).toEqual([]);
        expect(error?.code, `batch ${sequence}: ${error?.message}`).toBe(code);
        expect(error?.reason).toBe(ErrorReason.notApplied);
        expect(decodeStatusDetails(error!.statusDetails)?.reason).toBe(ErrorReason.notApplied);
      }
      expect((await stream.answer(2)).error?.message).toBe((unaryError as Error).message);
      expect((await stream.answer(1)).error).toBeNull();
      expect((await stream.answer(6)).error).toBeNull();
      expect(stream.ended()).toBeUndefined();
      expect((await unary.read('stream:fine')).total).toBe(2n);
    } finally {
      stream.close();
    }
  });

  it('router: a malformed message ends the stream INVALID_ARGUMENT; a batch answered before it stands', async () => {
    const channel = new Client(tc.cluster.routerAddress, credentials.createInsecure());
    const call = channel.makeBidiStreamRequest(
      '/counter.v1.CounterService/IncrementStream',
      (bytes: Buffer) => bytes,
      decodeIncrementStreamResponse,
    );
    const answers: LeanIncrementStreamResponse[] = [];
    let ended: { code: number; details: string } | undefined;
    call.on('data', (response: LeanIncrementStreamResponse) => answers.push(response));
    call.on('error', (error: { code: number; details: string }) => (ended = error));
    try {
      call.write(encodeIncrementStreamRequest({ sequence: 1, items: [unkeyed('stream:before-malformed')] }));
      await waitFor(() => answers.length === 1, { timeoutMs: 10_000, what: 'the first answer' });
      // Field 1, length-delimited, claiming 127 bytes where 1 follows.
      call.write(Buffer.from([0x0a, 0x7f, 0x01]));
      await waitFor(() => ended !== undefined, { timeoutMs: 10_000, what: 'the stream to end' });
      expect(ended!.code).toBe(status.INVALID_ARGUMENT);
      expect(ended!.details).toMatch(/malformed/);
      expect((await unary.read('stream:before-malformed')).total).toBe(1n);
    } finally {
      call.cancel();
      channel.close();
    }
  });

  it('router: a flood of maximum-size batches on one stream is refused RESOURCE_EXHAUSTED by sequence past the bound; what was accepted is counted', async () => {
    const name = `stream:flood:${'x'.repeat(180)}`;
    await unary.increment(name, 1);
    const stream = openStream(tc.cluster.routerAddress, 60_000);
    // Every primary paused: the first batches stay in flight, so the bound is what the rest meet.
    const primaries = [0, 1].map((pairIndex) => tc.cluster.node(pairIndex, 'primary').process);
    try {
      for (const primary of primaries) primary.signal('SIGSTOP');
      const batches = 3 * streamBatchesInFlightMax;
      const batch = Array.from({ length: batchItemsMax }, () => unkeyed(name));
      for (let sequence = 1; sequence <= batches; sequence++) stream.send(sequence, batch);
      await waitFor(() => stream.answers.size >= batches - streamBatchesInFlightMax || stream.ended() !== undefined, {
        timeoutMs: 20_000,
        what: 'the batches past the bound to be refused',
      });
      for (const primary of primaries) primary.signal('SIGCONT');
      let applied = 0n;
      let unknown = 0n;
      let refused = 0;
      for (let sequence = 1; sequence <= batches; sequence++) {
        const { error, results } = await stream.answer(sequence);
        if (error === null) {
          expect(results).toHaveLength(batchItemsMax);
          applied += BigInt(batchItemsMax);
        } else if (error.code === status.RESOURCE_EXHAUSTED && error.reason === ErrorReason.notApplied) {
          expect(decodeStatusDetails(error.statusDetails)?.retryAfterMs).toBeGreaterThan(0);
          refused++;
        } else {
          // A batch held past a node timeout while its primary was paused.
          expect(error.reason, error.message).toBe(ErrorReason.outcomeUnknown);
          unknown += BigInt(batchItemsMax);
        }
      }
      // Exactly batches - max when every admitted batch is still in flight as the rest arrive; on a
      // loaded machine one can end (its node call timing out) before the last are sent, and frees its slot.
      expect(refused).toBeGreaterThan(0);
      expect(refused).toBeLessThanOrEqual(batches - streamBatchesInFlightMax);
      expect(stream.ended()).toBeUndefined();
      const total = (await unary.read(name)).total - 1n;
      expect(total).toBeGreaterThanOrEqual(applied);
      expect(total).toBeLessThanOrEqual(applied + unknown);
    } finally {
      for (const primary of primaries) primary.signal('SIGCONT');
      stream.close();
    }
  });

  it('router: a stream cut mid-batch (its connection dropped with answers unsent) leaves those batches unknown: ok <= total <= ok + unknown', async () => {
    // Answers held back 150 ms: when the proxy drops, batches the router applied are unanswered.
    const proxy = await startRouterProxy(tc.cluster.routerAddress, 150);
    const stream = openStream(proxy.address);
    try {
      let ok = 0n;
      let sent = 0n;
      // One batch every 10 ms: when the first answers arrive, the router has applied several more.
      let sequence = 0;
      const sender = setInterval(() => {
        if (stream.ended() !== undefined) return;
        stream.send(++sequence, [unkeyed('stream:cut', 1), unkeyed('stream:cut', 2)]);
        sent += 3n;
      }, 10);
      await waitFor(() => stream.answers.size >= 2, { timeoutMs: 10_000, what: 'some answers' });
      await proxy.kill();
      clearInterval(sender);
      const end = await stream.end();
      expect(end.code).toBe(status.UNAVAILABLE);
      for (const answer of stream.answers.values()) if (answer.error === null) ok += 3n;
      const unknown = sent - ok;
      const total = (await unary.read('stream:cut')).total;
      expect(total).toBeGreaterThanOrEqual(ok);
      expect(total).toBeLessThanOrEqual(ok + unknown);
      // Some batches were applied with their answers lost: a resend of them would have counted twice.
      expect(total).toBeGreaterThan(ok);
    } finally {
      stream.close();
    }
  });

  // Last: it restarts the router.
  it('client: the router SIGKILLed with stream batches in flight: the coalescing client hears unknown outcomes, and ok <= total <= ok + unknown after a restart', async () => {
    const coalescing = createTallyClient({ address: tc.cluster.routerAddress, coalesce: true, deadlineMs: 3_000 });
    try {
      let next = 0;
      const load = startLoad(coalescing, { counters: () => `stream:kill:${next++ % 4}`, concurrency: 32 });
      await waitFor(() => load.ledger.okCalls > 500, { timeoutMs: 20_000, what: '500 increments before the kill' });
      await tc.cluster.router.stop('SIGKILL');
      await waitFor(() => load.ledger.unknownCalls > 0, { timeoutMs: 20_000, what: 'calls failing with the router gone' });
      await load.stop();
      expect(load.ledger.failedCalls, load.ledger.topReasons()).toBe(0);
      await tc.cluster.router.start();
      await waitFor(() => unary.read('stream:kill:0').then(() => true), { timeoutMs: 30_000, what: 'the restarted router' });
      await load.ledger.expectWithinBounds(unary);
    } finally {
      coalescing.close();
    }
  });
});
