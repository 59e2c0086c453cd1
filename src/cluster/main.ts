// `npm start`: a whole local cluster (node pairs, one router or several on a
// local etcd) as child processes. Prints where everything listens, keeps every
// child running, and on SIGINT/SIGTERM stops routers, then nodes, then etcd.
import { monotonicNowMs } from '../wire/index.ts';
import { runMain } from '../common/index.ts';
import { etcdInstalled, etcdMissingMessage } from './etcd-process.ts';
import { checkDataDirStore, parseLauncherConfig, portLayout, storePaths } from './launcher-config.ts';
import { LocalCluster } from './local-cluster.ts';
import { keepRestarting, RestartPolicy } from './restart-policy.ts';

runMain(async () => {
  const config = parseLauncherConfig(process.argv.slice(2), process.env);
  checkDataDirStore(config);
  // Before any child starts: a missing etcd is one line, not a half-started cluster.
  if (config.store === 'etcd' && !etcdInstalled()) throw new Error(etcdMissingMessage);
  const ports = portLayout(config);
  const cluster = new LocalCluster({
    pairCount: config.pairCount,
    dataDir: config.dataDir,
    host: config.host,
    routerCount: config.routerCount,
    etcd: config.store === 'etcd' ? { dataDir: storePaths(config.dataDir).etcdDir, clientPort: config.etcdPort } : undefined,
    routerPort: config.port,
    nodePorts: ports.nodePorts,
    routerMetricsPort: config.metricsPort,
    nodeMetricsPorts: ports.nodeMetricsPorts,
    routerArgsOf: (routerIndex) => ['--http-port', String(ports.routerHttpPorts[routerIndex] ?? 0)],
    routerArgs: [
      ...(config.region === '' ? [] : ['--region', config.region]),
      ...(config.peerRegions === '' ? [] : ['--peer-regions', config.peerRegions]),
    ],
    nodeArgs: config.region === '' ? [] : ['--region', config.region],
    onLine: (name, line) => {
      // Lifecycle lines always; everything else with --verbose. etcd warns at
      // every start that its auth tokens are unsigned: it has no auth (it listens on loopback only).
      if (name === 'etcd' && !config.verbose && line.includes('simple token is not cryptographically signed')) return;
      if (
        config.verbose ||
        /"level":"(warn|error)"|"msg":"(ready|shutdown|stopped|growth|promotion|in sync|out of sync|truncated unacknowledged tail)"|^(fatal|config error)/.test(
          line,
        )
      ) {
        process.stdout.write(`[${name}] ${line}\n`);
      }
    },
  });

  let stopping = false;
  const stop = async (reason: string, exitCode: number): Promise<void> => {
    if (stopping) return;
    stopping = true;
    process.stdout.write(`\n${reason}: stopping the cluster...\n`);
    await cluster.stop('SIGTERM');
    process.stdout.write('stopped.\n');
    process.exit(exitCode);
  };
  process.on('SIGINT', () => void stop('SIGINT', 0));
  process.on('SIGTERM', () => void stop('SIGTERM', 0));

  const startedMs = monotonicNowMs();
  try {
    await cluster.start();
  } catch (error) {
    // A Ctrl-C during the start fails it too: that stop finishes and exits.
    if (stopping) return;
    stopping = true;
    await cluster.stop('SIGKILL');
    throw error;
  }
  const metricsOf = (port: number): string => (port ? `   metrics http://${config.host}:${port}/metrics` : '');
  const httpOf = (port: number): string => (port ? `   http http://${config.host}:${port} (docs/http.md)` : '');
  const lines = [
    '',
    `Tally local cluster ready in ${Math.round(monotonicNowMs() - startedMs)} ms (data in ${config.dataDir})`,
    ...cluster.routers.map(
      (router, index) =>
        `  ${router.name.padEnd(11)}${router.address}${metricsOf(router.metricsPort)}${httpOf(ports.routerHttpPorts[index] ?? 0)}`,
    ),
    ...cluster.nodes.map((node) => `  ${`node ${node.pairIndex} ${node.role}`.padEnd(19)}${node.address}${metricsOf(node.metricsPort)}`),
    ...(cluster.etcd === undefined
      ? []
      : [`  ${'etcd'.padEnd(11)}${cluster.etcd.endpoint}   (the directory; data in ${storePaths(config.dataDir).etcdDir})`]),
    '',
    cluster.routers.length === 1
      ? 'Try: npx tally incr likes 1 && npx tally get likes   (Ctrl-C stops the cluster)'
      : `Try: export TALLY_ROUTER=${cluster.routerAddresses.join(',')}; npx tally incr likes 1 && npx tally get likes   (Ctrl-C stops the cluster)`,
    '',
  ];
  process.stdout.write(lines.join('\n'));

  // A child that dies while we run is restarted, like a process supervisor
  // would; one that keeps dying takes the cluster down with a clear message
  // rather than leaving a half-cluster that looks healthy.
  for (const member of cluster.members) {
    void keepRestarting(member, {
      policy: new RestartPolicy(),
      nowMs: monotonicNowMs,
      sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
      stopping: () => stopping,
      log: (line) => process.stderr.write(`${line}\n`),
      giveUp: (reason) => {
        process.stderr.write(`${reason}; stopping the cluster\n`);
        void stop(`${member.name} keeps exiting`, 1);
      },
    });
  }
});
