// A whole cluster on one machine: node pairs and one router (embedded
// directory), or several routers sharing a directory in etcd, as child
// processes on loopback. Used by `npm start` and by the tests' startCluster helper.
import path from 'node:path';
import type { MetricsPort } from '../common/index.ts';
import { EtcdProcess } from './etcd-process.ts';
import { ManagedProcess, nodeMainPath, routerMainPath } from './managed-process.ts';
import type { Restartable } from './restart-policy.ts';

/**
 * Where the routers keep the directory. Absent: the embedded SQLite
 * directory, one router. `dataDir`: an etcd of our own (the launcher),
 * started before and stopped after the routers; `endpoint`: one already
 * running (a test file's). `prefix`: every key under it (--etcd-prefix).
 */
export type LocalClusterEtcd = ({ dataDir: string; clientPort?: number } | { endpoint: string }) & { prefix?: string };

export interface LocalClusterOptions {
  pairCount: number;
  dataDir: string;
  host: string;
  /** Routers; more than one needs `etcd`. Default 1. */
  routerCount?: number;
  etcd?: LocalClusterEtcd;
  /** The first router's port (routerPortOf gives the others); 0: ports the kernel picks, read from each "ready" line. */
  routerPort: number;
  /** Ports for nodes: pair i's primary gets nodePorts[2i], its follower nodePorts[2i+1]; 0 as for routerPort. */
  nodePorts: number[];
  /** 0 disables, 'any' as port 0 above; further routers take the next ones (routerMetricsPortOf); node metrics ports follow the same order as nodePorts. */
  routerMetricsPort: MetricsPort;
  nodeMetricsPorts: MetricsPort[];
  /** Arguments for every router, after the ones the cluster gives. */
  routerArgs?: string[];
  /** Arguments for one router only (from 0), after routerArgs: its own --http-port, say. */
  routerArgsOf?: (routerIndex: number) => string[];
  nodeArgs?: string[];
  /** Arguments for one node only, after nodeArgs: its own certificate (nodeCertName) and key. */
  nodeArgsOf?: (pairIndex: number, role: 'primary' | 'follower') => string[];
  onLine?: (name: string, line: string) => void;
  /** Extra environment for one process, by name (`node-<pair>-<role>`, `router`, `router-<n>`): a steppable wall clock, say. */
  envOf?: (name: string) => Record<string, string> | undefined;
}

/** Router i's port (from 0) when the first asks for firstPort: the next ports in order; 0 stays 0. */
export function routerPortOf(firstPort: number, routerIndex: number): number {
  return firstPort === 0 ? 0 : firstPort + routerIndex;
}

/** Router i's metrics port, the same way: 0 (off) and 'any' stay as they are. */
export function routerMetricsPortOf(firstPort: MetricsPort, routerIndex: number): MetricsPort {
  return firstPort === 0 || firstPort === 'any' ? firstPort : firstPort + routerIndex;
}

/**
 * The name scripts/make-certs.sh gives a node's certificate and key: pair i's
 * primary node-<i>a, its follower node-<i>b (the compose service names).
 */
export type NodeCertName = `node-${number}${'a' | 'b'}`;
export function nodeCertName(pairIndex: number, role: 'primary' | 'follower'): NodeCertName {
  return `node-${pairIndex}${role === 'primary' ? 'a' : 'b'}`;
}

/**
 * One process of the cluster, node or router. A process asked for port 0 has
 * its address once it first reports ready, and every restart asks for the
 * ports the first start reported: the router's directory records nodes by
 * address, and clients hold the router's.
 */
abstract class ClusterMember {
  process: ManagedProcess;

  constructor(
    name: string,
    script: string,
    readonly dataDir: string,
    private readonly host: string,
    private readonly askedPort: number,
    private readonly askedMetricsPort: MetricsPort,
    /** Everything after --listen, --data-dir and --metrics-port: read at every start. */
    argsAfter: () => string[],
    env: NodeJS.ProcessEnv,
    onLine: LocalClusterOptions['onLine'],
  ) {
    const argsNow = (): string[] => {
      const metricsPort = this.process.ports === undefined ? this.askedMetricsPort : this.metricsPort;
      return ['--listen', this.address, '--data-dir', dataDir, '--metrics-port', String(metricsPort), ...argsAfter()];
    };
    this.process = new ManagedProcess({
      name,
      script,
      // Read at every start, so a restart asks for the ports the first start reported.
      get args() {
        return argsNow();
      },
      env,
      onLine,
    });
  }

  /** host:port; the port asked for until the process reports the one it bound. */
  get address(): string {
    return `${this.host}:${this.process.ports?.port ?? this.askedPort}`;
  }

  /** The /metrics port; 0 when off, or when 'any' was asked and the process has not reported yet. */
  get metricsPort(): number {
    const ports = this.process.ports;
    if (ports !== undefined) return ports.metricsPort ?? 0;
    return this.askedMetricsPort === 'any' ? 0 : this.askedMetricsPort;
  }
}

/** One node of the cluster, `node-<pair>-<role>`, data in its own directory. */
export class NodeProcess extends ClusterMember {
  constructor(
    readonly pairIndex: number,
    readonly role: 'primary' | 'follower',
    dataDir: string,
    host: string,
    askedPort: number,
    askedMetricsPort: MetricsPort,
    nodeArgs: string[],
    onLine: LocalClusterOptions['onLine'],
    env: NodeJS.ProcessEnv = {},
  ) {
    const name = `node-${pairIndex}-${role}`;
    super(name, nodeMainPath, dataDir, host, askedPort, askedMetricsPort, () => ['--node-name', name, ...nodeArgs], env, onLine);
  }
}

/**
 * One router of the cluster: `router` with the embedded directory (data in
 * <dataDir>/router), `router-<n>` (n from 1) on etcd, with that router id and
 * data in <dataDir>/router-<n>.
 */
export class RouterProcess extends ClusterMember {
  constructor(
    readonly routerIndex: number,
    readonly name: string,
    dataDir: string,
    host: string,
    askedPort: number,
    askedMetricsPort: MetricsPort,
    argsAfter: () => string[],
    env: NodeJS.ProcessEnv,
    onLine: LocalClusterOptions['onLine'],
  ) {
    super(name, routerMainPath, dataDir, host, askedPort, askedMetricsPort, argsAfter, env, onLine);
  }
}

export class LocalCluster {
  readonly routers: RouterProcess[] = [];
  readonly nodes: NodeProcess[] = [];
  /** The etcd this cluster runs itself (etcd.dataDir); undefined with the embedded directory or an etcd endpoint given. */
  readonly etcd: EtcdProcess | undefined;

  constructor(readonly options: LocalClusterOptions) {
    if (options.nodePorts.length !== options.pairCount * 2) throw new Error('need two node ports per pair');
    const routerCount = options.routerCount ?? 1;
    if (!Number.isInteger(routerCount) || routerCount < 1) throw new Error(`routerCount must be a whole number from 1, got ${routerCount}`);
    if (routerCount > 1 && options.etcd === undefined)
      throw new Error('several routers need etcd: they cannot share an embedded directory');
    for (let pairIndex = 0; pairIndex < options.pairCount; pairIndex++) {
      for (const role of ['primary', 'follower'] as const) {
        const slot = pairIndex * 2 + (role === 'primary' ? 0 : 1);
        const dataDir = path.join(options.dataDir, `node-${pairIndex}-${role}`);
        this.nodes.push(
          new NodeProcess(
            pairIndex,
            role,
            dataDir,
            options.host,
            options.nodePorts[slot]!,
            options.nodeMetricsPorts[slot] ?? 0,
            [...(options.nodeArgs ?? []), ...(options.nodeArgsOf?.(pairIndex, role) ?? [])],
            options.onLine,
            options.envOf?.(`node-${pairIndex}-${role}`),
          ),
        );
      }
    }
    const etcd = options.etcd;
    this.etcd =
      etcd !== undefined && 'dataDir' in etcd
        ? new EtcdProcess({
            dataDir: etcd.dataDir,
            // Loopback whatever --host says: the routers are on this machine,
            // and this etcd has no TLS or auth (anyone reaching it could rewrite the directory).
            host: '127.0.0.1',
            clientPort: etcd.clientPort ?? 0,
            stopWithParent: true,
            onLine: (line) => options.onLine?.('etcd', line),
          })
        : undefined;
    // Read at every start: the nodes' addresses are known once they have reported ready.
    const pairsFlag = (): string =>
      Array.from(
        { length: options.pairCount },
        (_, pairIndex) => `${this.nodes[pairIndex * 2]!.address},${this.nodes[pairIndex * 2 + 1]!.address}`,
      ).join(';');
    for (let routerIndex = 0; routerIndex < routerCount; routerIndex++) {
      const name = etcd === undefined ? 'router' : `router-${routerIndex + 1}`;
      const etcdArgs = (): string[] =>
        etcd === undefined
          ? []
          : ['--etcd', this.etcdEndpoint!, '--router-id', name, ...(etcd.prefix === undefined ? [] : ['--etcd-prefix', etcd.prefix])];
      this.routers.push(
        new RouterProcess(
          routerIndex,
          name,
          path.join(options.dataDir, name),
          options.host,
          routerPortOf(options.routerPort, routerIndex),
          routerMetricsPortOf(options.routerMetricsPort, routerIndex),
          () => ['--pairs', pairsFlag(), ...etcdArgs(), ...(options.routerArgs ?? []), ...(options.routerArgsOf?.(routerIndex) ?? [])],
          // The cluster decides the store: a TALLY_ETCD the caller's environment
          // happens to hold must not move an embedded router onto some etcd.
          { ...(etcd === undefined ? { TALLY_ETCD: undefined, TALLY_ROUTER_ID: undefined } : {}), ...options.envOf?.(name) },
          options.onLine,
        ),
      );
    }
  }

  /** The routers' etcd client URL; undefined with the embedded directory. */
  get etcdEndpoint(): string | undefined {
    const etcd = this.options.etcd;
    if (etcd === undefined) return undefined;
    return 'endpoint' in etcd ? etcd.endpoint : this.etcd!.endpoint;
  }

  /** The first router (the only one with the embedded directory). */
  get router(): ManagedProcess {
    return this.routers[0]!.process;
  }

  /** The first router's host:port; the port asked for until it reports the one it bound. */
  get routerAddress(): string {
    return this.routers[0]!.address;
  }

  /** Every router's host:port, in order. */
  get routerAddresses(): string[] {
    return this.routers.map((router) => router.address);
  }

  /** The first router's /metrics port; 0 when off, or when 'any' was asked and it has not reported yet. */
  get routerMetricsPort(): number {
    return this.routers[0]!.metricsPort;
  }

  /** Every process a supervisor should keep running: etcd (when ours), the routers, the nodes. */
  get members(): Restartable[] {
    return [
      ...(this.etcd === undefined ? [] : [this.etcd]),
      ...this.routers.map((router) => router.process),
      ...this.nodes.map((node) => node.process),
    ];
  }

  /**
   * Nodes and etcd first (the routers are told the nodes' addresses, which a
   * node asked for port 0 has only once ready, and need etcd), then the first
   * router alone (on a fresh etcd it registers the pairs without a race to
   * settle, which keeps the first log readable), then the others together.
   */
  async start(): Promise<void> {
    await Promise.all([...this.nodes.map((node) => node.process.start()), this.etcd?.start()]);
    await this.routers[0]!.process.start();
    await Promise.all(this.routers.slice(1).map((router) => router.process.start()));
  }

  /** Routers first (they drain in-flight increments into the nodes), then the nodes, then etcd (routers leave it cleanly). */
  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    await Promise.all(this.routers.map((router) => router.process.stop(signal)));
    await Promise.all(this.nodes.map((node) => node.process.stop(signal)));
    if (this.etcd !== undefined) await (signal === 'SIGKILL' ? this.etcd.kill('SIGKILL') : this.etcd.stop());
  }

  node(pairIndex: number, role: 'primary' | 'follower'): NodeProcess {
    const node = this.nodes.find((candidate) => candidate.pairIndex === pairIndex && candidate.role === role);
    if (node === undefined) throw new Error(`no ${role} in pair ${pairIndex}`);
    return node;
  }
}
