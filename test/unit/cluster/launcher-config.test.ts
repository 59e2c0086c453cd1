// Unit tests for `npm start`'s settings and what it hands each child: the
// store a router count implies, the port of every process, the refusal of a
// data directory holding the other store's directory, and the router arguments.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { launcherRoutersMax } from '../../../src/common/index.ts';
import { checkDataDirStore, parseLauncherConfig, portLayout, storePaths } from '../../../src/cluster/launcher-config.ts';
import { LocalCluster, type LocalClusterOptions } from '../../../src/cluster/local-cluster.ts';
import { configErrorOf } from '../../helpers/config.ts';
import { makeTempDir, removeTempDir } from '../../helpers/temp-dir.ts';

describe('launcher config', () => {
  it('plain npm start is one router on the embedded directory, on the ports it always had', () => {
    const config = parseLauncherConfig([], {});
    expect(config).toMatchObject({ routerCount: 1, store: 'embedded', port: 50051, metricsPort: 9464, nodeBasePort: 50061, pairCount: 2 });
    expect(portLayout(config)).toEqual({
      routerPorts: [50051],
      routerMetricsPorts: [9464],
      routerHttpPorts: [8080],
      nodePorts: [50061, 50062, 50063, 50064],
      nodeMetricsPorts: [9465, 9466, 9467, 9468],
    });
  });

  it("--routers N runs N routers on etcd, on --port, --port + 1, ..., the nodes' metrics after the routers'", () => {
    const config = parseLauncherConfig(['--routers', '3'], {});
    expect(config).toMatchObject({ routerCount: 3, store: 'etcd', etcdPort: 0 });
    expect(portLayout(config)).toEqual({
      routerPorts: [50051, 50052, 50053],
      routerMetricsPorts: [9464, 9465, 9466],
      routerHttpPorts: [8080, 8081, 8082],
      nodePorts: [50061, 50062, 50063, 50064],
      nodeMetricsPorts: [9467, 9468, 9469, 9470],
    });
    expect(parseLauncherConfig([], { TALLY_ROUTERS: '2' }).store).toBe('etcd');
    // One router on etcd, asked for.
    expect(parseLauncherConfig(['--store', 'etcd'], {})).toMatchObject({ routerCount: 1, store: 'etcd' });
  });

  it('port 0 stays 0 for every router and node, and metrics port 0 turns all of them off', () => {
    const layout = portLayout(
      parseLauncherConfig(['--routers', '2', '--port', '0', '--node-base-port', '0', '--metrics-port', '0', '--http-port', '0'], {}),
    );
    expect(layout).toEqual({
      routerPorts: [0, 0],
      routerMetricsPorts: [0, 0],
      routerHttpPorts: [0, 0],
      nodePorts: [0, 0, 0, 0],
      nodeMetricsPorts: [0, 0, 0, 0],
    });
  });

  it('several routers on the embedded directory, too many routers, or an unknown store are one-line errors', () => {
    expect(configErrorOf(() => parseLauncherConfig(['--routers', '2', '--store', 'embedded'], {}))).toBe(
      '--routers 2 needs --store etcd: routers cannot share an embedded directory',
    );
    expect(configErrorOf(() => parseLauncherConfig(['--routers', String(launcherRoutersMax + 1)], {}))).toBe(
      `--routers must be between 1 and ${launcherRoutersMax}, got ${launcherRoutersMax + 1}`,
    );
    expect(configErrorOf(() => parseLauncherConfig(['--store', 'zookeeper'], {}))).toBe(
      '--store must be one of embedded, etcd, got "zookeeper"',
    );
  });

  it('two processes on one port, or a port past 65535, are refused before anything starts', () => {
    expect(configErrorOf(() => parseLauncherConfig(['--routers', '2', '--port', '50060'], {}))).toBe(
      'node 0 primary and router-2 would both listen on port 50061: move --port, --node-base-port, --metrics-port or --http-port apart',
    );
    expect(configErrorOf(() => parseLauncherConfig(['--routers', '2', '--etcd-port', '9465'], {}))).toBe(
      "router-2's metrics and etcd would both listen on port 9465: move --port, --node-base-port, --metrics-port or --http-port apart",
    );
    expect(configErrorOf(() => parseLauncherConfig(['--routers', '2', '--port', '65535'], {}))).toBe(
      'router-2 would listen on port 65536: lower --port, --node-base-port, --metrics-port or --http-port',
    );
  });
});

describe('launcher config: the data directory and its store', () => {
  let dataDir = '';
  afterEach(() => removeTempDir(dataDir));

  it("a data directory holding one store's directory refuses the other store, and a fresh one takes either", () => {
    dataDir = makeTempDir('launcher-store');
    const embedded = parseLauncherConfig(['--data-dir', dataDir], {});
    const etcd = parseLauncherConfig(['--data-dir', dataDir, '--routers', '2'], {});
    expect(() => checkDataDirStore(embedded)).not.toThrow();
    expect(() => checkDataDirStore(etcd)).not.toThrow();

    const { embeddedFile, etcdDir } = storePaths(dataDir);
    fs.mkdirSync(path.dirname(embeddedFile), { recursive: true });
    fs.writeFileSync(embeddedFile, '');
    expect(() => checkDataDirStore(embedded)).not.toThrow();
    expect(configErrorOf(() => checkDataDirStore(etcd))).toContain(`--data-dir ${dataDir} holds an embedded directory`);

    fs.rmSync(embeddedFile);
    fs.mkdirSync(etcdDir);
    expect(() => checkDataDirStore(etcd)).not.toThrow();
    expect(configErrorOf(() => checkDataDirStore(embedded))).toContain(`--data-dir ${dataDir} holds an etcd directory`);
  });
});

describe('local cluster: what each router is given', () => {
  const base: LocalClusterOptions = {
    pairCount: 1,
    dataDir: '/data',
    host: '127.0.0.1',
    routerPort: 50051,
    nodePorts: [50061, 50062],
    routerMetricsPort: 9464,
    nodeMetricsPorts: [9466, 9467],
    routerArgs: ['--log-level', 'debug'],
  };

  it('routers on etcd are router-1..N, each with its own port, data dir, metrics port and router id, and the same pairs and etcd', () => {
    const cluster = new LocalCluster({ ...base, routerCount: 2, etcd: { endpoint: 'http://127.0.0.1:2379', prefix: '/test-7/' } });
    expect(cluster.routers.map((router) => router.name)).toEqual(['router-1', 'router-2']);
    expect(cluster.routerAddresses).toEqual(['127.0.0.1:50051', '127.0.0.1:50052']);
    expect(cluster.routers[1]!.process.options.args).toEqual([
      '--listen',
      '127.0.0.1:50052',
      '--data-dir',
      path.join('/data', 'router-2'),
      '--metrics-port',
      '9465',
      '--pairs',
      '127.0.0.1:50061,127.0.0.1:50062',
      '--etcd',
      'http://127.0.0.1:2379',
      '--router-id',
      'router-2',
      '--etcd-prefix',
      '/test-7/',
      '--log-level',
      'debug',
    ]);
    expect(cluster.routers[0]!.process.options.args).toContain('router-1');
    // An etcd given is not ours to keep running.
    expect(cluster.etcd).toBeUndefined();
    expect(cluster.members.map((member) => member.name)).toEqual(['router-1', 'router-2', 'node-0-primary', 'node-0-follower']);
    expect(cluster.router).toBe(cluster.routers[0]!.process);
  });

  it('its own etcd is kept running with the routers and nodes, first in line', () => {
    const cluster = new LocalCluster({ ...base, routerCount: 2, etcd: { dataDir: '/data/etcd' } });
    expect(cluster.etcd).toBeDefined();
    expect(cluster.members.map((member) => member.name)).toEqual(['etcd', 'router-1', 'router-2', 'node-0-primary', 'node-0-follower']);
  });

  it('one router on the embedded directory is "router" in <data-dir>/router, with no etcd flags even when the environment names one', () => {
    const cluster = new LocalCluster(base);
    expect(cluster.routers.map((router) => router.name)).toEqual(['router']);
    const { args, env } = cluster.router.options;
    expect(args.slice(0, 8)).toEqual([
      '--listen',
      '127.0.0.1:50051',
      '--data-dir',
      path.join('/data', 'router'),
      '--metrics-port',
      '9464',
      '--pairs',
      '127.0.0.1:50061,127.0.0.1:50062',
    ]);
    expect(args.some((arg) => arg.startsWith('--etcd') || arg === '--router-id')).toBe(false);
    // Keys present and undefined: spawn leaves them out of the child's environment.
    expect(env).toHaveProperty('TALLY_ETCD', undefined);
    expect(Object.keys(env ?? {})).toContain('TALLY_ETCD');
    expect(() => new LocalCluster({ ...base, routerCount: 2 })).toThrow('several routers need etcd');
  });
});
