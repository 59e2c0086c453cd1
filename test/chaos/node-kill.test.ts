// G1 and G3 under attack: SIGKILL nodes during and after load, restart them
// on their data, and compare exact reads with what the client saw
// acknowledged: ok <= total <= ok + unknown.
import { afterEach, describe, expect, it } from 'vitest';
import { status } from '@grpc/grpc-js';
import { TallyError } from '../../src/client/index.ts';
import { pause, startCluster, waitFor, type TestCluster } from '../helpers/cluster.ts';

describe('chaos: killed nodes', () => {
  let tc: TestCluster | undefined;
  afterEach(async () => {
    await tc?.stop();
    tc = undefined;
  });

  it('node: SIGKILL right after N acknowledged increments, restart on its data: the exact read equals the acknowledged sum', async () => {
    tc = await startCluster({ pairs: 1 });
    const { client } = tc;
    let acknowledged = 0n;
    await Promise.all(
      Array.from({ length: 16 }, async (_, caller) => {
        for (let index = 0; index < 30; index++) {
          const amount = BigInt(caller + 1) * (index % 3 === 0 ? -1n : 1n);
          await client.increment('durable', amount);
          acknowledged += amount;
        }
      }),
    );
    const primary = tc.cluster.node(0, 'primary').process;
    await primary.stop('SIGKILL');
    await primary.start();
    const read = await waitFor(() => client.read('durable'), { timeoutMs: 10_000, what: 'the restarted node to answer' });
    expect(read.total).toBe(acknowledged);
  });

  it('node: SIGKILL during load loses nothing acknowledged: ok <= total <= ok + unknown', async () => {
    tc = await startCluster({ pairs: 2 });
    const { client } = tc;
    await client.increment('load', 1);
    await client.setShards('load', 4);
    let ok = 1n;
    let unknown = 0n;
    let failed = 0;
    let stop = false;
    const writers = Array.from({ length: 16 }, async () => {
      while (!stop) {
        try {
          await client.increment('load', 1, { deadlineMs: 2_000 });
          ok += 1n;
        } catch (error) {
          // A failed call may or may not have been applied.
          unknown += 1n;
          failed++;
          expect(error).toBeInstanceOf(TallyError);
          await pause(20);
        }
      }
    });
    await waitFor(() => ok > 300n, { timeoutMs: 20_000, what: 'load to build up' });
    const victim = tc.cluster.node(1, 'primary').process;
    await victim.stop('SIGKILL');
    // Writes keep landing while it is dead (on the other pair, or its promoted follower).
    const okAtKill = ok;
    await waitFor(() => failed > 0 || ok > okAtKill + 300n, { timeoutMs: 10_000, what: 'writes while the node is dead' });
    await victim.start();
    const okAtRestart = ok;
    await waitFor(() => ok > okAtRestart + 200n, { timeoutMs: 20_000, what: 'writes after the restart' });
    stop = true;
    await Promise.all(writers);
    const read = await waitFor(() => client.read('load'), { timeoutMs: 10_000, what: 'an exact read' });
    expect(read.total).toBeGreaterThanOrEqual(ok);
    expect(read.total).toBeLessThanOrEqual(ok + unknown);
  });

  it('router: an exact read of a counter with a shard on a dead pair fails UNAVAILABLE, never a partial sum', async () => {
    tc = await startCluster({ pairs: 2, routerArgs: ['--refresh-interval-ms', '200', '--read-timeout-ms', '300'] });
    const { client } = tc;
    await client.increment('split', 10);
    await client.setShards('split', 2);
    for (let index = 0; index < 40; index++) await client.increment('split', 1);
    // A counter that lives wholly on pair 0 stays readable.
    const placement = (await client.describe('split')).placements;
    expect(new Set(placement.map((shard) => shard.pair))).toEqual(new Set([0, 1]));
    await client.read('split', { consistency: 'cached' });

    // The in-sync follower stands in for a dead primary...
    await waitFor(async () => (await client.clusterStatus()).nodes.every((node) => node.inSync), {
      timeoutMs: 10_000,
      what: 'pairs in sync',
    });
    await tc.cluster.node(1, 'primary').process.stop('SIGKILL');
    // A read that meets the failover itself fails UNAVAILABLE (the follower then answers as primary of an
    // epoch the router has not seen); it never answers a partial or older total.
    const duringFailover = await waitFor(() => client.read('split'), { timeoutMs: 10_000, what: 'an exact read of the dead primary pair' });
    expect(duringFailover.total).toBe(50n);
    // ...but with both copies gone there is no total to give.
    await tc.cluster.node(1, 'follower').process.stop('SIGKILL');
    const exact = await client.read('split').then(
      (read) => read,
      (error: unknown) => error,
    );
    expect(exact).toBeInstanceOf(TallyError);
    expect((exact as TallyError).grpcCode).toBe(status.UNAVAILABLE);

    const many = await client.readMany(['split', 'elsewhere']).catch((error: unknown) => error);
    expect((many as TallyError).grpcCode).toBe(status.UNAVAILABLE);

    // Once the cached total is older than refresh + read timeout, CACHED fails too rather than serve it.
    await waitFor(
      async () => {
        try {
          await client.read('split', { consistency: 'cached' });
          return false;
        } catch (error) {
          return (error as TallyError).grpcCode === status.UNAVAILABLE;
        }
      },
      { timeoutMs: 5_000, what: 'cached reads to stop serving a stale total' },
    );
  });

  it('cluster: SIGKILL of every process and a restart on the same data keeps every total', async () => {
    tc = await startCluster({ pairs: 2 });
    const expected = new Map<string, bigint>();
    for (let index = 0; index < 20; index++) {
      const counter = `c:${index % 7}`;
      const amount = BigInt(index * 3 - 17 || 1);
      await tc.client.increment(counter, amount);
      expected.set(counter, (expected.get(counter) ?? 0n) + amount);
    }
    await tc.client.setShards('c:0', 5);
    for (let index = 0; index < 25; index++) await tc.client.increment('c:0', 2);
    expected.set('c:0', expected.get('c:0')! + 50n);

    await tc.cluster.stop('SIGKILL');
    await tc.cluster.start();
    const names = [...expected.keys()];
    const reads = await waitFor(() => tc!.client.readMany(names), { timeoutMs: 10_000, what: 'the restarted cluster' });
    expect(new Map(reads.map((read) => [read.counter, read.total]))).toEqual(expected);
    expect((await tc.client.describe('c:0')).shards).toBe(5);
  });
});
