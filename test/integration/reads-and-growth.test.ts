import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pause, startCluster, waitFor, type TestCluster } from '../helpers/cluster.ts';

const refreshIntervalMs = 200;
const readTimeoutMs = 300;

describe('cached reads and online growth', () => {
  let tc: TestCluster;
  beforeAll(async () => {
    tc = await startCluster({
      pairs: 2,
      routerArgs: ['--refresh-interval-ms', String(refreshIntervalMs), '--read-timeout-ms', String(readTimeoutMs)],
    });
  });
  afterAll(async () => {
    await tc?.stop();
  });

  it('router: CACHED reads are never older than refresh interval + summing time, and include every increment acknowledged before as_of', async () => {
    const { client } = tc;
    await client.increment('cached', 1);
    await client.setShards('cached', 3);
    const acks: { atMs: number; amount: bigint }[] = [{ atMs: Date.now(), amount: 1n }];
    let stop = false;
    const writers = Array.from({ length: 6 }, async (_, writer) => {
      while (!stop) {
        const amount = BigInt(writer + 1);
        await client.increment('cached', amount);
        acks.push({ atMs: Date.now(), amount });
      }
    });
    let reads = 0;
    let sawRefresh = false;
    let previousAsOf = 0;
    const untilMs = Date.now() + 3_000;
    while (Date.now() < untilMs) {
      const calledMs = Date.now();
      const read = await client.read('cached', { consistency: 'cached' });
      const returnedMs = Date.now();
      reads++;
      expect(read.exact).toBe(false);
      // The server's bound: a total older than refresh + read timeout is never served.
      expect(read.stalenessMs).toBeLessThanOrEqual(refreshIntervalMs + readTimeoutMs);
      // The fields agree with the clock: as_of + staleness is when the server answered.
      expect(read.asOfUnixMs + read.stalenessMs).toBeGreaterThanOrEqual(calledMs - 1);
      expect(read.asOfUnixMs + read.stalenessMs).toBeLessThanOrEqual(returnedMs + 1);
      expect(read.asOfUnixMs).toBeGreaterThanOrEqual(previousAsOf);
      if (previousAsOf !== 0 && read.asOfUnixMs > previousAsOf) sawRefresh = true;
      previousAsOf = read.asOfUnixMs;
      // Every increment the client saw acknowledged before as_of is in the total
      // (strictly before: same millisecond is ambiguous).
      const ackedBefore = acks.filter((ack) => ack.atMs < read.asOfUnixMs).reduce((sum, ack) => sum + ack.amount, 0n);
      expect(read.total).toBeGreaterThanOrEqual(ackedBefore);
      await pause(15);
    }
    stop = true;
    await Promise.all(writers);
    expect(reads).toBeGreaterThan(20);
    expect(sawRefresh).toBe(true);
    const acknowledged = acks.reduce((sum, ack) => sum + ack.amount, 0n);
    expect((await client.read('cached')).total).toBe(acknowledged);
    // The refresher catches up without further reads forcing it.
    await waitFor(async () => (await client.read('cached', { consistency: 'cached' })).total === acknowledged, {
      timeoutMs: 3_000,
      what: 'the cache to catch up',
    });
  });

  it('router: SetShards 1 -> 8 while 8 callers increment loses nothing and the total never goes backwards', async () => {
    const { client } = tc;
    await client.increment('grow', 1);
    let acknowledged = 1n;
    let stop = false;
    const writers = Array.from({ length: 8 }, async (_, writer) => {
      while (!stop) {
        const amount = BigInt(writer + 1);
        await client.increment('grow', amount);
        acknowledged += amount;
      }
    });
    let previousTotal = 0n;
    let readsTaken = 0;
    const reader = (async () => {
      while (!stop) {
        const ackedBeforeRead = acknowledged;
        const read = await client.read('grow');
        expect(read.total).toBeGreaterThanOrEqual(previousTotal);
        expect(read.total).toBeGreaterThanOrEqual(ackedBeforeRead);
        previousTotal = read.total;
        readsTaken++;
      }
    })();
    // Every size takes writes and reads: before each growth, and after the last.
    const progress = async (what: string): Promise<void> => {
      const acknowledgedBefore = acknowledged;
      const readsBefore = readsTaken;
      await waitFor(() => acknowledged >= acknowledgedBefore + 100n && readsTaken >= readsBefore + 2, { timeoutMs: 10_000, what });
    };
    for (const shards of [2, 3, 5, 8]) {
      await progress(`writes and reads before growing to ${shards} shards`);
      const result = await client.setShards('grow', shards);
      expect(result.shards).toBe(shards);
    }
    await progress('writes and reads at 8 shards');
    stop = true;
    await Promise.all([...writers, reader]);
    expect(readsTaken).toBeGreaterThan(5);
    const final = await client.read('grow');
    expect(final.shards).toBe(8);
    expect(final.total).toBe(acknowledged);
    // The new shards took writes: growth is real, not just a number.
    const description = await client.describe('grow');
    expect(new Set(description.placements.map((placement) => placement.pair))).toEqual(new Set([0, 1]));
  });
});
