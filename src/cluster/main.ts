// `npm start`: a whole local cluster (router + node pairs) as child processes.
// Prints where everything listens; SIGINT/SIGTERM stop every child cleanly.
import path from 'node:path';
import { ConfigReader, parseFlags, runMain } from '../common/index.ts';
import { LocalCluster } from './local-cluster.ts';

interface LauncherConfig {
  host: string;
  port: number;
  pairCount: number;
  dataDir: string;
  metricsPort: number;
  nodeBasePort: number;
  verbose: boolean;
}

function parseLauncherConfig(argv: readonly string[], env: NodeJS.ProcessEnv): LauncherConfig {
  const reader = new ConfigReader(parseFlags(argv, ['verbose']), env);
  const config: LauncherConfig = {
    host: reader.string('host', '127.0.0.1'),
    // --port 0 / --node-base-port 0: ports the kernel picks, printed once ready.
    // Fixed ports by default: the router's directory records the nodes' addresses,
    // so a later start on the same --data-dir must find them on the same ports.
    port: reader.int('port', 50051, { min: 0, max: 65535 }),
    pairCount: reader.int('pairs', 2, { min: 1, max: 16 }),
    dataDir: path.resolve(reader.string('data-dir', './data')),
    metricsPort: reader.int('metrics-port', 9464, { min: 0, max: 65535 }),
    nodeBasePort: reader.int('node-base-port', 50061, { min: 0, max: 65000 }),
    verbose: reader.bool('verbose', false),
  };
  reader.rejectUnknownFlags();
  return config;
}

runMain(async () => {
  const config = parseLauncherConfig(process.argv.slice(2), process.env);
  const nodeCount = config.pairCount * 2;
  const cluster = new LocalCluster({
    pairCount: config.pairCount,
    dataDir: config.dataDir,
    host: config.host,
    routerPort: config.port,
    nodePorts: Array.from({ length: nodeCount }, (_, index) => (config.nodeBasePort === 0 ? 0 : config.nodeBasePort + index)),
    routerMetricsPort: config.metricsPort,
    nodeMetricsPorts: Array.from({ length: nodeCount }, (_, index) => (config.metricsPort === 0 ? 0 : config.metricsPort + 1 + index)),
    onLine: (name, line) => {
      // Lifecycle lines always; everything else with --verbose.
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
  const stop = async (signal: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    process.stdout.write(`\n${signal}: stopping the cluster...\n`);
    await cluster.stop('SIGTERM');
    process.stdout.write('stopped.\n');
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));

  const startedMs = Date.now();
  try {
    await cluster.start();
  } catch (error) {
    await cluster.stop('SIGKILL');
    throw error;
  }
  const lines = [
    '',
    `Tally local cluster ready in ${Date.now() - startedMs} ms (data in ${config.dataDir})`,
    `  router     ${cluster.routerAddress}${cluster.routerMetricsPort ? `   metrics http://${config.host}:${cluster.routerMetricsPort}/metrics` : ''}`,
    ...cluster.nodes.map(
      (node) =>
        `  ${`node ${node.pairIndex} ${node.role}`.padEnd(19)}${node.address}${node.metricsPort ? `   metrics http://${config.host}:${node.metricsPort}/metrics` : ''}`,
    ),
    '',
    `Try: npx tally incr likes 1 && npx tally get likes   (Ctrl-C stops the cluster)`,
    '',
  ];
  process.stdout.write(lines.join('\n'));

  // A child that dies while we run is restarted after a second, like a
  // process supervisor would; one that keeps dying takes the cluster down
  // with a clear message rather than leaving a half-cluster that looks healthy.
  const restartsMax = 5;
  const restartWindowMs = 60_000;
  for (const member of [cluster.router, ...cluster.nodes.map((node) => node.process)]) {
    const restartTimes: number[] = [];
    const watch = (): void => {
      void member.exited().then(async (code) => {
        if (stopping) return;
        const nowMs = Date.now();
        while (restartTimes.length > 0 && nowMs - restartTimes[0]! > restartWindowMs) restartTimes.shift();
        if (restartTimes.length >= restartsMax) {
          process.stderr.write(`${member.name} exited (code ${code}) ${restartsMax} times within a minute; stopping the cluster\n`);
          void stop('child keeps exiting');
          return;
        }
        restartTimes.push(nowMs);
        process.stderr.write(`${member.name} exited unexpectedly (code ${code}); restarting it in 1 s\n`);
        await new Promise((resolve) => setTimeout(resolve, 1_000));
        if (stopping) return;
        try {
          await member.start();
        } catch (error) {
          process.stderr.write(`${member.name} failed to restart: ${(error as Error).message}\n`);
        }
        watch();
      });
    };
    watch();
  }
});
