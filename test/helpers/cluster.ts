// Starts a real cluster (router + node pairs as processes) on loopback ports
// the kernel picks (each process reports its own) with a temp data dir, and
// always cleans up. Tests talk to it through the public client only.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { LocalCluster, nodeCertName, type NodeCertName } from '../../src/cluster/local-cluster.ts';
import { repoRoot } from '../../src/cluster/managed-process.ts';
import { createTallyClient, type TallyClient } from '../../src/client/index.ts';
import { makeTempDir, removeTempDir } from './temp-dir.ts';
import { pause } from './pause.ts';

export async function waitFor<T>(
  check: () => T | Promise<T>,
  options: { timeoutMs: number; intervalMs?: number; what?: string },
): Promise<NonNullable<T>> {
  const deadline = Date.now() + options.timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value) return value as NonNullable<T>;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) {
      throw new Error(
        `timed out after ${options.timeoutMs} ms waiting for ${options.what ?? 'a condition'}${lastError ? `: ${(lastError as Error).message}` : ''}`,
      );
    }
    await pause(options.intervalMs ?? 50);
  }
}

/** Checks `check` until durationMs have passed; throws the first time it is false. */
export async function holdsFor(
  check: () => boolean | Promise<boolean>,
  durationMs: number,
  options: { intervalMs?: number; what?: string } = {},
): Promise<void> {
  const startedMs = Date.now();
  while (Date.now() - startedMs < durationMs) {
    if (!(await check()))
      throw new Error(`${options.what ?? 'a condition'} stopped holding after ${Date.now() - startedMs} ms (of ${durationMs} ms)`);
    await pause(options.intervalMs ?? 100);
  }
}

export { pause };

export interface TestCluster {
  cluster: LocalCluster;
  client: TallyClient;
  dataDir: string;
  /** With { secure: true }: the certificates and tokens made by scripts/make-certs.sh. */
  certDir: string | undefined;
  routerMetricsPort: number;
  /** Output of every process, for a failing test's message. */
  logs: string[];
  stop(): Promise<void>;
}

/** A certificate make-certs.sh writes: the router's, a node's (nodeCertName: node-0a, node-0b, ...) or the client's. */
export type CertName = 'router' | 'client' | NodeCertName;

/** Certificate, key and CA flags for one of the identities make-certs.sh writes. */
export function tlsArgs(certDir: string, name: CertName): string[] {
  return [
    '--tls-cert',
    path.join(certDir, `${name}.crt`),
    '--tls-key',
    path.join(certDir, `${name}.key`),
    '--tls-ca',
    path.join(certDir, 'ca.crt'),
  ];
}

/** scripts/make-certs.sh into dir: a CA, router, client and one certificate per node of `pairs` pairs, and tokens. */
export function makeCerts(dir: string, pairs = 2): void {
  execFileSync(path.join(repoRoot, 'scripts/make-certs.sh'), ['--pairs', String(pairs), dir], { stdio: 'ignore' });
}

export async function startCluster(
  options: {
    pairs?: number;
    routerArgs?: string[];
    nodeArgs?: string[];
    metrics?: boolean;
    secure?: boolean;
    /** The client coalesces concurrent increments (createTallyClient coalesce). */ coalesce?: boolean;
    /**
     * Runs on the cluster's data directory before any process starts: the
     * router's is `<dataDir>/router`, each node's `<dataDir>/node-<pair>-<primary|follower>`
     * (to mount a small filesystem there, say). What it does, the test undoes.
     */
    beforeStart?: (dataDir: string) => void;
    /** Routers sharing the directory in etcd (default 1, embedded SQLite); more than one needs etcd. */
    routers?: number;
    /** An etcd of the cluster's own in its data directory ('own'), or one already running with a key prefix of this cluster's. */
    etcd?: 'own' | { endpoint: string; prefix: string };
    /** Extra environment for one process by name (LocalClusterOptions.envOf): e.g. makeFakeClock(...).env. */
    envOf?: (name: string) => Record<string, string> | undefined;
  } = {},
): Promise<TestCluster> {
  const pairCount = options.pairs ?? 2;
  const dataDir = makeTempDir('test');
  // Secure: TLS everywhere, mutual between processes, and bearer tokens on the router.
  const certDir = options.secure ? path.join(dataDir, 'certs') : undefined;
  if (certDir !== undefined) makeCerts(certDir, pairCount);
  const secureRouterArgs =
    certDir === undefined
      ? []
      : [
          ...tlsArgs(certDir, 'router'),
          '--admin-token-file',
          path.join(certDir, 'admin.token'),
          '--client-token-file',
          path.join(certDir, 'client.token'),
        ];
  const logs: string[] = [];
  const cluster = new LocalCluster({
    pairCount,
    dataDir,
    routerCount: options.routers ?? 1,
    ...(options.etcd === undefined
      ? {}
      : {
          etcd:
            options.etcd === 'own'
              ? { dataDir: path.join(dataDir, 'etcd') }
              : { endpoint: options.etcd.endpoint, prefix: options.etcd.prefix },
        }),
    host: '127.0.0.1',
    // Port 0 everywhere: nodes start first and report their ports, then the
    // router starts with their addresses (LocalCluster.start). A process
    // restarted after a kill asks for its port again; Linux starts its search
    // for a free port at random, so another test taking it meanwhile is unlikely.
    routerPort: 0,
    nodePorts: Array.from({ length: pairCount * 2 }, () => 0),
    routerMetricsPort: options.metrics ? 'any' : 0,
    nodeMetricsPorts: Array.from({ length: pairCount * 2 }, () => (options.metrics ? 'any' : 0)),
    routerArgs: [...secureRouterArgs, ...(options.routerArgs ?? [])],
    nodeArgs: options.nodeArgs ?? [],
    // Each node its own key, as make-certs.sh names them.
    nodeArgsOf: (pairIndex, role) => (certDir === undefined ? [] : tlsArgs(certDir, nodeCertName(pairIndex, role))),
    ...(options.envOf === undefined ? {} : { envOf: options.envOf }),
    onLine: (name, line) => {
      logs.push(`[${name}] ${line}`);
      if (logs.length > 2_000) logs.shift();
    },
  });
  try {
    options.beforeStart?.(dataDir);
    await cluster.start();
  } catch (error) {
    await cluster.stop('SIGKILL');
    removeTempDir(dataDir);
    throw error;
  }
  const client = createTallyClient({
    address: cluster.routerAddress,
    deadlineMs: 10_000,
    coalesce: options.coalesce ?? false,
    // A test restarts routers within seconds and reads at once: reconnect within 1 s, not the library's fleet-friendly 30 s cap.
    channelOptions: { 'grpc.max_reconnect_backoff_ms': 1_000 },
    ...(certDir === undefined
      ? {}
      : {
          tls: { ca: fs.readFileSync(path.join(certDir, 'ca.crt')) },
          token: fs.readFileSync(path.join(certDir, 'admin.token'), 'utf8').trim(),
        }),
  });
  return {
    cluster,
    client,
    dataDir,
    certDir,
    // Fixed from here on: a restarted router asks for the port it reported.
    routerMetricsPort: cluster.routerMetricsPort,
    logs,
    async stop() {
      client.close();
      await cluster.stop('SIGKILL');
      removeTempDir(dataDir);
    },
  };
}

/** The text a /metrics endpoint on loopback serves. */
export async function metricsText(port: number): Promise<string> {
  return (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
}

/**
 * One metric's value, summed over the label sets matching `labels`, from a
 * /metrics endpoint. Throws when no series matches: a missing metric is not 0.
 */
export async function scrapeMetric(port: number, name: string, labels: Record<string, string> = {}): Promise<number> {
  const body = await metricsText(port);
  let sum = 0;
  let found = false;
  for (const line of body.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (!Object.entries(labels).every(([key, value]) => line.includes(`${key}="${value}"`))) continue;
    sum += Number(line.slice(line.lastIndexOf(' ') + 1));
    found = true;
  }
  if (!found) throw new Error(`no ${name}${JSON.stringify(labels)} on port ${port}`);
  return sum;
}

/** Whether every node is SERVING, every pair in sync and no follower behind, now. */
export async function isHealthy(client: TallyClient): Promise<boolean> {
  const cluster = await client.clusterStatus();
  return cluster.nodes.every((node) => node.health === 'SERVING' && node.inSync && node.error === '' && node.replicationLagEntries === 0n);
}

/** Every node SERVING, every pair in sync, no follower behind. */
export async function waitForHealthy(client: TallyClient, timeoutMs = 30_000): Promise<void> {
  await waitFor(() => isHealthy(client), { timeoutMs, what: 'every node serving and every pair in sync' });
}
