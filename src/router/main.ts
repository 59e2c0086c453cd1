// Router process: configuration, build, start, and a clean stop on
// SIGTERM/SIGINT. What a router is made of is build.ts's.
import { createLogger, onShutdown, runMain } from '../common/index.ts';
import { buildRouter } from './build.ts';
import { parseRouterConfig } from './config.ts';

runMain(async () => {
  const config = parseRouterConfig(process.argv.slice(2), process.env);
  const logger = createLogger('router', config.logLevel);
  const router = await buildRouter(config, logger);
  const { port, metricsPort, httpPort } = await router.start();
  // port, metricsPort and httpPort are the ports bound, for whoever asked for port 0 (ManagedProcess reads them).
  logger.info('ready', {
    listen: config.listenAddress,
    port,
    tls: config.tls !== undefined,
    tokens: config.adminToken !== undefined || config.clientToken !== undefined,
    pairs: config.pairs.length,
    metricsPort,
    httpPort,
    refreshIntervalMs: config.refreshIntervalMs,
    shardCeilingPerSec: config.shardCeilingPerSec,
    shardsMax: config.shardsMax,
  });
  onShutdown({
    logger,
    shutdownTimeoutMs: config.shutdownTimeoutMs,
    env: process.env,
    drain: async () => {
      await router.stop();
      return {};
    },
  });
});
