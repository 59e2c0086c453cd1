// G7: every bad input gets its named status and changes nothing — neither a
// total nor any node's log.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Metadata, credentials, status } from '@grpc/grpc-js';
import { CounterServiceClient } from '../../src/common/index.ts';
import {
  messageBytesMax,
  batchItemsMax,
  readManyCountersMax,
  INT64_MAX,
  decodeIncrementStreamResponse,
  encodeIncrementStreamRequest,
  type LeanIncrementStreamResponse,
} from '../../src/wire/index.ts';
import { TallyError, createTallyClient, type TallyClient } from '../../src/client/index.ts';
import { startCluster, waitFor, waitForHealthy, type TestCluster } from '../helpers/cluster.ts';
import type { RawRpcClient } from '../helpers/raw-client.ts';

describe('bad input (G7)', () => {
  let tc: TestCluster;
  let raw: RawRpcClient;
  // Unary, not coalescing: the coalescing client refuses bad input itself
  // (test/integration/coalescing.test.ts); these cases are the router's.
  let unary: TallyClient;

  beforeAll(async () => {
    tc = await startCluster({ pairs: 1 });
    await tc.client.increment('guarded', 5);
    // The follower holds that write too: a log position taken while it catches up would move by itself.
    await waitForHealthy(tc.client);
    unary = createTallyClient({ address: tc.cluster.routerAddress, deadlineMs: 10_000, coalesce: false });
    raw = new CounterServiceClient(tc.cluster.routerAddress, credentials.createInsecure()) as unknown as RawRpcClient;
  });
  afterAll(async () => {
    raw?.close();
    unary?.close();
    await tc?.stop();
  });

  /** Sum of every node's last lsn: any log write changes it. */
  async function logPosition(): Promise<bigint> {
    const cluster = await tc.client.clusterStatus();
    return cluster.nodes.reduce((sum, node) => sum + node.lastLsn, 0n);
  }

  /** Runs attempt and checks it changed nothing: a total, any node's log, the counters in the directory. */
  async function expectUnchanged(attempt: () => Promise<void>): Promise<void> {
    const totalBefore = (await tc.client.read('guarded')).total;
    const positionBefore = await logPosition();
    const countersBefore = (await tc.client.clusterStatus()).counters;
    await attempt();
    expect((await tc.client.read('guarded')).total).toBe(totalBefore);
    expect(await logPosition()).toBe(positionBefore);
    expect((await tc.client.clusterStatus()).counters).toBe(countersBefore);
  }

  async function expectRejected(attempt: () => Promise<unknown>, grpcCode: number): Promise<TallyError> {
    const totalBefore = (await tc.client.read('guarded')).total;
    const positionBefore = await logPosition();
    const countersBefore = (await tc.client.clusterStatus()).counters;
    const error = await attempt().then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(TallyError);
    expect((error as TallyError).grpcCode).toBe(grpcCode);
    expect((await tc.client.read('guarded')).total).toBe(totalBefore);
    expect(await logPosition()).toBe(positionBefore);
    expect((await tc.client.clusterStatus()).counters).toBe(countersBefore);
    return error as TallyError;
  }

  function rawCall(method: string, request: object): Promise<unknown> {
    return new Promise((resolve, reject) => {
      raw[method]!(request, { deadline: Date.now() + 5_000 }, (error: unknown, response: unknown) =>
        error ? reject(error) : resolve(response),
      );
    }).catch((error: { code: number; details: string }) => {
      throw new TallyError('invalid_argument', error.details, error.code);
    });
  }

  it('router: an empty counter name is INVALID_ARGUMENT', async () => {
    await expectRejected(() => unary.increment('', 1), status.INVALID_ARGUMENT);
  });

  it('router: a counter name over 200 bytes is INVALID_ARGUMENT (multi-byte characters count as bytes)', async () => {
    await expectRejected(() => unary.increment('é'.repeat(101), 1), status.INVALID_ARGUMENT);
    await expectRejected(() => tc.client.read('x'.repeat(201)), status.INVALID_ARGUMENT);
  });

  it('router: a counter name with a control character is INVALID_ARGUMENT', async () => {
    await expectRejected(() => unary.increment('bad\nname', 1), status.INVALID_ARGUMENT);
    await expectRejected(() => unary.increment('bad\u0000name', 1), status.INVALID_ARGUMENT);
  });

  it('router: an idempotency key over 128 bytes is INVALID_ARGUMENT', async () => {
    await expectRejected(() => unary.increment('guarded', 1, { idempotencyKey: 'k'.repeat(129) }), status.INVALID_ARGUMENT);
  });

  it('router: a zero amount is INVALID_ARGUMENT', async () => {
    const error = await expectRejected(() => rawCall('Increment', { counter: 'guarded', amount: '0' }), status.INVALID_ARGUMENT);
    expect(error.message).toMatch(/amount/);
  });

  it('client: an amount beyond int64 is OUT_OF_RANGE before anything is sent', async () => {
    await expectRejected(() => tc.client.increment('guarded', INT64_MAX + 1n), status.OUT_OF_RANGE);
  });

  it('router: an increment that would take a shard total beyond int64 is OUT_OF_RANGE and changes nothing', async () => {
    await tc.client.increment('huge', INT64_MAX - 10n);
    const before = (await tc.client.read('huge')).total;
    await expectRejected(() => unary.increment('huge', 11), status.OUT_OF_RANGE);
    expect((await tc.client.read('huge')).total).toBe(before);
    // The same counter still takes increments that fit.
    await tc.client.increment('huge', 10);
    expect((await tc.client.read('huge')).total).toBe(INT64_MAX);
    await tc.client.increment('huge', -5);
    await expectRejected(() => unary.increment('huge', -(INT64_MAX + 1n) + 1n - 10n), status.OUT_OF_RANGE);
  });

  it('router: a batch with one bad item is INVALID_ARGUMENT and applies none of the good ones', async () => {
    await expectRejected(
      () =>
        tc.client.incrementBatch([
          { counter: 'guarded', amount: 1 },
          { counter: 'batch:new', amount: 2 },
          { counter: '', amount: 3 },
        ]),
      status.INVALID_ARGUMENT,
    );
    expect((await tc.client.read('batch:new')).shards).toBe(0);
    await expectRejected(
      () =>
        rawCall('IncrementBatch', {
          items: [
            { counter: 'guarded', amount: '1' },
            { counter: 'guarded', amount: '0' },
          ],
        }),
      status.INVALID_ARGUMENT,
    );
  });

  it('router: an empty batch is INVALID_ARGUMENT and an oversized one RESOURCE_EXHAUSTED', async () => {
    await expectRejected(() => tc.client.incrementBatch([]), status.INVALID_ARGUMENT);
    const items = Array.from({ length: batchItemsMax + 1 }, () => ({ counter: 'guarded', amount: 1 }));
    await expectRejected(() => tc.client.incrementBatch(items), status.RESOURCE_EXHAUSTED);
  });

  it('router: a message over the size limit is RESOURCE_EXHAUSTED', async () => {
    // Items each carrying a 128-byte key and a 200-byte name add up past the limit.
    const itemsNeeded = Math.ceil(messageBytesMax / 300) + 10;
    const items = Array.from({ length: Math.min(itemsNeeded, 20_000) }, (_, index) => ({
      counter: `${'n'.repeat(190)}${index}`,
      amount: 1,
      idempotencyKey: 'k'.repeat(128),
    }));
    await expectRejected(() => tc.client.incrementBatch(items), status.RESOURCE_EXHAUSTED);
  });

  it('router: a malformed message is INVALID_ARGUMENT', async () => {
    // Field 2 (amount, a varint) announced with no value after it: undecodable.
    const garbage = Buffer.from([0x10]);
    const error = await expectRejected(
      () =>
        new Promise((resolve, reject) => {
          raw.makeUnaryRequest(
            '/counter.v1.CounterService/Increment',
            (value: Buffer) => value,
            (value: Buffer) => value,
            garbage,
            { deadline: Date.now() + 5_000 },
            (callError, response) =>
              callError ? reject(new TallyError('invalid_argument', callError.details, callError.code)) : resolve(response),
          );
        }),
      status.INVALID_ARGUMENT,
    );
    expect(error.message).toMatch(/malformed/);
  });

  /**
   * Messages written on one IncrementStream, raw bytes or encoded batches;
   * resolves with each batch's answer by sequence and how the stream ended.
   */
  async function onStream(messages: (Buffer | { sequence: number; items: object[] })[], answersAwaited: number) {
    const call = raw.makeBidiStreamRequest(
      '/counter.v1.CounterService/IncrementStream',
      (message: Buffer | { sequence: number; items: object[] }) =>
        Buffer.isBuffer(message) ? message : encodeIncrementStreamRequest(message),
      decodeIncrementStreamResponse,
      new Metadata(),
      { deadline: Date.now() + 20_000 },
    );
    const answers = new Map<number, LeanIncrementStreamResponse>();
    let ended: { code: number; details: string } | undefined;
    call.on('data', (answer: LeanIncrementStreamResponse) => answers.set(Number(answer.sequence), answer));
    call.on('error', (error: { code: number; details: string }) => (ended = error));
    for (const message of messages) call.write(message);
    await waitFor(() => answers.size >= answersAwaited || ended !== undefined, { timeoutMs: 20_000, what: 'the answers' });
    if (ended === undefined) call.end();
    await waitFor(() => ended !== undefined || call.readableEnded, { timeoutMs: 20_000, what: 'the stream to end' }).catch(() => {});
    call.cancel();
    return { answers, ended };
  }

  it('router: IncrementStream answers each bad batch by its sequence with IncrementBatch status, and changes nothing', async () => {
    const bad: [object[], number][] = [
      [[{ counter: '', amount: 1 }], status.INVALID_ARGUMENT],
      [[{ counter: 'x'.repeat(201), amount: 1 }], status.INVALID_ARGUMENT],
      [[{ counter: 'bad\nname', amount: 1 }], status.INVALID_ARGUMENT],
      [[{ counter: 'guarded', amount: 1, idempotencyKey: Buffer.alloc(129, 1) }], status.INVALID_ARGUMENT],
      [[{ counter: 'guarded', amount: 0 }], status.INVALID_ARGUMENT],
      [
        [
          { counter: 'guarded', amount: 1 },
          { counter: 'stream:batch:new', amount: 2 },
          { counter: '', amount: 3 },
        ],
        status.INVALID_ARGUMENT,
      ],
      [[], status.INVALID_ARGUMENT],
      [Array.from({ length: batchItemsMax + 1 }, () => ({ counter: 'guarded', amount: 1 })), status.RESOURCE_EXHAUSTED],
    ];
    await expectUnchanged(async () => {
      const { answers, ended } = await onStream(
        bad.map(([items], index) => ({ sequence: index + 1, items })),
        bad.length,
      );
      expect(ended?.code ?? status.OK).toBe(status.OK);
      bad.forEach(([, code], index) => {
        const answer = answers.get(index + 1);
        expect(answer?.error?.code, `batch ${index + 1}: ${answer?.error?.message}`).toBe(code);
        expect(answer?.results).toEqual([]);
      });
    });
    expect((await tc.client.read('stream:batch:new')).shards).toBe(0);
  });

  it('router: an IncrementStream message that does not decode ends the stream INVALID_ARGUMENT, one over the size limit RESOURCE_EXHAUSTED; neither changes anything', async () => {
    await expectUnchanged(async () => {
      const malformed = await onStream([Buffer.from([0x0a, 0x7f, 0x01])], 1);
      expect(malformed.ended?.code).toBe(status.INVALID_ARGUMENT);
      expect(malformed.ended?.details).toMatch(/malformed/);
      const items = Array.from({ length: 20_000 }, (_, index) => ({
        counter: `${'n'.repeat(190)}${index}`,
        amount: 1,
        idempotencyKey: Buffer.alloc(128, 7),
      }));
      const oversized = await onStream([{ sequence: 1, items }], 1);
      expect(oversized.ended?.code).toBe(status.RESOURCE_EXHAUSTED);
    });
  });

  it('router: an unknown consistency is INVALID_ARGUMENT', async () => {
    await expectRejected(() => rawCall('Read', { counter: 'guarded', consistency: 7 }), status.INVALID_ARGUMENT);
  });

  it('admin: Describe and SetShards of an unknown counter are NOT_FOUND', async () => {
    await expectRejected(() => tc.client.describe('never:seen'), status.NOT_FOUND);
    await expectRejected(() => tc.client.setShards('never:seen', 4), status.NOT_FOUND);
  });

  it('admin: shrinking a counter is FAILED_PRECONDITION; zero or too many shards INVALID_ARGUMENT', async () => {
    await tc.client.setShards('guarded', 3);
    await expectRejected(() => tc.client.setShards('guarded', 2), status.FAILED_PRECONDITION);
    await expectRejected(() => tc.client.setShards('guarded', 0), status.INVALID_ARGUMENT);
    await expectRejected(() => tc.client.setShards('guarded', 100_000), status.INVALID_ARGUMENT);
    expect((await tc.client.describe('guarded')).shards).toBe(3);
  });

  it('router: ReadMany with no counters is INVALID_ARGUMENT, over the limit RESOURCE_EXHAUSTED, with a bad name INVALID_ARGUMENT', async () => {
    await expectRejected(() => tc.client.readMany([]), status.INVALID_ARGUMENT);
    await expectRejected(
      () => tc.client.readMany(Array.from({ length: readManyCountersMax + 1 }, (_, index) => `many:${index}`)),
      status.RESOURCE_EXHAUSTED,
    );
    await expectRejected(() => tc.client.readMany(['guarded', '']), status.INVALID_ARGUMENT);
  });

  it('router: ReadMany through the lean codec: malformed bytes and an unknown consistency are INVALID_ARGUMENT in the words proto-loader gave', async () => {
    // Consistency announced with no value after it; then a name of 1 byte and a group that never ends.
    for (const [garbage, words] of [
      [Buffer.from([0x10]), 'malformed request: index out of range: 1 + 1 > 1'],
      [Buffer.from([0x0a, 0x01, 0x61, 0x0b]), 'malformed request: index out of range: 4 + 1 > 4'],
    ] as const) {
      const error = await expectRejected(
        () =>
          new Promise((resolve, reject) => {
            raw.makeUnaryRequest(
              '/counter.v1.CounterService/ReadMany',
              (value: Buffer) => value,
              (value: Buffer) => value,
              garbage,
              { deadline: Date.now() + 5_000 },
              (callError, response) =>
                callError ? reject(new TallyError('invalid_argument', callError.details, callError.code)) : resolve(response),
            );
          }),
        status.INVALID_ARGUMENT,
      );
      expect(error.message).toBe(words);
    }
    const unknown = await expectRejected(() => rawCall('ReadMany', { counters: ['guarded'], consistency: 7 }), status.INVALID_ARGUMENT);
    expect(unknown.message).toBe('consistency must be EXACT or CACHED, got 7');
  });
});
