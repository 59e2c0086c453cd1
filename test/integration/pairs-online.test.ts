// Pairs added and drained online (issue 18 item 5), with real processes: a
// cluster started with one pair takes a second through AddPair (its two nodes
// started by hand, empty), places new shards on it, keeps it across a router
// restart whose --pairs lacks it, and a drained pair takes no new shards.
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NodeProcess } from '../../src/cluster/local-cluster.ts';
import { startCluster, waitFor, type TestCluster } from '../helpers/cluster.ts';
import { rejection } from '../helpers/rejection.ts';
import { tally as runCli } from '../helpers/cli.ts';

describe('pairs online', () => {
  let cluster: TestCluster;
  const extra: NodeProcess[] = [];

  beforeAll(async () => {
    cluster = await startCluster({ pairs: 1 });
    for (const role of ['primary', 'follower'] as const) {
      const node = new NodeProcess(1, role, path.join(cluster.dataDir, `node-1-${role}`), '127.0.0.1', 0, 0, [], (name, line) =>
        cluster.logs.push(`[${name}] ${line}`),
      );
      await node.process.start();
      extra.push(node);
    }
  }, 60_000);

  afterAll(async () => {
    for (const node of extra) await node.process.stop('SIGKILL');
    await cluster?.stop();
  });

  it('AddPair registers a pair, the supervisor brings it in sync, and new counters are placed on it', async () => {
    const { client } = cluster;
    await client.increment('before', 5);
    const added = await client.addPair(extra[0]!.address, extra[1]!.address);
    expect(added).toMatchObject({ pair: 1, primary: extra[0]!.address, follower: extra[1]!.address, draining: false, shardCount: 0 });
    await waitFor(async () => (await client.clusterStatus()).pairs.find((pair) => pair.pair === 1)?.inSync === true, {
      timeoutMs: 30_000,
      what: 'pair 1 in sync',
    });
    // Placement balances by shards per pair: the empty pair takes the next new counters.
    for (let index = 0; index < 4; index++) await client.increment(`after-${index}`, index + 1);
    const placed = await Promise.all([0, 1, 2, 3].map(async (index) => (await client.describe(`after-${index}`)).placements[0]!.pair));
    expect(placed.filter((pair) => pair === 1).length).toBeGreaterThanOrEqual(2);
    for (let index = 0; index < 4; index++) expect((await client.read(`after-${index}`)).total).toBe(BigInt(index + 1));
    expect((await client.read('before')).total).toBe(5n);
    const status = await client.clusterStatus();
    expect(status.pairs.map((pair) => pair.pair)).toEqual([0, 1]);
    expect(status.nodes.filter((node) => node.pair === 1 && node.health === 'SERVING')).toHaveLength(2);
  }, 60_000);

  it('bad AddPair and DrainPair input changes nothing', async () => {
    const { client } = cluster;
    expect((await rejection(client.addPair(extra[0]!.address, '127.0.0.1:1'))).code).toBe('failed_precondition');
    expect((await rejection(client.addPair('127.0.0.1:2', '127.0.0.1:2'))).code).toBe('invalid_argument');
    expect((await rejection(client.addPair('not an address', '127.0.0.1:3'))).code).toBe('invalid_argument');
    expect((await rejection(client.drainPair(7))).code).toBe('not_found');
    expect((await client.clusterStatus()).pairs).toHaveLength(2);
  });

  it('a drained pair takes no new shards, its shards keep serving, and the last open pair cannot be drained', async () => {
    const { client } = cluster;
    const drained = await client.drainPair(0);
    expect(drained.draining).toBe(true);
    for (let index = 0; index < 6; index++) await client.increment(`drained-${index}`, 1);
    await client.setShards('drained-0', 4);
    for (let index = 0; index < 6; index++)
      for (const shard of (await client.describe(`drained-${index}`)).placements) expect(shard.pair, `drained-${index}`).toBe(1);
    // Pair 0's counters still take writes and read exactly.
    await client.increment('before', 2);
    expect((await client.read('before')).total).toBe(7n);
    expect((await rejection(client.drainPair(1))).code).toBe('failed_precondition');
    await client.drainPair(0, { undrain: true });
    expect((await client.clusterStatus()).pairs[0]!.draining).toBe(false);
  }, 60_000);

  it('a router restart keeps a pair added online though --pairs lacks it', async () => {
    const { client } = cluster;
    await cluster.cluster.router.stop('SIGKILL');
    await cluster.cluster.router.start();
    await waitFor(async () => (await client.clusterStatus().catch(() => undefined))?.pairs.length === 2, {
      timeoutMs: 30_000,
      what: 'router back with 2 pairs',
    });
    expect(cluster.logs.some((line) => line.includes('was added online and is not in --pairs'))).toBe(true);
    for (let index = 0; index < 4; index++) expect((await client.read(`after-${index}`)).total).toBe(BigInt(index + 1));
  }, 60_000);

  it('tally pair drain prints one line, status shows DRAINING, and a pair add of an address in use is one line, exit non-zero', async () => {
    const env = { TALLY_ROUTER: cluster.cluster.routerAddress };
    const drain = await runCli(['pair', 'drain', '1'], env);
    expect(drain.code).toBe(0);
    expect(drain.stdout.trim()).toMatch(/^pair 1 is draining/);
    const status = await runCli(['status'], env);
    expect(status.stdout).toMatch(/pair 1: .*DRAINING/);
    await cluster.client.drainPair(1, { undrain: true });
    const taken = await runCli(['pair', 'add', extra[0]!.address, extra[1]!.address], env);
    expect(taken.code).not.toBe(0);
    expect(taken.stderr.trim().split('\n')).toHaveLength(1);
    expect(taken.stderr).toMatch(/already a node of pair/);
  }, 60_000);
});
