// `npm start`'s settings: flags and TALLY_* twins, the ports every process
// gets, and the check that a data directory is started with the store that
// holds its directory. Pure: nothing here starts a process.
import fs from 'node:fs';
import path from 'node:path';
import { ConfigError, ConfigReader, checkRegionName, launcherRoutersMax, parseFlags, parsePeerRegions } from '../common/index.ts';
import { routerMetricsPortOf, routerPortOf } from './local-cluster.ts';

/** Where the routers keep the directory: the embedded SQLite file (one router) or a local etcd (one or more). */
export type LauncherStore = 'embedded' | 'etcd';

export interface LauncherConfig {
  host: string;
  /** The first router's port; router i takes port + i. 0: ports the kernel picks. */
  port: number;
  routerCount: number;
  store: LauncherStore;
  /** The local etcd's client port; 0: one the kernel picks (printed, kept across its restarts). */
  etcdPort: number;
  pairCount: number;
  dataDir: string;
  /** The first router's metrics port; the other routers, then the nodes, take the next ones. 0 disables all. */
  metricsPort: number;
  /** The first router's HTTP port (Connect, gRPC-Web); router i takes httpPort + i. 0 disables it. */
  httpPort: number;
  nodeBasePort: number;
  verbose: boolean;
  /** This cluster's region, passed to every child (docs/regions.md); '' when it runs alone. */
  region: string;
  /** --peer-regions as given, passed to the routers. */
  peerRegions: string;
}

export function parseLauncherConfig(argv: readonly string[], env: NodeJS.ProcessEnv): LauncherConfig {
  const reader = new ConfigReader(parseFlags(argv, ['verbose']), env);
  const routerCount = reader.int('routers', 1, { min: 1, max: launcherRoutersMax });
  const config: LauncherConfig = {
    host: reader.string('host', '127.0.0.1'),
    // --port 0 / --node-base-port 0: ports the kernel picks, printed once ready.
    // Fixed ports by default: the directory records the nodes' addresses,
    // so a later start on the same --data-dir must find them on the same ports.
    port: reader.int('port', 50051, { min: 0, max: 65535 }),
    routerCount,
    // Several routers can only share etcd; one router keeps the embedded directory unless told.
    store: reader.oneOf<LauncherStore>('store', routerCount > 1 ? 'etcd' : 'embedded', ['embedded', 'etcd']),
    etcdPort: reader.int('etcd-port', 0, { min: 0, max: 65535 }),
    pairCount: reader.int('pairs', 2, { min: 1, max: 16 }),
    dataDir: path.resolve(reader.string('data-dir', './data')),
    metricsPort: reader.int('metrics-port', 9464, { min: 0, max: 65535 }),
    httpPort: reader.int('http-port', 8080, { min: 0, max: 65535 }),
    nodeBasePort: reader.int('node-base-port', 50061, { min: 0, max: 65000 }),
    verbose: reader.bool('verbose', false),
    region: checkRegionName(reader.string('region', '')),
    peerRegions: reader.string('peer-regions', ''),
  };
  reader.rejectUnknownFlags();
  // Checked here so a bad list is one line before any child starts.
  parsePeerRegions(config.peerRegions, config.region);
  if (config.store === 'embedded' && config.routerCount > 1)
    throw new ConfigError(`--routers ${config.routerCount} needs --store etcd: routers cannot share an embedded directory`);
  portLayout(config);
  return config;
}

/** The port of every process; 0 where the kernel picks. */
export interface PortLayout {
  routerPorts: number[];
  routerMetricsPorts: number[];
  routerHttpPorts: number[];
  /** Pair i's primary at 2i, its follower at 2i + 1. */
  nodePorts: number[];
  nodeMetricsPorts: number[];
}

/** Every process's ports; throws a ConfigError when two fixed ones meet or one passes 65535. */
export function portLayout(config: LauncherConfig): PortLayout {
  const nodeCount = config.pairCount * 2;
  const routers = Array.from({ length: config.routerCount }, (_, index) => index);
  const nodes = Array.from({ length: nodeCount }, (_, index) => index);
  const layout: PortLayout = {
    routerPorts: routers.map((index) => routerPortOf(config.port, index)),
    routerMetricsPorts: routers.map((index) => routerMetricsPortOf(config.metricsPort, index) as number),
    routerHttpPorts: routers.map((index) => routerPortOf(config.httpPort, index)),
    nodePorts: nodes.map((index) => (config.nodeBasePort === 0 ? 0 : config.nodeBasePort + index)),
    nodeMetricsPorts: nodes.map((index) => (config.metricsPort === 0 ? 0 : config.metricsPort + config.routerCount + index)),
  };
  const owners = new Map<number, string>();
  const claim = (port: number, owner: string): void => {
    if (port === 0) return;
    if (port > 65535)
      throw new ConfigError(`${owner} would listen on port ${port}: lower --port, --node-base-port, --metrics-port or --http-port`);
    const other = owners.get(port);
    if (other !== undefined)
      throw new ConfigError(
        `${owner} and ${other} would both listen on port ${port}: move --port, --node-base-port, --metrics-port or --http-port apart`,
      );
    owners.set(port, owner);
  };
  const routerName = (index: number): string => (config.store === 'etcd' ? `router-${index + 1}` : 'the router');
  layout.routerPorts.forEach((port, index) => claim(port, routerName(index)));
  layout.nodePorts.forEach((port, index) => claim(port, `node ${Math.floor(index / 2)} ${index % 2 === 0 ? 'primary' : 'follower'}`));
  if (config.store === 'etcd') claim(config.etcdPort, 'etcd');
  layout.routerMetricsPorts.forEach((port, index) => claim(port, `${routerName(index)}'s metrics`));
  layout.routerHttpPorts.forEach((port, index) => claim(port, `${routerName(index)}'s HTTP port`));
  layout.nodeMetricsPorts.forEach((port, index) =>
    claim(port, `node ${Math.floor(index / 2)} ${index % 2 === 0 ? 'primary' : 'follower'}'s metrics`),
  );
  return layout;
}

/** The embedded directory's file and the local etcd's data, inside the launcher's data directory. */
export function storePaths(dataDir: string): { embeddedFile: string; etcdDir: string } {
  return { embeddedFile: path.join(dataDir, 'router', 'directory.sqlite'), etcdDir: path.join(dataDir, 'etcd') };
}

/**
 * Refuses a data directory whose nodes were placed by the other store's
 * directory: a fresh directory would hand out shard ids 1, 2, ... again, so
 * new counters would inherit old shards' totals and every old counter read 0.
 */
export function checkDataDirStore(config: LauncherConfig): void {
  const { embeddedFile, etcdDir } = storePaths(config.dataDir);
  const hasEmbedded = fs.existsSync(embeddedFile);
  const hasEtcd = fs.existsSync(etcdDir);
  if (config.store === 'etcd' && hasEmbedded && !hasEtcd)
    throw new ConfigError(
      `--data-dir ${config.dataDir} holds an embedded directory (router/directory.sqlite): routers on a new etcd would reuse its shard ids; move it into etcd first (tally directory export, then import), or start one router without --store etcd`,
    );
  if (config.store === 'embedded' && hasEtcd && !hasEmbedded)
    throw new ConfigError(
      `--data-dir ${config.dataDir} holds an etcd directory (etcd/): start it with --routers N or --store etcd, or move the directory out of etcd first (tally directory export, then import)`,
    );
}
