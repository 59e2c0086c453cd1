// One contract, two implementations: the same behaviours run against the
// in-memory FakeTallyClient (@tally/client/testing) and against a real
// cluster through TallyClient, so a service's unit tests on the fake learn
// what production does: totals, duplicate keys, validation errors with
// their codes, statuses and reasons, NOT_FOUND, OUT_OF_RANGE, listing.
import { randomUUID } from 'node:crypto';
import { status } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TallyError } from '../../src/client/index.ts';
import { createFakeTallyClient, type FakeTallyClientApi } from '../../src/client/testing.ts';
import { startCluster, type TestCluster } from '../helpers/cluster.ts';

async function failure(call: () => Promise<unknown>): Promise<{ code: string; grpcCode: number; notApplied: boolean }> {
  try {
    await call();
  } catch (error) {
    expect(error).toBeInstanceOf(TallyError);
    const failed = error as TallyError;
    return { code: failed.code, grpcCode: failed.grpcCode, notApplied: failed.certainlyNotApplied };
  }
  throw new Error('the call succeeded');
}

const invalid = { code: 'invalid_argument', grpcCode: status.INVALID_ARGUMENT, notApplied: true };

/** The behaviours both implementations keep; `client()` gives the implementation under test, each test its own counter names. */
function contract(client: () => FakeTallyClientApi): void {
  const name = (what: string): string => `contract:${what}:${randomUUID().slice(0, 8)}`;

  it('increments add up exactly in int64, negative ones too, and an exact read says so', async () => {
    const counter = name('sum');
    expect((await client().increment(counter, 5)).applied).toBe(true);
    await client().increment(counter, -2n);
    await client().increment(counter, '9007199254740993');
    const read = await client().read(counter);
    expect(read).toMatchObject({ counter, total: 9007199254740996n, exact: true });
    expect(read.shards).toBeGreaterThanOrEqual(1);
  });

  it('a key seen before is not applied again (applied false), per counter; the total counts it once', async () => {
    const counter = name('keys');
    const other = name('keys-other');
    expect((await client().increment(counter, 3, { idempotencyKey: 'order-1' })).applied).toBe(true);
    expect((await client().increment(counter, 3, { idempotencyKey: 'order-1' })).applied).toBe(false);
    expect((await client().increment(other, 3, { idempotencyKey: 'order-1' })).applied).toBe(true);
    const batch = await client().incrementBatch([
      { counter, amount: 3, idempotencyKey: 'order-1' },
      { counter, amount: 4, idempotencyKey: 'order-2' },
    ]);
    expect(batch.map((result) => result.applied)).toEqual([false, true]);
    expect((await client().read(counter)).total).toBe(7n);
  });

  it('returnTotal answers the exact total after the increment, a duplicate key included; without it there is none', async () => {
    const counter = name('return-total');
    expect((await client().increment(counter, 4)).total).toBeUndefined();
    expect(await client().increment(counter, 3, { idempotencyKey: 'rt-1', returnTotal: true })).toMatchObject({ applied: true, total: 7n });
    expect(await client().increment(counter, 3, { idempotencyKey: 'rt-1', returnTotal: true })).toMatchObject({
      applied: false,
      total: 7n,
    });
    expect((await client().increment(counter, -10n, { returnTotal: true })).total).toBe(-3n);
  });

  it('bad input is INVALID_ARGUMENT (or OUT_OF_RANGE beyond int64), not applied, and changes nothing', async () => {
    const counter = name('bad');
    await client().increment(counter, 1);
    expect(await failure(() => client().increment(counter, 0))).toEqual(invalid);
    expect(await failure(() => client().increment('', 1))).toEqual(invalid);
    expect(await failure(() => client().increment('x'.repeat(201), 1))).toEqual(invalid);
    expect(await failure(() => client().increment('bell\u0007', 1))).toEqual(invalid);
    expect(await failure(() => client().increment(counter, 1, { idempotencyKey: 'k'.repeat(129) }))).toEqual(invalid);
    expect(await failure(() => client().increment(counter, '9223372036854775808'))).toMatchObject({
      code: 'out_of_range',
      grpcCode: status.OUT_OF_RANGE,
    });
    // A number past 2^53 - 1 is refused by the client itself: it may already have lost digits.
    expect((await failure(() => client().increment(counter, 2 ** 60))).code).toBe('invalid_argument');
    // One bad item fails the whole batch, and no item of it applies.
    expect(
      await failure(() =>
        client().incrementBatch([
          { counter, amount: 5 },
          { counter, amount: 0 },
        ]),
      ),
    ).toEqual(invalid);
    expect(await failure(() => client().incrementBatch([]))).toEqual(invalid);
    expect((await client().read(counter)).total).toBe(1n);
  });

  it('a total that would pass int64 is OUT_OF_RANGE and leaves the total as it was', async () => {
    const counter = name('overflow');
    await client().increment(counter, 9223372036854775000n);
    const refused = await failure(() => client().increment(counter, 1_000, { idempotencyKey: null }));
    expect(refused.code).toBe('out_of_range');
    expect(refused.grpcCode).toBe(status.OUT_OF_RANGE);
    expect((await client().read(counter)).total).toBe(9223372036854775000n);
  });

  it('a counter never written reads 0; readMany reads several in order; describe of it is NOT_FOUND', async () => {
    const written = name('many');
    const never = name('never');
    await client().increment(written, 2);
    expect((await client().read(never)).total).toBe(0n);
    expect((await client().readMany([written, never])).map((read) => [read.counter, read.total])).toEqual([
      [written, 2n],
      [never, 0n],
    ]);
    expect(await failure(() => client().readMany([written, '']))).toEqual(invalid);
    expect(await failure(() => client().describe(never))).toEqual({ code: 'not_found', grpcCode: status.NOT_FOUND, notApplied: true });
    const description = await client().describe(written);
    expect(description).toMatchObject({ counter: written, kind: 'total' });
    expect(description.placements).toHaveLength(description.shards);
  });

  it('setShards grows a shard set and the total stays; clear reads 0 and a keyed retry clears nothing more; delete forgets', async () => {
    const counter = name('life');
    await client().increment(counter, 6);
    const before = (await client().describe(counter)).shards;
    expect(await client().setShards(counter, before + 2)).toEqual({ previousShards: before, shards: before + 2 });
    expect((await client().read(counter)).total).toBe(6n);
    const cleared = await client().clear(counter, { idempotencyKey: 'clear-1' });
    expect(cleared.applied).toBe(true);
    await client().increment(counter, 4);
    expect((await client().clear(counter, { idempotencyKey: 'clear-1' })).applied).toBe(false);
    expect((await client().read(counter)).total).toBe(4n);
    expect(await failure(() => client().clear(name('nothing')))).toMatchObject({ code: 'not_found' });
    expect((await client().deleteCounter(counter)).counter).toBe(counter);
    expect((await client().read(counter)).total).toBe(0n);
    expect(await failure(() => client().deleteCounter(counter))).toMatchObject({ code: 'not_found', grpcCode: status.NOT_FOUND });
  });

  it('listing pages through the counters under a prefix in byte order', async () => {
    const prefix = name('list');
    const names = ['b', 'a', 'c', 'é'].map((suffix) => `${prefix}:${suffix}`);
    for (const counter of names) await client().increment(counter, 1);
    const first = await client().listCounters({ prefix, pageSize: 3 });
    expect(first.counters.map((counter) => counter.name)).toEqual([`${prefix}:a`, `${prefix}:b`, `${prefix}:c`]);
    expect(first.nextPageToken).not.toBe('');
    const all: string[] = [];
    for await (const counter of client().allCounters({ prefix, pageSize: 2 })) all.push(counter.name);
    expect(all).toEqual([`${prefix}:a`, `${prefix}:b`, `${prefix}:c`, `${prefix}:é`]);
  });

  it('ready() resolves and the state is ready', async () => {
    await client().ready();
    expect(client().state).toBe('ready');
  });
}

describe('client contract: the fake', () => {
  const fake = createFakeTallyClient();
  contract(() => fake);

  it('closed, it says so as a real client does', async () => {
    const closing = createFakeTallyClient();
    closing.close();
    expect(closing.state).toBe('closed');
    expect(await failure(() => closing.increment('c', 1))).toMatchObject({ code: 'failed_precondition' });
  });
});

describe('client contract: a real cluster', () => {
  let tc: TestCluster;
  beforeAll(async () => {
    tc = await startCluster({ pairs: 1 });
    await tc.client.ready();
  });
  afterAll(async () => {
    await tc?.stop();
  });
  contract(() => tc.client);
});
