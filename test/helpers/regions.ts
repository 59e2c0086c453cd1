// Several regions on loopback for tests: one cluster per region (startCluster),
// each router told its peers' addresses through a TCP proxy whose target is
// set once the peer's router has bound (routers take port 0). The proxies
// also let a test cut a link (stop forwarding) without touching a process.
import net from 'node:net';
import { performance } from 'node:perf_hooks';
import { credentials, type ServiceError } from '@grpc/grpc-js';
import { CounterServiceClient, type counterV1 } from '../../src/common/index.ts';
import { expect } from 'vitest';
import { startCluster, waitFor, type TestCluster } from './cluster.ts';

export interface RegionProxy {
  address: string;
  target: string | undefined;
  /** While false, new connections are refused and open ones dropped. */
  forwarding: boolean;
  dropConnections(): void;
  close(): Promise<void>;
}

export async function startRegionProxy(): Promise<RegionProxy> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    if (proxy.target === undefined || !proxy.forwarding) return client.destroy();
    const colon = proxy.target.lastIndexOf(':');
    const upstream = net.connect(Number(proxy.target.slice(colon + 1)), proxy.target.slice(0, colon));
    sockets.add(client).add(upstream);
    client.pipe(upstream).pipe(client);
    const close = (): void => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('close', close).on('error', close);
    upstream.on('close', close).on('error', close);
  });
  const proxy: RegionProxy = {
    address: '',
    target: undefined,
    forwarding: true,
    dropConnections() {
      for (const socket of sockets) socket.destroy();
    },
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      proxy.dropConnections();
      await closed;
    },
  };
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  proxy.address = `127.0.0.1:${(server.address() as net.AddressInfo).port}`;
  return proxy;
}

export interface TestRegion {
  name: string;
  tc: TestCluster;
  /** The proxy the other regions reach this region's router through. */
  proxy: RegionProxy;
  raw: RawCounterClient;
}

export interface RawCounterClient {
  Read(request: counterV1.ReadRequest, callback: (error: ServiceError | null, response?: counterV1.ReadResponse__Output) => void): void;
  ReadMany(
    request: counterV1.ReadManyRequest,
    callback: (error: ServiceError | null, response?: counterV1.ReadManyResponse__Output) => void,
  ): void;
  close(): void;
}

/**
 * One cluster per name, each peered with all the others. `extraPeers`
 * adds peers by name to a region's --peer-regions (a misconfiguration test).
 */
export async function startRegions(
  names: readonly string[],
  options: {
    pairs?: number;
    publishIntervalMs?: number;
    extraPeers?: Record<string, string>;
    /** TLS and tokens everywhere (startCluster secure); beforeStartOf may replace a region's certificates and tokens. */
    secure?: boolean;
    beforeStartOf?: (name: string, dataDir: string) => void;
    /** Several routers on the region's own etcd. */
    routersOf?: (name: string) => number;
  } = {},
): Promise<TestRegion[]> {
  const proxies = await Promise.all(names.map(() => startRegionProxy()));
  const started = await Promise.allSettled(
    names.map(async (name, index) => {
      const peers = names
        .map((peer, peerIndex) => (peer === name ? undefined : `${peer}=${proxies[peerIndex]!.address}`))
        .filter((peer) => peer !== undefined);
      // "{region}" in an extra peer stands for that region's proxy address.
      const extra = options.extraPeers?.[name]?.replace(
        /\{([a-z0-9-]+)\}/g,
        (_, region: string) => proxies[names.indexOf(region)]!.address,
      );
      if (extra !== undefined) peers.push(extra);
      const tc = await startCluster({
        pairs: options.pairs ?? 1,
        metrics: true,
        routerArgs: [
          '--region',
          name,
          '--peer-regions',
          peers.join(';'),
          '--region-publish-interval-ms',
          String(options.publishIntervalMs ?? 100),
        ],
        nodeArgs: ['--region', name],
        ...(options.secure === true ? { secure: true } : {}),
        ...((options.routersOf?.(name) ?? 1) > 1 ? { routers: options.routersOf!(name), etcd: 'own' as const } : {}),
        ...(options.beforeStartOf === undefined ? {} : { beforeStart: (dataDir: string) => options.beforeStartOf!(name, dataDir) }),
      });
      proxies[index]!.target = tc.cluster.routerAddress;
      const raw = new CounterServiceClient(tc.cluster.routerAddress, credentials.createInsecure()) as unknown as RawCounterClient;
      return { name, tc, proxy: proxies[index]!, raw };
    }),
  );
  const regions = started.filter((result) => result.status === 'fulfilled').map((result) => result.value);
  const failure = started.find((result) => result.status === 'rejected');
  if (failure !== undefined) {
    await stopRegions(regions);
    await Promise.all(proxies.map((proxy) => proxy.close()));
    throw failure.reason;
  }
  return regions;
}

export async function stopRegions(regions: readonly TestRegion[]): Promise<void> {
  await Promise.all(
    regions.map(async (region) => {
      region.raw.close();
      await region.proxy.close();
      await region.tc.stop();
    }),
  );
}

export function rawRead(region: TestRegion, request: counterV1.ReadRequest): Promise<counterV1.ReadResponse__Output> {
  return new Promise((resolve, reject) => region.raw.Read(request, (error, response) => (error ? reject(error) : resolve(response!))));
}

export function rawReadMany(region: TestRegion, request: counterV1.ReadManyRequest): Promise<counterV1.ReadManyResponse__Output> {
  return new Promise((resolve, reject) => region.raw.ReadMany(request, (error, response) => (error ? reject(error) : resolve(response!))));
}

/** A SCOPE_GLOBAL exact read: the total and each region's part. */
export async function globalRead(
  region: TestRegion,
  counter: string,
): Promise<{ total: bigint; parts: Map<string, bigint>; response: counterV1.ReadResponse__Output }> {
  const response = await rawRead(region, { counter, scope: 'SCOPE_GLOBAL' });
  return {
    total: BigInt(response.total),
    parts: new Map(response.regions.map((part) => [part.region, BigInt(part.total)])),
    response,
  };
}

/** One increment's outcome as its writer saw it (monotonic ms). */
export interface Sent {
  amount: bigint;
  sentMs: number;
  /** When it was acknowledged; undefined: unknown outcome. */
  ackedMs: number | undefined;
}

/** Two keyed and two unkeyed writers incrementing `counter` through `region` until `until()` is false, each outcome in `log`. */
export async function load(region: TestRegion, counter: string, until: () => boolean, log: Sent[]): Promise<void> {
  let sequence = 0;
  const writer = async (keyed: boolean): Promise<void> => {
    while (until()) {
      const sent: Sent = { amount: BigInt(1 + (sequence++ % 5)), sentMs: performance.now(), ackedMs: undefined };
      log.push(sent);
      try {
        await region.tc.client.increment(counter, sent.amount, keyed ? {} : { idempotencyKey: null });
        sent.ackedMs = performance.now();
      } catch {
        // Unknown outcome (a write routed to a counter deleted meanwhile is refused, too).
      }
    }
  };
  await Promise.all([writer(true), writer(true), writer(false), writer(false)]);
}

export const sum = (sent: Sent[]): bigint => sent.reduce((total, each) => total + each.amount, 0n);

/**
 * The cut of a clear or delete made under load (docs/regions.md): per
 * region, everything sent after the region's cut (`after`) and acknowledged
 * counts, nothing acknowledged before the operation could have begun there
 * (`before`) survives, and something was taken away; then every region's
 * global read converges to the regions' post-cut totals, each part its
 * region's own. Returns those totals.
 */
export async function expectCutHeld(
  regions: readonly TestRegion[],
  counter: string,
  logs: ReadonlyMap<string, Sent[]>,
  cuts: ReadonlyMap<string, { after: number; before: number }>,
  what: string,
): Promise<Map<string, bigint>> {
  const exact = new Map<string, bigint>();
  for (const region of regions) {
    const log = logs.get(region.name)!;
    const { after, before } = cuts.get(region.name)!;
    const total = BigInt((await rawRead(region, { counter })).total);
    exact.set(region.name, total);
    const surelyCounted = sum(log.filter((each) => each.ackedMs !== undefined && each.sentMs > after));
    const mayCount = sum(log.filter((each) => each.ackedMs === undefined || each.ackedMs > before));
    expect(surelyCounted, `${region.name}: increments acknowledged after its cut`).toBeGreaterThan(0n);
    expect(total >= surelyCounted, `${region.name}: total ${total} < acknowledged after its cut ${surelyCounted}`).toBe(true);
    expect(total <= mayCount, `${region.name}: total ${total} > sent after the ${what} began ${mayCount}`).toBe(true);
    expect(total < sum(log), `${region.name}: the ${what} took something away`).toBe(true);
  }
  const all = [...exact.values()].reduce((total, part) => total + part, 0n);
  await waitFor(
    async () => {
      for (const region of regions) if ((await globalRead(region, counter)).total !== all) return false;
      return true;
    },
    { timeoutMs: 10_000, what: `every region's global read at ${all}` },
  );
  for (const region of regions) expect((await globalRead(region, counter)).parts).toEqual(exact);
  return exact;
}
