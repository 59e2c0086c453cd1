// Distinct counts through a real cluster: AddDistinct is idempotent, a
// sharded counter estimates exactly what one shard given the same members
// does (sketches merge by register maximum), unions merge across counters,
// and bad input changes nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { status } from '@grpc/grpc-js';
import { rejection } from '../helpers/rejection.ts';
import { hllStandardError } from '../../src/sketch/index.ts';
import { startCluster, type TestCluster } from '../helpers/cluster.ts';

const members = (prefix: string, count: number, from = 0) => Array.from({ length: count }, (_, index) => `${prefix}-${from + index}`);

async function addAll(tc: TestCluster, counter: string, all: string[], chunk = 5_000): Promise<number> {
  let changed = 0;
  for (let offset = 0; offset < all.length; offset += chunk)
    changed += (await tc.client.addDistinct(counter, all.slice(offset, offset + chunk))).registersChanged;
  return changed;
}

describe('distinct counts', () => {
  let tc: TestCluster;
  beforeAll(async () => {
    tc = await startCluster({ pairs: 2 });
  });
  afterAll(async () => {
    await tc?.stop();
  });

  it('10 members count exactly 10; adding them again raises no register and changes nothing', async () => {
    const ten = members('user', 10);
    expect(await addAll(tc, 'visitors', ten)).toBeGreaterThan(0);
    expect((await tc.client.countDistinct('visitors')).estimate).toBe(10);
    expect((await tc.client.addDistinct('visitors', ten)).registersChanged).toBe(0);
    const again = await tc.client.countDistinct('visitors');
    expect(again.estimate).toBe(10);
    expect(again.standardError).toBeCloseTo(hllStandardError, 6);
    expect((await tc.client.describe('visitors')).kind).toBe('distinct');
  });

  it('100,000 members on a counter of 8 shards over 2 pairs give the same estimate as one shard, within 3 standard errors', async () => {
    const all = members('m', 100_000);
    await addAll(tc, 'one-shard', all);
    await tc.client.addDistinct('eight-shards', ['m-0']);
    await tc.client.setShards('eight-shards', 8);
    const placements = (await tc.client.describe('eight-shards')).placements;
    expect(new Set(placements.map((placement) => placement.pair)).size).toBe(2);
    // Members go to random shards, and some to several: the merge still counts each once.
    await addAll(tc, 'eight-shards', all, 1_000);
    await addAll(tc, 'eight-shards', all.slice(0, 20_000), 500);
    const one = await tc.client.countDistinct('one-shard');
    const eight = await tc.client.countDistinct('eight-shards');
    expect(eight.shards).toBe(8);
    expect(eight.estimate).toBe(one.estimate);
    expect(Math.abs(one.estimate - 100_000) / 100_000).toBeLessThan(3 * hllStandardError);
  });

  it('the count of a union equals the sketch of the union of the members', async () => {
    const a = members('u', 3_000, 0);
    const b = members('u', 3_000, 2_000); // 1,000 shared
    await addAll(tc, 'union-a', a);
    await addAll(tc, 'union-b', b);
    await addAll(tc, 'union-ab', [...a, ...b]);
    const union = await tc.client.countDistinct(['union-a', 'union-b']);
    expect(union.estimate).toBe((await tc.client.countDistinct('union-ab')).estimate);
    expect(Math.abs(union.estimate - 5_000) / 5_000).toBeLessThan(3 * hllStandardError);
    // A counter never written is an empty set.
    expect((await tc.client.countDistinct(['union-a', 'never-written'])).estimate).toBe(
      (await tc.client.countDistinct('union-a')).estimate,
    );
  });

  it('bad input gets a clear status and changes nothing', async () => {
    await tc.client.addDistinct('strict', ['a', 'b']);
    const before = await tc.client.countDistinct('strict');
    expect((await rejection(tc.client.addDistinct('strict', ['c', '']))).grpcCode).toBe(status.INVALID_ARGUMENT);
    expect((await rejection(tc.client.addDistinct('strict', []))).grpcCode).toBe(status.INVALID_ARGUMENT);
    expect((await rejection(tc.client.addDistinct('strict', members('x', 10_001)))).grpcCode).toBe(status.RESOURCE_EXHAUSTED);
    expect((await rejection(tc.client.addDistinct('strict', ['y'.repeat(1_025)]))).grpcCode).toBe(status.INVALID_ARGUMENT);
    expect((await rejection(tc.client.addDistinct('', ['a']))).grpcCode).toBe(status.INVALID_ARGUMENT);
    expect((await rejection(tc.client.countDistinct([]))).grpcCode).toBe(status.INVALID_ARGUMENT);
    expect(await tc.client.countDistinct('strict')).toEqual(before);
    // Kinds do not mix: a distinct counter has no exact total, a total no sketch.
    expect((await rejection(tc.client.read('strict'))).grpcCode).toBe(status.FAILED_PRECONDITION);
    expect((await rejection(tc.client.increment('strict', 1))).grpcCode).toBe(status.FAILED_PRECONDITION);
    // A batch naming a distinct counter creates none of its new counters either.
    const batch = tc.client.incrementBatch([
      { counter: 'fresh-in-bad-batch', amount: 1 },
      { counter: 'strict', amount: 1 },
    ]);
    expect((await rejection(batch)).grpcCode).toBe(status.FAILED_PRECONDITION);
    expect((await rejection(tc.client.describe('fresh-in-bad-batch'))).grpcCode).toBe(status.NOT_FOUND);
    await tc.client.increment('a-total', 1);
    expect((await rejection(tc.client.addDistinct('a-total', ['a']))).grpcCode).toBe(status.FAILED_PRECONDITION);
    expect((await rejection(tc.client.countDistinct('a-total'))).grpcCode).toBe(status.FAILED_PRECONDITION);
    expect((await tc.client.read('a-total')).total).toBe(1n);
  });

  it('a ReadMany naming a distinct counter among totals is FAILED_PRECONDITION, exact or cached, hit or miss; a membership counter among them reads', async () => {
    await tc.client.addDistinct('page-sketch', ['a']);
    await tc.client.increment('page-total', 3);
    await tc.client.setMember('page-members', 5n, true);
    const refusal = 'counter "page-sketch" is a distinct counter: use CountDistinct';
    for (const consistency of ['exact', 'cached'] as const) {
      const error = await rejection(tc.client.readMany(['page-total', 'page-sketch', 'never-written'], { consistency }));
      expect(error.grpcCode).toBe(status.FAILED_PRECONDITION);
      expect(error.message).toContain(refusal);
      expect((await rejection(tc.client.read('page-sketch', { consistency }))).message).toContain(refusal);
    }
    // The totals now cached: a read that is all hits but the sketch is refused too.
    expect((await tc.client.readMany(['page-total'], { consistency: 'cached' }))[0]!.total).toBe(3n);
    const cachedHit = await rejection(tc.client.readMany(['page-total', 'page-sketch'], { consistency: 'cached' }));
    expect(cachedHit.grpcCode).toBe(status.FAILED_PRECONDITION);
    const reads = await tc.client.readMany(['page-total', 'page-members', 'never-written']);
    expect(reads.map((read) => [read.counter, read.total])).toEqual([
      ['page-total', 3n],
      ['page-members', 1n],
      ['never-written', 0n],
    ]);
  });
});
