// A whole cluster on one machine: node pairs and a router as child processes
// on loopback. Used by `npm start` and by the tests' startCluster helper.
import path from 'node:path';
import type { MetricsPort } from '../common/index.ts';
import { ManagedProcess, nodeMainPath, routerMainPath } from './managed-process.ts';

export interface LocalClusterOptions {
  pairCount: number;
  dataDir: string;
  host: string;
  /** 0: a port the kernel picks, read from the router's "ready" line. */
  routerPort: number;
  /** Ports for nodes: pair i's primary gets nodePorts[2i], its follower nodePorts[2i+1]; 0 as for routerPort. */
  nodePorts: number[];
  /** 0 disables, 'any' as port 0 above; node metrics ports follow the same order as nodePorts. */
  routerMetricsPort: MetricsPort;
  nodeMetricsPorts: MetricsPort[];
  routerArgs?: string[];
  nodeArgs?: string[];
  /** Arguments for one node only, after nodeArgs: its own certificate (nodeCertName) and key. */
  nodeArgsOf?: (pairIndex: number, role: 'primary' | 'follower') => string[];
  onLine?: (name: string, line: string) => void;
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
 * One node of the cluster. A node asked for port 0 has its address once it
 * first reports ready, and every restart asks for that port again: the
 * router's directory records nodes by address.
 */
export class NodeProcess {
  process: ManagedProcess;

  constructor(
    readonly pairIndex: number,
    readonly role: 'primary' | 'follower',
    readonly dataDir: string,
    private readonly host: string,
    private readonly askedPort: number,
    private readonly askedMetricsPort: MetricsPort,
    nodeArgs: string[],
    onLine: LocalClusterOptions['onLine'],
  ) {
    const name = `node-${pairIndex}-${role}`;
    const argsNow = (): string[] => {
      const metricsPort = this.process.ports === undefined ? this.askedMetricsPort : this.metricsPort;
      return ['--listen', this.address, '--data-dir', dataDir, '--metrics-port', String(metricsPort), '--node-name', name, ...nodeArgs];
    };
    this.process = new ManagedProcess({
      name,
      script: nodeMainPath,
      // Read at every start, so a restart asks for the ports the first start reported.
      get args() {
        return argsNow();
      },
      onLine,
    });
  }

  /** host:port; the port asked for until the node reports the one it bound. */
  get address(): string {
    return `${this.host}:${this.process.ports?.port ?? this.askedPort}`;
  }

  /** The /metrics port; 0 when off, or when 'any' was asked and the node has not reported yet. */
  get metricsPort(): number {
    const ports = this.process.ports;
    if (ports !== undefined) return ports.metricsPort ?? 0;
    return this.askedMetricsPort === 'any' ? 0 : this.askedMetricsPort;
  }
}

export class LocalCluster {
  readonly router: ManagedProcess;
  readonly nodes: NodeProcess[] = [];

  constructor(readonly options: LocalClusterOptions) {
    if (options.nodePorts.length !== options.pairCount * 2) throw new Error('need two node ports per pair');
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
          ),
        );
      }
    }
    // Read at every start: the nodes' addresses are known once they have reported ready.
    const argsNow = (): string[] => {
      const pairsFlag = Array.from(
        { length: options.pairCount },
        (_, pairIndex) => `${this.nodes[pairIndex * 2]!.address},${this.nodes[pairIndex * 2 + 1]!.address}`,
      ).join(';');
      const metricsPort = this.router.ports === undefined ? options.routerMetricsPort : this.routerMetricsPort;
      return [
        '--listen',
        this.routerAddress,
        '--pairs',
        pairsFlag,
        '--data-dir',
        path.join(options.dataDir, 'router'),
        '--metrics-port',
        String(metricsPort),
        ...(options.routerArgs ?? []),
      ];
    };
    this.router = new ManagedProcess({
      name: 'router',
      script: routerMainPath,
      get args() {
        return argsNow();
      },
      onLine: options.onLine,
    });
  }

  /** host:port; the port asked for until the router reports the one it bound. */
  get routerAddress(): string {
    return `${this.options.host}:${this.router.ports?.port ?? this.options.routerPort}`;
  }

  /** The router's /metrics port; 0 when off, or when 'any' was asked and the router has not reported yet. */
  get routerMetricsPort(): number {
    const ports = this.router.ports;
    if (ports !== undefined) return ports.metricsPort ?? 0;
    return this.options.routerMetricsPort === 'any' ? 0 : this.options.routerMetricsPort;
  }

  /** Nodes first: the router is told their addresses, which a node asked for port 0 has only once ready. */
  async start(): Promise<void> {
    await Promise.all(this.nodes.map((node) => node.process.start()));
    await this.router.start();
  }

  /** Router first (it drains in-flight increments into the nodes), then the nodes. */
  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    await this.router.stop(signal);
    await Promise.all(this.nodes.map((node) => node.process.stop(signal)));
  }

  node(pairIndex: number, role: 'primary' | 'follower'): NodeProcess {
    const node = this.nodes.find((candidate) => candidate.pairIndex === pairIndex && candidate.role === role);
    if (node === undefined) throw new Error(`no ${role} in pair ${pairIndex}`);
    return node;
  }
}
