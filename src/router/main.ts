// Router process: wiring only. Parse config, open the directory, bind the
// public services, start the cache refresher, stop cleanly on SIGTERM/SIGINT.
import {
  createLogger,
  createMetricsRegistry,
  registerDataDirFreeBytes,
  createTallyServer,
  bindServer,
  setServing,
  shutdownServer,
  startMetricsServer,
  counterPackageDefinition,
  counterServiceDefinition,
  adminServiceDefinition,
  runMain,
  TallyError,
  ErrorCode,
  ConfigError,
  onShutdown,
  loadTls,
  serverCredentialsOf,
  channelCredentialsOf,
  guardMalformed,
  IntervalTask,
  guardCalls,
  listRequestBytesMax,
  singleRequestBytesMax,
  expirySweepIntervalMs,
  expiryChecksPerSweep,
  expiryDeletesPerSecondMax,
  monotonicNowMs,
  steadyWallClock,
} from '../common/index.ts';
import { status } from '@grpc/grpc-js';
import { parseRouterConfig, type RouterConfig } from './config.ts';
import fs from 'node:fs';
import { SqliteDirectory, type PairInfo, EtcdDirectory, etcdClientOptions, type Directory } from './directory/index.ts';
import { NodePool } from './nodes/index.ts';
import { IncrementPath, DistinctPath, MembershipPath } from './write/index.ts';
import { ReadPath, WindowReader } from './read/index.ts';
import { loadMemberHasher } from '../sketch/index.ts';
import { HeatTracker, Autoscaler, SizingPolicy, defaultSizing } from './sizing/index.ts';
import { createRouterMetrics } from './metrics/index.ts';
import { createAdminService, createCounterService, refusalOf, tokensOf } from './api/index.ts';
import { PairSupervisor, EtcdSupervisorElection, SoleSupervisor, requireSupervisor, type SupervisorElection } from './supervision/index.ts';
import { Etcd3 } from 'etcd3';
import { CounterLifecycle, CounterExpiry } from './counters/index.ts';

const serviceNames = ['counter.v1.CounterService', 'counter.v1.AdminService'];

/** TLS to etcd from --etcd-tls-*: read once at start (a missing file is a one-line config error). */
function etcdCredentialsOf(config: RouterConfig): { rootCertificate: Buffer; privateKey?: Buffer; certChain?: Buffer } | undefined {
  if (config.etcdTls === undefined) return undefined;
  const read = (file: string, flag: string): Buffer => {
    try {
      return fs.readFileSync(file);
    } catch (error) {
      throw new ConfigError(`cannot read ${flag} ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
    }
  };
  const { caFile, certFile, keyFile } = config.etcdTls;
  return {
    rootCertificate: read(caFile, '--etcd-tls-ca'),
    ...(certFile === undefined || keyFile === undefined
      ? {}
      : { certChain: read(certFile, '--etcd-tls-cert'), privateKey: read(keyFile, '--etcd-tls-key') }),
  };
}

runMain(async () => {
  const config = parseRouterConfig(process.argv.slice(2), process.env);
  const logger = createLogger('router', config.logLevel);
  const registry = createMetricsRegistry({ process: 'router' });
  const metrics = createRouterMetrics(registry);
  registerDataDirFreeBytes(registry, config.dataDir);

  const tls = config.tls === undefined ? undefined : loadTls(config.tls);
  if (config.allowUnauthenticated)
    logger.warn(
      '--allow-unauthenticated: anyone who reaches this port may call every service, AdminService included, unless tokens are set',
      {
        listen: config.listenAddress,
        tokens: config.adminToken !== undefined || config.clientToken !== undefined,
      },
    );
  if (tls === undefined && config.insecure)
    logger.warn('plaintext on a non-loopback address (--insecure): anyone who can reach this port can call it', {
      listen: config.listenAddress,
    });
  const limits = { countersMax: config.countersMax, shardsTotalMax: config.shardsTotalMax };
  // --etcd: the directory and the supervisor lease live in etcd, shared with
  // the other routers of the cluster; without it, SQLite in --data-dir and
  // this router alone (always the supervisor).
  const etcd =
    config.etcdEndpoints === undefined ? undefined : new Etcd3(etcdClientOptions(config.etcdEndpoints, etcdCredentialsOf(config)));
  const election: SupervisorElection =
    etcd === undefined
      ? new SoleSupervisor(config.routerId)
      : new EtcdSupervisorElection(etcd, config.etcdPrefix, config.routerId, config.routerLeaseTtlMs, logger);
  // The clock of the directory's data (creations, growths, clear keys) and of
  // the growths a keyed write fences: a wall clock that a step cannot move
  // while the router runs, so a forward step never ends a growth's dedup
  // window early (a retry would then skip its earlier home and count twice).
  const dataClock = steadyWallClock();
  const directory: Directory =
    etcd === undefined || !(election instanceof EtcdSupervisorElection)
      ? SqliteDirectory.open(config.dataDir, config.pairs, dataClock, limits)
      : await EtcdDirectory.open({
          client: etcd,
          prefix: config.etcdPrefix,
          routerId: config.routerId,
          pairs: config.pairs,
          now: dataClock,
          limits,
          logger,
          leaseTtlMs: config.routerLeaseTtlMs,
          // The supervisor's role changes commit only while its lease holds the supervisor key.
          pairUpdateFence: (txn) => {
            const fence = election.leaderFence();
            if (fence === undefined)
              throw new TallyError(ErrorCode.failedPrecondition, `router ${config.routerId} is no longer the supervisor`);
            requireSupervisor(txn, { key: fence.key.slice(config.etcdPrefix.length), createRevision: fence.createRevision });
          },
        });
  for (const warning of directory.warnings) logger.warn(warning);
  // Apply calls carry the epoch of the pair the address is primary of.
  const epochByAddress = (address: string): bigint => directory.allPairs().find((pair) => pair.primary === address)?.epoch ?? 0n;
  const pool = new NodePool(
    config.nodeCallTimeoutMs,
    epochByAddress,
    {
      onCall(items) {
        metrics.nodeCalls.inc({ kind: 'apply' });
        metrics.nodeCallItems.observe(items);
      },
      // Only the supervisor acts on it; another router's nudge is a no-op (the supervisor's own paths notice).
      onUnreachable: (address) => {
        if (election.isLeader) supervisor.nudge(address);
      },
    },
    channelCredentialsOf(tls),
  );
  const increments = new IncrementPath(directory, pool, config.dedupWindowMs, config.failoverWaitMs, Math.random, dataClock);
  const reads = new ReadPath(directory, pool, metrics, logger, config);
  const heat = new HeatTracker(config.heatHalfLifeMs, monotonicNowMs, undefined, config.heatCountersMax);
  const supervisor = new PairSupervisor(directory, pool, metrics, logger, config);
  supervisor.mayAct = () => election.isLeader;
  const sizing = new SizingPolicy({ ...defaultSizing, shardCeilingPerSec: config.shardCeilingPerSec, shardsMax: config.shardsMax });
  const autoscaler = new Autoscaler(directory, heat, sizing, metrics, logger, {
    intervalMs: config.autoscaleIntervalMs,
    topK: config.topK,
    skewMinIncrements: 100,
  });
  const tokens = tokensOf(config.adminToken, config.clientToken);
  const distinct = new DistinctPath(directory, pool, await loadMemberHasher(), config.readTimeoutMs);
  const windows = new WindowReader(directory, pool, config);
  const membership = new MembershipPath(directory, pool, {
    defaultPartitions: config.memberPartitions,
    readTimeoutMs: config.readTimeoutMs,
  });
  // Counters deleted (by DeleteCounter or TTL) leave the directory at once; their drops go to the nodes until confirmed.
  const lifecycle = new CounterLifecycle(directory, pool, reads, heat, metrics, logger, {
    failoverWaitMs: config.failoverWaitMs,
    dedupWindowMs: config.dedupWindowMs,
  });
  const deps = {
    lifecycle,
    directory,
    increments,
    reads,
    distinct,
    windows,
    membership,
    pool,
    heat,
    metrics,
    logger,
    // The supervisor's bound for "does it answer": one unreachable node costs ClusterStatus this, not a read's timeout.
    statusTimeoutMs: config.healthTimeoutMs,
    // A reconcile may take as long as any call may: the ceiling is its budget.
    reconcileTimeoutMs: config.callDeadlineMaxMs,
    autoscaler,
    tokens,
    counterTtlMs: config.counterTtlMs,
    routerView: {
      directoryStore: etcd === undefined ? ('sqlite' as const) : ('etcd' as const),
      routerId: config.routerId,
      routers: () => (etcd === undefined ? [config.routerId] : [...directory.liveRouterIds()].sort()),
      supervisor: () => election.leaderId ?? '',
    },
    ttlSupported: etcd === undefined,
    onPairAdded: (pair: PairInfo) => {
      if (election.isLeader) supervisor.nudge(pair.primary);
    },
  };

  // Run on a call's headers, before its message is read: tokens, then the caps on calls in flight, then the deadline ceiling.
  const callGuards = guardCalls({
    refuse: (path, metadata) => {
      const refusal = refusalOf(tokens, path, metadata);
      if (refusal !== undefined)
        metrics.callsRefused.inc({ reason: refusal.code === status.PERMISSION_DENIED ? 'permission_denied' : 'unauthenticated' });
      return refusal;
    },
    inFlight: {
      callsMax: config.callsInFlightMax,
      largeCallsMax: config.largeCallsInFlightMax,
      isLarge: (path) => path.slice(path.lastIndexOf('/') + 1) in listRequestBytesMax,
      onInFlight: (calls) => metrics.callsInFlight.set(calls),
      onRefused: () => metrics.callsRefused.inc({ reason: 'busy' }),
    },
    deadlineMaxMs: config.callDeadlineMaxMs,
  });
  const requestBytesMaxOf = (method: string): number => listRequestBytesMax[method] ?? singleRequestBytesMax;
  const tallyServer = createTallyServer([counterPackageDefinition], serviceNames, [callGuards]);
  tallyServer.server.addService(guardMalformed(counterServiceDefinition, requestBytesMaxOf), createCounterService(deps));
  tallyServer.server.addService(guardMalformed(adminServiceDefinition, requestBytesMaxOf), createAdminService(deps));
  const port = await bindServer(tallyServer.server, config.listenAddress, serverCredentialsOf(tls, config.tlsRequireClientCert));
  const metricsServer =
    config.metricsPort === 0
      ? undefined
      : await startMetricsServer(registry, config.metricsHost, config.metricsPort === 'any' ? 0 : config.metricsPort);
  // Supervision (roles, failover, sync), the drops and clears owed to nodes,
  // and TTL expiry run in one router at a time: the elected supervisor.
  // The embedded directory's router is always it.
  let supervising = false;
  const superviseOrNot = async (leader: boolean): Promise<void> => {
    metrics.supervisor.set(leader ? 1 : 0);
    if (leader === supervising) return;
    supervising = leader;
    if (leader) {
      logger.info('supervising', { router: config.routerId });
      // Tell every reachable node its role before acting on it; the supervisor keeps it so.
      // Whatever the first check met, the duties start (unless the lease went meanwhile):
      // a supervisor that believes it supervises must never be left with no ticker.
      try {
        await supervisor.checkAll();
      } catch (error) {
        logger.warn('first pair check failed; the ticker checks again', { error: (error as Error).message });
      }
      if (!supervising) return;
      supervisor.start();
      lifecycle.start();
      if (etcd === undefined) expiry.start();
    } else {
      logger.warn('not supervising', { router: config.routerId, supervisor: election.leaderId ?? '' });
      supervisor.stop();
      lifecycle.stop();
      expiry.stop();
    }
  };
  election.onChange((leader) => {
    superviseOrNot(leader).catch((error: unknown) => logger.error('supervision change failed', { error: (error as Error).message }));
  });
  autoscaler.start();
  for (const pair of directory.allPairs()) metrics.pairInSync.set({ pair: String(pair.pairIndex) }, pair.inSync ? 1 : 0);
  reads.startRefresher();
  // TTL expiry deletes through the lifecycle, which counts tally_counters_deleted_total{cause="ttl"}.
  const expiry = new CounterExpiry(
    directory,
    lifecycle,
    {
      defaultTtlMs: config.counterTtlMs,
      sweepIntervalMs: expirySweepIntervalMs,
      checksPerSweep: expiryChecksPerSweep,
      deletesPerSweep: Math.max(1, Math.floor((expiryDeletesPerSecondMax * expirySweepIntervalMs) / 1_000)),
    },
    { onExpired: () => {} },
    logger,
  );
  // A series from the start: a rate over it needs no first deletion.
  metrics.countersDeleted.inc({ cause: 'ttl' }, 0);
  await election.start();
  await superviseOrNot(election.isLeader);
  const setGauges = (): void => {
    metrics.directoryCounters.set(directory.counterCount);
    metrics.directoryShards.set(directory.shardCount);
    metrics.directoryFresh.set(directory.fresh ? 1 : 0);
    metrics.windowCacheEntries.set(windows.cacheSize);
    metrics.expiryPassSeconds.set(expiry.passDurationMs() / 1_000);
  };
  const gauges = new IntervalTask({ name: 'gauges', intervalMs: 1_000, logger }, setGauges);
  gauges.start();
  setGauges();
  setServing(tallyServer, serviceNames, true);
  // port and metricsPort are the ports bound, for whoever asked for port 0 (ManagedProcess reads them).
  logger.info('ready', {
    listen: config.listenAddress,
    port,
    tls: tls !== undefined,
    tokens: tokens.admin !== undefined || tokens.client !== undefined,
    pairs: config.pairs.length,
    counters: directory.counterCount,
    metricsPort: metricsServer?.port,
    refreshIntervalMs: config.refreshIntervalMs,
    shardCeilingPerSec: config.shardCeilingPerSec,
    shardsMax: config.shardsMax,
  });

  onShutdown({
    logger,
    shutdownTimeoutMs: config.shutdownTimeoutMs,
    env: process.env,
    drain: async () => {
      setServing(tallyServer, serviceNames, false);
      // Drain: in-flight increments wait for their node commits before we exit.
      await shutdownServer(tallyServer.server, config.shutdownTimeoutMs);
      reads.stopRefresher();
      // Hands supervision over at once (etcd: the lease is revoked) rather than after a TTL.
      await election.stop();
      lifecycle.stop();
      supervisor.stop();
      autoscaler.stop();
      expiry.stop();
      gauges.stop();
      pool.close();
      await directory.close();
      etcd?.close();
      await metricsServer?.close();
      return {};
    },
  });
});
