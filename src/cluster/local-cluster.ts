// A whole cluster on one machine: node pairs and a router as child processes
// on loopback. Used by `npm start` and by the tests' startCluster helper.
import path from 'node:path';
import { ManagedProcess, nodeMainPath, routerMainPath } from './managed-process.ts';

export interface LocalClusterOptions {
  pairCount: number;
  dataDir: string;
  host: string;
  routerPort: number;
  /** Ports for nodes: pair i's primary gets nodePorts[2i], its follower nodePorts[2i+1]. */
  nodePorts: number[];
  /** 0 disables; node metrics ports follow the same order as nodePorts. */
  routerMetricsPort: number;
  nodeMetricsPorts: number[];
  routerArgs?: string[];
  nodeArgs?: string[];
  onLine?: (name: string, line: string) => void;
}

export interface NodeProcess {
  process: ManagedProcess;
  address: string;
  pairIndex: number;
  role: 'primary' | 'follower';
  dataDir: string;
  metricsPort: number;
}

export class LocalCluster {
  readonly router: ManagedProcess;
  readonly nodes: NodeProcess[] = [];
  readonly routerAddress: string;

  constructor(readonly options: LocalClusterOptions) {
    if (options.nodePorts.length !== options.pairCount * 2) throw new Error('need two node ports per pair');
    for (let pairIndex = 0; pairIndex < options.pairCount; pairIndex++) {
      for (const role of ['primary', 'follower'] as const) {
        const slot = pairIndex * 2 + (role === 'primary' ? 0 : 1);
        const address = `${options.host}:${options.nodePorts[slot]}`;
        const dataDir = path.join(options.dataDir, `node-${pairIndex}-${role}`);
        const metricsPort = options.nodeMetricsPorts[slot] ?? 0;
        const name = `node-${pairIndex}-${role}`;
        this.nodes.push({
          address,
          pairIndex,
          role,
          dataDir,
          metricsPort,
          process: new ManagedProcess({
            name,
            script: nodeMainPath,
            args: ['--listen', address, '--data-dir', dataDir, '--metrics-port', String(metricsPort), '--node-name', name, ...(options.nodeArgs ?? [])],
            onLine: options.onLine,
          }),
        });
      }
    }
    this.routerAddress = `${options.host}:${options.routerPort}`;
    const pairsFlag = Array.from({ length: options.pairCount }, (_, pairIndex) => `${this.nodes[pairIndex * 2]!.address},${this.nodes[pairIndex * 2 + 1]!.address}`).join(';');
    this.router = new ManagedProcess({
      name: 'router',
      script: routerMainPath,
      args: [
        '--listen', this.routerAddress,
        '--pairs', pairsFlag,
        '--data-dir', path.join(options.dataDir, 'router'),
        '--metrics-port', String(options.routerMetricsPort),
        ...(options.routerArgs ?? []),
      ],
      onLine: options.onLine,
    });
  }

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
