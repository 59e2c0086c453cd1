// Several Tally regions on one machine, every process a host of its own on the
// nemesis harness's private bridge, so the links BETWEEN regions can be cut
// with iptables (both ways or one way) and healed, and a whole region stopped
// and started again on its data. A region is one router with its directory
// embedded in its data directory, its node pairs, and a client host of its own
// whose agent talks to that region's router only (a client in that region).
import path from 'node:path';
import { repoRoot } from '../../../src/cluster/managed-process.ts';
import { makeTempDir, removeTempDir } from '../temp-dir.ts';
import { ClientHost } from '../nemesis/client/index.ts';
import { HostProcess, Network, requireNemesisTools, type CutMode, type Host } from '../nemesis/hosts/index.ts';
import { nodePort, repoProgram, routerPort, type Program } from '../nemesis/cluster.ts';

export interface RegionsOptions {
  /** Region names, e.g. ['eu', 'us']: each a lower-case word (it prefixes the region's host names). */
  regions: string[];
  /** Node pairs per region (default 1). */
  pairCount?: number;
  routerArgs?: string[];
  nodeArgs?: string[];
  program?: Program;
  /** false: no region flags at all (each region a plain cluster, no peer links): the baseline a benchmark compares with. */
  linked?: boolean;
  /** Every line any process logs (after the harness's own ring buffer). */
  onLine?: (name: string, line: string) => void;
}

export interface Region {
  name: string;
  router: HostProcess;
  nodes: HostProcess[];
  /** The region's client host: one public client on this region's router (router index 0). */
  client: ClientHost;
  /** Every host of the region, the client's included: what a cut between regions separates. */
  hosts: Host[];
  dataDir: string;
}

const logLinesKept = 4_000;
const isReadyLine = (line: string): boolean => line.includes('"msg":"ready"');

function scriptArgs(script: string): string[] {
  return /\.[cm]?ts$/.test(script) ? ['--import', 'tsx', script] : [script];
}

/** The flags that make a router one region with the others as peers: `--region NAME --peer-regions a=HOST:PORT;b=HOST:PORT` (docs/regions.md). */
export function regionArgs(region: string, peers: ReadonlyMap<string, string>): string[] {
  const peerList = [...peers].map(([name, address]) => `${name}=${address}`).join(';');
  return ['--region', region, ...(peerList === '' ? [] : ['--peer-regions', peerList])];
}

export class RegionCluster {
  readonly regions = new Map<string, Region>();
  /** The last lines every process logged, "[host] line". */
  readonly logs: string[] = [];
  private stopped = false;
  private readonly onExit = (): void => this.network.destroy();

  private constructor(
    readonly network: Network,
    readonly dataDir: string,
    readonly options: RegionsOptions & { program: Program; pairCount: number },
  ) {
    const onLine = (name: string, line: string): void => {
      this.logs.push(`[${name}] ${line}`);
      if (this.logs.length > logLinesKept) this.logs.shift();
      options.onLine?.(name, line);
    };
    const program = options.program;
    for (const regionName of options.regions) {
      const regionDir = path.join(dataDir, regionName);
      const nodes: HostProcess[] = [];
      for (let pairIndex = 0; pairIndex < options.pairCount; pairIndex++) {
        for (const side of ['a', 'b']) {
          const name = `${regionName}-n${pairIndex}${side}`;
          const host = network.host(name);
          nodes.push(
            new HostProcess({
              name,
              host,
              command: process.execPath,
              args: () => [
                ...scriptArgs(program.nodeMain),
                '--listen',
                `${host.address}:${nodePort}`,
                '--insecure',
                '--data-dir',
                path.join(regionDir, `n${pairIndex}${side}`),
                '--node-name',
                name,
                '--metrics-port',
                '0',
                ...(options.linked === false ? [] : ['--region', regionName]),
                ...(options.nodeArgs ?? []),
              ],
              env: { TALLY_STOP_WITH_PARENT: '1' },
              cwd: program.root,
              isReady: isReadyLine,
              onLine,
            }),
          );
        }
      }
      const pairsFlag = Array.from(
        { length: options.pairCount },
        (_, pairIndex) => `${this.nodeAddress(regionName, pairIndex, 'a')},${this.nodeAddress(regionName, pairIndex, 'b')}`,
      ).join(';');
      const routerHost = network.host(`${regionName}-r1`);
      const router = new HostProcess({
        name: `${regionName}-r1`,
        host: routerHost,
        command: process.execPath,
        args: () => [
          ...scriptArgs(program.routerMain),
          '--listen',
          this.routerAddress(regionName),
          '--insecure',
          '--allow-unauthenticated',
          '--data-dir',
          path.join(regionDir, 'r1'),
          '--metrics-port',
          '0',
          '--pairs',
          pairsFlag,
          ...(options.linked === false ? [] : regionArgs(regionName, this.peersOf(regionName))),
          ...(options.routerArgs ?? []),
        ],
        env: { TALLY_STOP_WITH_PARENT: '1' },
        cwd: program.root,
        isReady: isReadyLine,
        onLine,
      });
      const clientHost = network.host(`${regionName}-client`);
      this.regions.set(regionName, {
        name: regionName,
        router,
        nodes,
        client: new ClientHost(clientHost, () => [this.routerAddress(regionName)], repoRoot),
        hosts: [...network.hosts.values()].filter((host) => host.name.startsWith(`${regionName}-`)),
        dataDir: regionDir,
      });
    }
  }

  /** Builds the network and starts every region (nodes, then the router, then the client host), all regions at once. */
  static async start(options: RegionsOptions): Promise<RegionCluster> {
    requireNemesisTools();
    for (const name of options.regions) {
      if (!/^[a-z][a-z0-9]{0,7}$/.test(name))
        throw new Error(`region name ${JSON.stringify(name)}: a lower-case word of at most 8 characters`);
    }
    const pairCount = options.pairCount ?? 1;
    const hostNames = options.regions.flatMap((region) => [
      ...Array.from({ length: pairCount }, (_, pairIndex) => [`${region}-n${pairIndex}a`, `${region}-n${pairIndex}b`]).flat(),
      `${region}-r1`,
      `${region}-client`,
    ]);
    const network = Network.create(hostNames);
    const dataDir = makeTempDir('regions');
    const cluster = new RegionCluster(network, dataDir, { ...options, program: options.program ?? repoProgram(), pairCount });
    process.once('exit', cluster.onExit);
    try {
      await Promise.all(options.regions.map((name) => cluster.startRegion(name)));
    } catch (error) {
      const tail = cluster.logs.slice(-30).join('\n');
      await cluster.stop({ removeData: true });
      throw new Error(`${(error as Error).message}\nlast lines:\n${tail}`, { cause: error });
    }
    return cluster;
  }

  region(name: string): Region {
    const region = this.regions.get(name);
    if (region === undefined) throw new Error(`no region ${name} (regions: ${[...this.regions.keys()].join(', ')})`);
    return region;
  }

  routerAddress(region: string): string {
    return `${this.network.host(`${region}-r1`).address}:${routerPort}`;
  }

  nodeAddress(region: string, pairIndex: number, side: 'a' | 'b'): string {
    return `${this.network.host(`${region}-n${pairIndex}${side}`).address}:${nodePort}`;
  }

  /** Every other region's router address by region name. */
  peersOf(region: string): Map<string, string> {
    return new Map(this.options.regions.filter((name) => name !== region).map((name) => [name, this.routerAddress(name)]));
  }

  /** Starts a region's processes that are not running: nodes, router, client host. */
  async startRegion(name: string): Promise<void> {
    const region = this.region(name);
    await Promise.all(region.nodes.filter((node) => !node.running).map((node) => node.start()));
    if (!region.router.running) await region.router.start();
    if (!region.client.process.running) await region.client.start();
  }

  /** SIGKILLs a region's router and nodes (a region lost at once); its client host stays (it sees the region down). */
  async killRegion(name: string): Promise<void> {
    const region = this.region(name);
    await Promise.all([region.router, ...region.nodes].map((process) => process.kill()));
  }

  /**
   * Cuts the link between two regions: packets from every host of `from` to
   * every host of `to` are lost ('drop') or refused ('reject'); both ways
   * unless `oneWay`. Named, for heal().
   */
  cut(name: string, from: string, to: string, options: { oneWay?: boolean; mode?: CutMode } = {}): void {
    const mode = options.mode ?? 'drop';
    const fromHosts = this.region(from).hosts;
    const toHosts = this.region(to).hosts;
    this.network.cut(name, fromHosts, toHosts, mode);
    if (!options.oneWay) this.network.cut(name, toHosts, fromHosts, mode);
  }

  heal(name: string): void {
    this.network.heal(name);
  }

  /** Every process stopped, the network deleted, the data kept unless removeData. */
  async stop(options: { removeData?: boolean } = {}): Promise<void> {
    if (!this.stopped) {
      this.stopped = true;
      const regions = [...this.regions.values()];
      await Promise.all(regions.map((region) => region.client.stop().catch(() => undefined)));
      await Promise.all(regions.map((region) => region.router.stop(3_000)));
      await Promise.all(regions.flatMap((region) => region.nodes.map((node) => node.stop(3_000))));
      this.network.destroy();
      process.removeListener('exit', this.onExit);
    }
    if (options.removeData) removeTempDir(this.dataDir);
  }
}
