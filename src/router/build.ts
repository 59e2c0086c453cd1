// Builds a router from its configuration: the stores, the node pool, the
// write and read paths, sizing, supervision and the two services, each
// handed only what it uses. start() binds and serves; stop() drains and
// closes, in the reverse order. No policy lives here: each decision is
// the module's whose job it is.
import { status } from '@grpc/grpc-js';
import {
  IntervalTask,
  adminServiceDefinition,
  bindServer,
  channelCredentialsOf,
  counterPackageDefinition,
  counterServiceDefinition,
  createMetricsRegistry,
  createTallyServer,
  expiryChecksPerSweep,
  expiryDeletesPerSecondMax,
  expirySweepIntervalMs,
  guardCalls,
  guardMalformed,
  incrementStreamMessageBytesMax,
  readStreamMessageBytesMax,
  listRequestBytesMax,
  loadTls,
  registerDataDirFreeBytes,
  serverCredentialsOf,
  setServing,
  shutdownServer,
  singleRequestBytesMax,
  startMetricsServer,
  type InFlightCount,
  type InFlightLimits,
  type Logger,
  parseAddress,
  regionLinkServiceDefinition,
  regionClearStepsMax,
} from '../common/index.ts';
import { monotonicNowMs, steadyWallClock, ErrorCode, TallyError, withColumnDecoders, withLeanCodecs } from '../wire/index.ts';
import { loadMemberHasher } from '../sketch/index.ts';
import { createAdminService, createCounterService, refusalOf, tokensOf, type Tokens } from './api/index.ts';
import { createHttpMetrics, startConnectPort, type ConnectPort, type ConnectPortOptions } from './http/index.ts';
import type { RouterConfig } from './config.ts';
import { CounterExpiry, CounterLifecycle, type RouterView } from './counters/index.ts';
import { EtcdDirectory, SqliteDirectory, openEtcdClient, type Directory, type PairInfo } from './directory/index.ts';
import { createRouterMetrics, type RouterMetrics } from './metrics/index.ts';
import { NodePool, type SenderObserver } from './nodes/index.ts';
import { ReadPath, WindowReader } from './read/index.ts';
import { Autoscaler, HeatTracker, SizingPolicy, defaultSizing } from './sizing/index.ts';
import { EtcdSupervisorElection, PairSupervisor, SoleSupervisor, SupervisorDuties, type SupervisorElection } from './supervision/index.ts';
import { DistinctPath, IncrementPath, MembershipPath } from './write/index.ts';
import { createRegions, fileTermSource, revisionTermSource, type ClearUpTo, type TermSource } from './region/index.ts';

const serviceNames = ['counter.v1.CounterService', 'counter.v1.AdminService'];

export interface Router {
  /** Supervises if elected, binds the services and metrics, and serves. Resolves with the ports bound (for port 0). */
  start(): Promise<{ port: number; metricsPort: number | undefined; httpPort: number | undefined }>;
  /** Stops serving, drains calls in flight, hands supervision over, closes every part. */
  stop(): Promise<void>;
}

/**
 * --etcd: the directory and the supervisor lease live in etcd, shared with
 * the other routers of the cluster; without it, SQLite in --data-dir and
 * this router alone (always the supervisor).
 */
async function openStores(config: RouterConfig, logger: Logger, dataClock: () => number) {
  const limits = { countersMax: config.countersMax, shardsTotalMax: config.shardsTotalMax };
  if (config.etcdEndpoints === undefined) {
    const election: SupervisorElection = new SoleSupervisor(config.routerId);
    const directory: Directory = SqliteDirectory.open(config.dataDir, config.pairs, dataClock, limits);
    return { etcd: undefined, election, directory };
  }
  const etcd = openEtcdClient(config.etcdEndpoints, config.etcdTls);
  const election = new EtcdSupervisorElection(etcd, config.etcdPrefix, config.routerId, config.routerLeaseTtlMs, logger);
  const directory: Directory = await EtcdDirectory.open({
    client: etcd,
    prefix: config.etcdPrefix,
    routerId: config.routerId,
    pairs: config.pairs,
    now: dataClock,
    limits,
    logger,
    leaseTtlMs: config.routerLeaseTtlMs,
    // The supervisor's role changes commit only while its lease holds the supervisor key.
    pairUpdateFence: election.pairUpdateFence(config.etcdPrefix),
  });
  return { etcd, election, directory };
}

export async function buildRouter(config: RouterConfig, logger: Logger): Promise<Router> {
  warnOfOpenAccess(config, logger);
  const registry = createMetricsRegistry({ process: 'router' });
  const metrics = createRouterMetrics(registry);
  registerDataDirFreeBytes(registry, config.dataDir);
  const tls = config.tls === undefined ? undefined : loadTls(config.tls);
  // The clock of the directory's data (creations, growths, clear keys) and of
  // the growths a keyed write fences: a wall clock that a step cannot move
  // while the router runs, so a forward step never ends a growth's dedup
  // window early (a retry would then skip its earlier home and count twice).
  const dataClock = steadyWallClock();
  const { etcd, election, directory } = await openStores(config, logger, dataClock);
  for (const warning of directory.warnings) logger.warn(warning);

  const { pool, nodeEvents } = openNodePool(config, directory, metrics, tls);
  const increments = new IncrementPath(directory, pool, config.dedupWindowMs, config.failoverWaitMs, Math.random, dataClock);
  const reads = new ReadPath(directory, pool, metrics, logger, config);
  const distinct = new DistinctPath(directory, pool, await loadMemberHasher(), config.readTimeoutMs);
  const windows = new WindowReader(directory, pool, config);
  const membership = new MembershipPath(directory, pool, {
    defaultPartitions: config.memberPartitions,
    readTimeoutMs: config.readTimeoutMs,
  });
  const heat = new HeatTracker(config.heatHalfLifeMs, monotonicNowMs, undefined, config.heatCountersMax);
  const autoscaler = createAutoscaler(config, directory, heat, metrics, logger);
  // Counters deleted (by DeleteCounter or TTL) leave the directory at once; their drops go to the nodes until confirmed.
  const lifecycle = new CounterLifecycle(directory, pool, reads, heat, metrics, logger, {
    failoverWaitMs: config.failoverWaitMs,
    dedupWindowMs: config.dedupWindowMs,
    // A region's deletes travel to its peers as tombstones (docs/regions.md).
    ...(config.region === '' ? {} : { tombstoneRetentionMs: config.regionTombstoneRetentionMs }),
  });
  const expiry = createExpiry(config, directory, lifecycle, logger);
  // With several routers each knows only the writes made through it, so none
  // can tell a counter is idle: TTL (set and swept) only on the embedded store.
  const ttlSupported = etcd === undefined;
  const regions = openRegions(config, { election, directory, pool, reads, distinct, registry, logger, tls, lifecycle });
  const supervisor = new PairSupervisor(directory, pool, metrics, logger, config);
  const duties = new SupervisorDuties(
    election,
    supervisor,
    [...(ttlSupported ? [lifecycle, expiry] : [lifecycle]), ...(config.peerRegions.length > 0 ? [regions.publisher] : [])],
    metrics,
    logger,
    config.routerId,
  );
  nodeEvents.onUnreachable = (address) => duties.checkPairOf(address);

  const tokens = tokensOf(config.adminToken, config.clientToken);
  // The caps on calls in flight bound the gRPC and HTTP ports together.
  const inFlight = inFlightLimitsOf(config, metrics);
  const server = createServer(config, metrics, tokens, inFlight);
  const counterService = createCounterService({
    increments,
    reads,
    distinct,
    windows,
    membership,
    lifecycle,
    heat,
    metrics,
    globalReads: regions.globalReader,
    ...(regions.globalDistinct === undefined ? {} : { globalDistinct: regions.globalDistinct }),
    onWritten: (counter) => regions.publisher.markWritten(counter),
  });
  const counterDefinition = guardMalformed(withColumnDecoders(withLeanCodecs(counterServiceDefinition)), requestBytesMaxOf);
  server.server.addService(counterDefinition, counterService.grpc);
  const adminService = createAdminService({
    directory,
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
    lifecycle,
    counterTtlMs: config.counterTtlMs,
    routerView: routerViewOf(config, etcd !== undefined, directory, election, regions),
    ttlSupported,
    onPairAdded: (pair: PairInfo) => duties.checkPairOf(pair.primary),
  });
  const adminDefinition = guardMalformed(adminServiceDefinition, requestBytesMaxOf);
  server.server.addService(adminDefinition, adminService.grpc);
  server.server.addService(regionLinkServiceDefinition, { Exchange: regions.receiver.exchange.bind(regions.receiver) });
  return routerLifecycle({
    config,
    logger,
    registry,
    metrics,
    tls,
    server,
    tokens,
    inFlight,
    counter: { handlers: counterService.handlers, definition: counterDefinition },
    admin: { handlers: adminService.handlers, definition: adminDefinition },
    etcd,
    directory,
    pool,
    reads,
    windows,
    autoscaler,
    expiry,
    duties,
    regions,
  });
}

/** This region's publisher, receiver and global reads. */
function openRegions(
  config: RouterConfig,
  parts: {
    election: SupervisorElection;
    directory: Directory;
    pool: NodePool;
    reads: ReadPath;
    distinct: DistinctPath;
    registry: ReturnType<typeof createMetricsRegistry>;
    logger: Logger;
    tls: ReturnType<typeof loadTls> | undefined;
    lifecycle: CounterLifecycle;
  },
) {
  const { election, directory, pool, reads, distinct, registry, logger, tls, lifecycle } = parts;
  // Regions: the publisher is a supervisor duty, so one router per region publishes.
  const termSource: TermSource =
    election instanceof EtcdSupervisorElection
      ? revisionTermSource(() => election.leaderFence()?.createRevision)
      : fileTermSource(config.dataDir);
  const regions = createRegions(
    {
      region: config.region,
      peerRegions: config.peerRegions,
      regionPublishIntervalMs: config.regionPublishIntervalMs,
      readTimeoutMs: config.readTimeoutMs,
      tls,
      adminToken: config.adminToken,
    },
    {
      directory,
      pool,
      reads,
      registry,
      logger,
      termSource,
      clearUpTo: clearUpToOf(directory, lifecycle, (name) => regions.publisher.markWritten(name)),
      deleteUpTo: (name, incarnation) => lifecycle.deleteUpTo(name, incarnation),
      sketches: distinct,
    },
  );
  lifecycle.onTombstone = (name) => regions.tombstones.mark(name);
  return regions;
}

/** This router, the others sharing its directory, and the supervisor, as ClusterStatus shows them. */
function routerViewOf(
  config: RouterConfig,
  onEtcd: boolean,
  directory: Directory,
  election: SupervisorElection,
  regions: { peerStatus: NonNullable<RouterView['peerRegions']> },
): RouterView {
  return {
    directoryStore: !onEtcd ? 'sqlite' : 'etcd',
    routerId: config.routerId,
    routers: () => (!onEtcd ? [config.routerId] : [...directory.liveRouterIds()].sort()),
    supervisor: () => election.leaderId ?? '',
    dedupWindowMs: config.dedupWindowMs,
    region: config.region,
    peerRegions: () => regions.peerStatus(),
  };
}

/** What start() and stop() bring up and down, in order. */
type RouterParts = {
  config: RouterConfig;
  logger: Logger;
  registry: ReturnType<typeof createMetricsRegistry>;
  metrics: RouterMetrics;
  tls: ReturnType<typeof loadTls> | undefined;
  server: ReturnType<typeof createServer>;
  tokens: Tokens;
  inFlight: InFlightLimits & { count: InFlightCount };
  counter: ConnectPortOptions['services']['counter'];
  admin: ConnectPortOptions['services']['admin'];
  etcd: Awaited<ReturnType<typeof openStores>>['etcd'];
  directory: Directory;
  pool: NodePool;
  reads: ReadPath;
  windows: WindowReader;
  autoscaler: Autoscaler;
  expiry: CounterExpiry;
  duties: SupervisorDuties;
  regions: ReturnType<typeof createRegions>;
};

/** start() binds and serves; stop() drains and closes in the reverse order. */
function routerLifecycle(parts: RouterParts): Router {
  const { config, logger, registry, metrics, tls, server, tokens, inFlight, counter, admin, etcd, directory, pool } = parts;
  const { reads, windows, autoscaler, expiry, duties, regions } = parts;
  const httpMetrics = createHttpMetrics(registry, { rpcStatus: metrics.rpcStatus, callsRefused: metrics.callsRefused });
  let httpPort: ConnectPort | undefined;
  const setGauges = (): void => {
    metrics.directoryCounters.set(directory.counterCount);
    metrics.directoryShards.set(directory.shardCount);
    metrics.directoryFresh.set(directory.fresh ? 1 : 0);
    metrics.windowCacheEntries.set(windows.cacheSize);
    metrics.expiryPassSeconds.set(expiry.passDurationMs() / 1_000);
  };
  const gauges = new IntervalTask({ name: 'gauges', intervalMs: 1_000, logger }, setGauges);
  let metricsServer: Awaited<ReturnType<typeof startMetricsServer>> | undefined;

  return {
    async start() {
      const port = await bindServer(server.server, config.listenAddress, serverCredentialsOf(tls, config.tlsRequireClientCert));
      httpPort =
        config.httpPort === 0
          ? undefined
          : await startConnectPort({
              host: parseAddress(config.listenAddress, '--listen').host,
              port: config.httpPort === 'any' ? 0 : config.httpPort,
              tls,
              requireClientCert: config.tlsRequireClientCert,
              corsOrigins: config.httpCorsOrigins,
              services: { counter, admin },
              tokens,
              inFlight,
              deadlineMaxMs: config.callDeadlineMaxMs,
              requestBytesMaxOf,
              metrics: httpMetrics,
              logger,
            });
      metricsServer =
        config.metricsPort === 0
          ? undefined
          : await startMetricsServer(registry, config.metricsHost, config.metricsPort === 'any' ? 0 : config.metricsPort);
      autoscaler.start();
      for (const pair of directory.allPairs()) metrics.pairInSync.set({ pair: String(pair.pairIndex) }, pair.inSync ? 1 : 0);
      reads.startRefresher();
      // A series from the start: a rate over it needs no first deletion.
      metrics.countersDeleted.inc({ cause: 'ttl' }, 0);
      await duties.start();
      regions.start();
      gauges.start();
      setGauges();
      setServing(server, serviceNames, true);
      return { port, metricsPort: metricsServer?.port, httpPort: httpPort?.port };
    },
    async stop() {
      setServing(server, serviceNames, false);
      // Drain: in-flight increments wait for their node commits before we exit.
      await Promise.all([shutdownServer(server.server, config.shutdownTimeoutMs), httpPort?.close(config.shutdownTimeoutMs)]);
      reads.stopRefresher();
      await duties.stop();
      regions.stop();
      autoscaler.stop();
      gauges.stop();
      pool.close();
      await directory.close();
      etcd?.close();
      await metricsServer?.close();
    },
  };
}

/** Warnings of a port anyone may call: no authentication asked, or plaintext beyond loopback. */
function warnOfOpenAccess(config: RouterConfig, logger: Logger): void {
  if (config.allowUnauthenticated)
    logger.warn(
      '--allow-unauthenticated: anyone who reaches this port may call every service, AdminService included, unless tokens are set',
      {
        listen: config.listenAddress,
        tokens: config.adminToken !== undefined || config.clientToken !== undefined,
      },
    );
  if (config.tls === undefined && config.insecure)
    logger.warn('plaintext on a non-loopback address (--insecure): anyone who can reach this port can call it', {
      listen: config.listenAddress,
    });
}

/** The node pool, its calls counted in metrics; nodeEvents.onUnreachable is set once supervision exists. */
function openNodePool(config: RouterConfig, directory: Directory, metrics: RouterMetrics, tls: ReturnType<typeof loadTls> | undefined) {
  // Apply calls carry the epoch of the pair the address is primary of.
  const epochByAddress = (address: string): bigint => directory.allPairs().find((pair) => pair.primary === address)?.epoch ?? 0n;
  // onUnreachable is set once supervision exists (below): the pool is built first, supervision on it.
  const nodeEvents: SenderObserver = {
    onCall(items) {
      metrics.nodeCalls.inc({ kind: 'apply' });
      metrics.nodeCallItems.observe(items);
    },
    onStrayAnswer() {
      metrics.nodeStreamStrayAnswers.inc();
    },
    onAbandoned(_address, why) {
      metrics.nodeStreamsAbandoned.inc({ why });
    },
  };
  const pool = new NodePool(config.nodeCallTimeoutMs, epochByAddress, nodeEvents, channelCredentialsOf(tls), {
    streams: config.nodeStreams === 'on',
  });
  return { pool, nodeEvents };
}

function createAutoscaler(
  config: RouterConfig,
  directory: Directory,
  heat: HeatTracker,
  metrics: RouterMetrics,
  logger: Logger,
): Autoscaler {
  return new Autoscaler(
    directory,
    heat,
    new SizingPolicy({ ...defaultSizing, shardCeilingPerSec: config.shardCeilingPerSec, shardsMax: config.shardsMax }),
    metrics,
    logger,
    {
      intervalMs: config.autoscaleIntervalMs,
      topK: config.topK,
      skewMinIncrements: 100,
      counterLabels: config.metricsCounterLabels === 'on',
    },
  );
}

function createExpiry(config: RouterConfig, directory: Directory, lifecycle: CounterLifecycle, logger: Logger): CounterExpiry {
  // TTL expiry deletes through the lifecycle, which counts tally_counters_deleted_total{cause="ttl"}.
  return new CounterExpiry(
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
}

/**
 * A peer region cleared a counter to `generation`: this region clears its own
 * counter, one generation at a time, each clear keyed by the generation it
 * makes (and the counter's creation), so receivers racing on one counter
 * clear it once per generation, never twice.
 */
function clearUpToOf(directory: Directory, lifecycle: CounterLifecycle, onCleared: (name: string) => void): ClearUpTo {
  return async (name, generation) => {
    for (let step = 0; step < regionClearStepsMax; step++) {
      const counter = directory.get(name);
      if (counter === undefined || counter.generation >= generation) return;
      await lifecycle.clear(name, Buffer.from(`region-clear:${counter.createdMs}:${counter.generation + 1}`));
      onCleared(name);
    }
    throw new TallyError(
      ErrorCode.failedPrecondition,
      `counter "${name}" is more than ${regionClearStepsMax} clears behind its peer region`,
    );
  };
}

function requestBytesMaxOf(method: string): number {
  // A stream's message is a batch: bounded as one, but the stream is no large call (it holds its own bounded batches).
  if (method === 'IncrementStream') return incrementStreamMessageBytesMax;
  if (method === 'ReadStream') return readStreamMessageBytesMax;
  return listRequestBytesMax[method] ?? singleRequestBytesMax;
}

function inFlightLimitsOf(config: RouterConfig, metrics: RouterMetrics): InFlightLimits & { count: InFlightCount } {
  return {
    callsMax: config.callsInFlightMax,
    largeCallsMax: config.largeCallsInFlightMax,
    isLarge: (path) => path.slice(path.lastIndexOf('/') + 1) in listRequestBytesMax,
    onInFlight: (calls) => metrics.callsInFlight.set(calls),
    onRefused: () => metrics.callsRefused.inc({ reason: 'busy' }),
    count: { calls: 0, largeCalls: 0 },
  };
}

/** The gRPC server, with what runs on a call's headers before its message is read: tokens, then the caps on calls in flight, then the deadline ceiling. */
function createServer(
  config: RouterConfig,
  metrics: RouterMetrics,
  tokens: ReturnType<typeof tokensOf>,
  inFlight: InFlightLimits & { count: InFlightCount },
) {
  const callGuards = guardCalls({
    onStatus: metrics.rpcStatus,
    refuse: (path, metadata) => {
      const refusal = refusalOf(tokens, path, metadata);
      if (refusal !== undefined)
        metrics.callsRefused.inc({ reason: refusal.code === status.PERMISSION_DENIED ? 'permission_denied' : 'unauthenticated' });
      return refusal;
    },
    inFlight,
    deadlineMaxMs: config.callDeadlineMaxMs,
  });
  return createTallyServer([counterPackageDefinition], serviceNames, [callGuards]);
}
