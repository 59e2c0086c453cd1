// A Tally cluster where every process is a host of its own: three etcd members,
// node pairs, two routers sharing the directory in etcd, and the client host
// that drives load. Started with the flags an operator would use on separate
// machines (each listens on its host's address; plaintext accepted explicitly).
import fs from 'node:fs';
import path from 'node:path';
import { etcdTxnOpsMax } from '../../../src/common/index.ts';
import { nodeMainPath, repoRoot, routerMainPath } from '../../../src/cluster/managed-process.ts';
import { freshBuild } from '../build.ts';
import { makeFakeClock, type FakeClock } from '../fake-clock.ts';
import { buildMidFrameKiller } from '../kill-mid-frame.ts';
import { makeTempDir, removeTempDir } from '../temp-dir.ts';
import { ClientHost } from './client/index.ts';
import { HostProcess, Network, requireNemesisTools } from './hosts/index.ts';

/** Where the node and router programs are: the repository (dist/ or src/ under tsx) or a fresh build of it. */
export interface Program {
  root: string;
  nodeMain: string;
  routerMain: string;
  remove?: () => void;
}

/** The repository's programs as the rest of the suite runs them (dist/ under npm test, src/ through tsx otherwise). */
export function repoProgram(): Program {
  return { root: repoRoot, nodeMain: nodeMainPath, routerMain: routerMainPath };
}

/** A build of the sources as they are now, in a temp directory: a long soak is not disturbed by edits or rebuilds meanwhile. */
export async function freshBuildProgram(): Promise<Program> {
  const build = await freshBuild();
  return {
    root: build.root,
    nodeMain: path.join(build.root, 'dist/node/main.js'),
    routerMain: path.join(build.root, 'dist/router/main.js'),
    remove: build.remove,
  };
}

export type ProcessRole = 'etcd' | 'node' | 'router';

export interface ClusterProcess {
  /** Host and process name: e1..e3, n0a (pair 0, first primary), n0b, r1, r2. */
  name: string;
  role: ProcessRole;
  process: HostProcess;
  dataDir: string;
  /** Routers and nodes: a wall clock the harness can step. */
  clock?: FakeClock;
  /** Nodes: the file that arms their kill-mid-frame shim (test/helpers/kill-mid-frame.ts) while it exists. */
  midFrameArm?: string;
  pairIndex?: number;
}

export interface NemesisClusterOptions {
  pairCount?: number;
  routerCount?: number;
  routerArgs?: string[];
  nodeArgs?: string[];
  program?: Program;
  /** Every line any process logs (after the cluster's own ring buffer). */
  onLine?: (name: string, line: string) => void;
}

export const nodePort = 50061;
export const routerPort = 50051;
const etcdClientPort = 2379;
const etcdPeerPort = 2380;
const etcdMemberCount = 3;
const logLinesKept = 4_000;

const isReadyLine = (line: string): boolean => line.includes('"msg":"ready"');

function nodeArgsOf(script: string): string[] {
  return /\.[cm]?ts$/.test(script) ? ['--import', 'tsx', script] : [script];
}

export class NemesisCluster {
  readonly processes = new Map<string, ClusterProcess>();
  readonly client: ClientHost;
  /** The last lines every process logged, "[name] line". */
  readonly logs: string[] = [];
  private stopped = false;
  private readonly onExit = (): void => this.network.destroy();

  private constructor(
    readonly network: Network,
    readonly dataDir: string,
    readonly options: NemesisClusterOptions & { program: Program; pairCount: number; routerCount: number },
  ) {
    const onLine = (name: string, line: string): void => {
      this.logs.push(`[${name}] ${line}`);
      if (this.logs.length > logLinesKept) this.logs.shift();
      options.onLine?.(name, line);
    };
    const etcdNames = Array.from({ length: etcdMemberCount }, (_, index) => `e${index + 1}`);
    const initialCluster = etcdNames.map((name) => `${name}=http://${network.host(name).address}:${etcdPeerPort}`).join(',');
    for (const name of etcdNames) {
      const host = network.host(name);
      const memberDir = path.join(dataDir, name);
      const clientUrl = `http://${host.address}:${etcdClientPort}`;
      const peerUrl = `http://${host.address}:${etcdPeerPort}`;
      this.add({
        name,
        role: 'etcd',
        dataDir: memberDir,
        process: new HostProcess({
          name,
          host,
          command: 'etcd',
          args: () => [
            '--name',
            name,
            '--data-dir',
            memberDir,
            '--listen-client-urls',
            clientUrl,
            '--advertise-client-urls',
            clientUrl,
            '--listen-peer-urls',
            peerUrl,
            '--initial-advertise-peer-urls',
            peerUrl,
            '--initial-cluster',
            initialCluster,
            '--initial-cluster-state',
            'new',
            '--initial-cluster-token',
            network.label,
            '--max-txn-ops',
            String(etcdTxnOpsMax),
            '--logger',
            'zap',
            '--log-level',
            'info',
          ],
          // etcd 3.4 says this once it serves clients (after the cluster has a leader).
          isReady: (line) => line.includes('serving client traffic insecurely') || line.includes('ready to serve client requests'),
          onLine,
        }),
      });
    }
    const clockDir = path.join(dataDir, 'clocks');
    fs.mkdirSync(clockDir, { recursive: true });
    const midFrameKiller = buildMidFrameKiller(path.join(dataDir, 'shims'));
    const program = options.program;
    for (let pairIndex = 0; pairIndex < options.pairCount; pairIndex++) {
      for (const side of ['a', 'b']) {
        const name = `n${pairIndex}${side}`;
        const host = network.host(name);
        const nodeDir = path.join(dataDir, name);
        const clock = makeFakeClock(clockDir, name);
        const midFrameArm = path.join(clockDir, `${name}.kill-mid-frame`);
        this.add({
          name,
          role: 'node',
          pairIndex,
          dataDir: nodeDir,
          clock,
          midFrameArm,
          process: new HostProcess({
            name,
            host,
            command: process.execPath,
            args: () => [
              ...nodeArgsOf(program.nodeMain),
              '--listen',
              `${host.address}:${nodePort}`,
              '--insecure',
              '--data-dir',
              nodeDir,
              '--node-name',
              name,
              '--metrics-port',
              '0',
              ...(options.nodeArgs ?? []),
            ],
            // Both shims: the steppable clock and the kill between a frame's two writes.
            env: {
              ...clock.env,
              LD_PRELOAD: [clock.env.LD_PRELOAD, midFrameKiller.library].filter(Boolean).join(' '),
              TALLY_KILL_MID_FRAME_ARM: midFrameArm,
              TALLY_STOP_WITH_PARENT: '1',
            },
            cwd: program.root,
            isReady: isReadyLine,
            onLine,
          }),
        });
      }
    }
    const pairsFlag = Array.from(
      { length: options.pairCount },
      (_, pairIndex) => `${this.addressOf(`n${pairIndex}a`)},${this.addressOf(`n${pairIndex}b`)}`,
    ).join(';');
    const etcdFlag = etcdNames.map((name) => `http://${network.host(name).address}:${etcdClientPort}`).join(',');
    for (let routerIndex = 0; routerIndex < options.routerCount; routerIndex++) {
      const name = `r${routerIndex + 1}`;
      const host = network.host(name);
      const routerDir = path.join(dataDir, name);
      const clock = makeFakeClock(clockDir, name);
      this.add({
        name,
        role: 'router',
        dataDir: routerDir,
        clock,
        process: new HostProcess({
          name,
          host,
          command: process.execPath,
          args: () => [
            ...nodeArgsOf(program.routerMain),
            '--listen',
            `${host.address}:${routerPort}`,
            '--insecure',
            '--allow-unauthenticated',
            '--data-dir',
            routerDir,
            '--metrics-port',
            '0',
            '--pairs',
            pairsFlag,
            '--etcd',
            etcdFlag,
            '--router-id',
            name,
            '--etcd-prefix',
            '/nemesis/',
            ...(options.routerArgs ?? []),
          ],
          env: { ...clock.env, TALLY_STOP_WITH_PARENT: '1' },
          cwd: program.root,
          isReady: isReadyLine,
          onLine,
        }),
      });
    }
    this.client = new ClientHost(network.host('client'), () => this.routerAddresses, repoRoot);
  }

  /**
   * Checks the tools, builds the network, starts etcd (all three members
   * together: a member is ready once there is a quorum), the nodes, the first
   * router alone (it registers the pairs), the others, then the client host.
   * On any failure, tears everything down and rethrows.
   */
  static async start(options: NemesisClusterOptions = {}): Promise<NemesisCluster> {
    requireNemesisTools();
    const pairCount = options.pairCount ?? 2;
    const routerCount = options.routerCount ?? 2;
    const hostNames = [
      ...Array.from({ length: etcdMemberCount }, (_, index) => `e${index + 1}`),
      ...Array.from({ length: pairCount }, (_, pairIndex) => [`n${pairIndex}a`, `n${pairIndex}b`]).flat(),
      ...Array.from({ length: routerCount }, (_, index) => `r${index + 1}`),
      'client',
    ];
    const network = Network.create(hostNames);
    const dataDir = makeTempDir('nemesis');
    const cluster = new NemesisCluster(network, dataDir, { ...options, program: options.program ?? repoProgram(), pairCount, routerCount });
    process.once('exit', cluster.onExit);
    try {
      await Promise.all([...cluster.byRole('etcd'), ...cluster.byRole('node')].map((member) => member.process.start()));
      const [first, ...others] = cluster.byRole('router');
      await first!.process.start();
      await Promise.all(others.map((router) => router.process.start()));
      await cluster.client.start();
    } catch (error) {
      const tail = cluster.logs.slice(-30).join('\n');
      await cluster.stop();
      throw new Error(`${(error as Error).message}\nlast lines:\n${tail}`, { cause: error });
    }
    return cluster;
  }

  private add(member: ClusterProcess): void {
    this.processes.set(member.name, member);
  }

  byRole(role: ProcessRole): ClusterProcess[] {
    return [...this.processes.values()].filter((member) => member.role === role);
  }

  member(name: string): ClusterProcess {
    const member = this.processes.get(name);
    if (member === undefined) throw new Error(`no process ${name}`);
    return member;
  }

  /** A node's or router's gRPC address (host:port). */
  addressOf(name: string): string {
    return `${this.network.host(name).address}:${name.startsWith('r') ? routerPort : nodePort}`;
  }

  /** The name of the node at an address (as ClusterStatus reports it). */
  nodeNameAt(address: string): string | undefined {
    return this.byRole('node').find((member) => this.addressOf(member.name) === address)?.name;
  }

  get routerAddresses(): string[] {
    return this.byRole('router').map((router) => this.addressOf(router.name));
  }

  /** Each pair's two node data directories by pair name, for compareLogs (nodes stopped first). */
  logPairs(): Map<string, readonly [string, string]> {
    const pairs = new Map<string, readonly [string, string]>();
    for (let pairIndex = 0; pairIndex < this.options.pairCount; pairIndex++) {
      pairs.set(`pair ${pairIndex}`, [this.member(`n${pairIndex}a`).dataDir, this.member(`n${pairIndex}b`).dataDir]);
    }
    return pairs;
  }

  /** SIGKILLs and starts again on the same data (a crash and a restart). */
  async restart(name: string): Promise<void> {
    const member = this.member(name);
    await member.process.kill();
    await member.process.start();
  }

  /** SIGKILLs a node and deletes its data directory (a lost disk); start it again with restart or start. */
  async wipe(name: string): Promise<void> {
    const member = this.member(name);
    if (member.role !== 'node') throw new Error(`wipe is for nodes, not ${name}`);
    await member.process.kill();
    fs.rmSync(member.dataDir, { recursive: true, force: true });
  }

  /** Every process stopped (a paused one resumed first), the network deleted, the data kept unless removeData. */
  async stop(options: { removeData?: boolean } = {}): Promise<void> {
    if (!this.stopped) {
      this.stopped = true;
      await this.client.stop().catch(() => undefined);
      const stopAll = (role: ProcessRole): Promise<unknown> => Promise.all(this.byRole(role).map((member) => member.process.stop(3_000)));
      await stopAll('router');
      await stopAll('node');
      await stopAll('etcd');
      this.network.destroy();
      process.removeListener('exit', this.onExit);
    }
    if (options.removeData) removeTempDir(this.dataDir);
  }
}
