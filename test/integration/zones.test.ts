// Failure domains with real processes: nodes report their zone (TALLY_ZONE)
// and where their partner replicates to (TALLY_ADVERTISE_REPLICATION_ADDRESS);
// the status shows both and warns of a pair inside one zone while another
// exists; a counter's shards spread over zones before pairs; and a primary
// replicates to its follower's advertised address, not to the one routers
// dial (cut that path and the pair falls out of sync though the follower
// still answers routers).
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCluster, waitFor, waitForHealthy, type TestCluster } from '../helpers/cluster.ts';
import { tally } from '../helpers/cli.ts';
import { shardProtocol } from '../../src/wire/internal/index.ts';

/** A TCP proxy whose target is set later (the follower's port is known once it started); counts connections. */
async function startLateProxy(): Promise<{ address: string; target?: string; connections: number; kill(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const proxy = {
    address: '',
    target: undefined as string | undefined,
    connections: 0,
    async kill(): Promise<void> {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
  const server = net.createServer((client) => {
    if (proxy.target === undefined) return client.destroy();
    proxy.connections++;
    const colon = proxy.target.lastIndexOf(':');
    const upstream = net.connect(Number(proxy.target.slice(colon + 1)), proxy.target.slice(0, colon));
    sockets.add(client).add(upstream);
    client.pipe(upstream).pipe(client);
    const close = (): void => {
      client.destroy();
      upstream.destroy();
    };
    client.on('close', close).on('error', close);
    upstream.on('close', close).on('error', close);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  proxy.address = `127.0.0.1:${(server.address() as net.AddressInfo).port}`;
  return proxy;
}

// Pair 0: a/b; pair 1: b/a (its follower reached for replication through the proxy); pair 2: a/a.
const zones: Record<string, string> = {
  'node-0-primary': 'zone-a',
  'node-0-follower': 'zone-b',
  'node-1-primary': 'zone-b',
  'node-1-follower': 'zone-a',
  'node-2-primary': 'zone-a',
  'node-2-follower': 'zone-a',
};

describe('zones', () => {
  let tc: TestCluster;
  let proxy: Awaited<ReturnType<typeof startLateProxy>>;

  beforeAll(async () => {
    proxy = await startLateProxy();
    tc = await startCluster({
      pairs: 3,
      envOf: (name) => ({
        TALLY_ZONE: zones[name] ?? '',
        ...(name === 'node-1-follower' ? { TALLY_ADVERTISE_REPLICATION_ADDRESS: proxy.address } : {}),
      }),
    });
    proxy.target = tc.cluster.node(1, 'follower').address;
    await waitForHealthy(tc.client);
  }, 60_000);

  afterAll(async () => {
    await proxy?.kill();
    await tc?.stop();
  });

  it('status shows each node’s zone and warns only of the pair inside one zone', async () => {
    const status = await tc.client.clusterStatus();
    for (const node of status.nodes) {
      const name = `node-${node.pair}-${node.address === tc.cluster.node(node.pair, 'primary').address ? 'primary' : 'follower'}`;
      expect(node.zone, node.address).toBe(zones[name]);
      expect(node.protocolVersion).toBe(shardProtocol.current);
    }
    expect(status.pairs.map((pair) => pair.zoneWarning === '')).toEqual([true, true, false]);
    expect(status.pairs[2]!.zoneWarning).toMatch(/both nodes are in zone zone-a while zone zone-b exists/);
    // tally status says the same, one line per pair and node.
    const cli = await tally(['status', '--router', tc.cluster.routerAddress]);
    expect(cli.code, cli.stderr).toBe(0);
    const pairLines = cli.stdout.split('\n').filter((line) => line.startsWith('pair '));
    expect(pairLines.map((line) => line.includes('WARNING: both nodes are in zone zone-a'))).toEqual([false, false, true]);
    expect(cli.stdout).toContain(`zone zone-a  replicates via ${proxy.address}`);
  });

  it("a counter's shards go to another zone before another pair of the same zone", async () => {
    // hot lands on pair 0 (zone a); a filler on pair 1 makes pair 2 (zone a) the pair with the
    // fewest shards, which a zone-blind placement would pick for hot's second shard.
    await tc.client.increment('zones:hot', 1);
    expect((await tc.client.describe('zones:hot')).placements.map((shard) => shard.pair)).toEqual([0]);
    await tc.client.increment('zones:filler', 1);
    expect((await tc.client.describe('zones:filler')).placements.map((shard) => shard.pair)).toEqual([1]);
    await tc.client.setShards('zones:hot', 2);
    expect((await tc.client.describe('zones:hot')).placements.map((shard) => shard.pair)).toEqual([0, 1]);
  });

  it('a primary replicates to the address its follower advertises', async () => {
    const status = await tc.client.clusterStatus();
    const follower = status.nodes.find((node) => node.pair === 1 && node.role === 'follower')!;
    expect(follower.replicationAddress).toBe(proxy.address);
    expect(proxy.connections).toBeGreaterThan(0);
    // Keyed writes to pair 1 while in sync are confirmed through the proxy.
    for (let index = 0; index < 20; index++) await tc.client.increment('zones:filler', 1, { idempotencyKey: `k${index}` });
    expect((await tc.client.read('zones:filler')).total).toBe(21n);
    // Cut the advertised path: the follower still answers routers, yet the pair falls out of sync.
    await proxy.kill();
    await tc.client.increment('zones:filler', 1);
    await waitFor(async () => (await tc.client.clusterStatus()).nodes.some((node) => node.pair === 1 && !node.inSync), {
      timeoutMs: 15_000,
      what: 'pair 1 out of sync once its replication path is cut',
    });
    const after = await tc.client.clusterStatus();
    expect(after.nodes.find((node) => node.pair === 1 && node.role === 'follower')!.health).toBe('SERVING');
    expect((await tc.client.read('zones:filler')).total).toBe(22n);
  });
});
