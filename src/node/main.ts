// Shard node process: wiring only. Parse config, open and replay the log,
// resume the role the router last gave us, bind the server, mark SERVING,
// and stop cleanly on SIGTERM/SIGINT.
import {
  createLogger,
  createMetricsRegistry,
  registerDataDirFreeBytes,
  createTallyServer,
  bindServer,
  setServing,
  shutdownServer,
  startMetricsServer,
  shardPackageDefinition,
  shardNodeServiceDefinition,
  counterPackageDefinition,
  replicationBatchEntriesMax,
  replicationMemoryEntriesMax,
  replicationMemoryBytesMax,
  checkpointRoundRowsMax,
  checkpointSliceRows,
  checkpointStepMs,
  checkpointMergeBlocksMax,
  scrubStepsPerSecond,
  runMain,
  onShutdown,
  loadTls,
  serverCredentialsOf,
  channelCredentialsOf,
  guardMalformed,
  peerRoleInterceptor,
  guardCalls,
  shardNodeCallerRoles,
  isShardNodeStream,
  droppedShardTombstoneMs,
  type Logger,
  type TlsMaterial,
} from '../common/index.ts';
import { steadyWallClock, monotonicNowMs } from '../wire/index.ts';
import { parseNodeConfig, type NodeConfig } from './config.ts';
import { ShardLog, logFileOf, checkLogAtStart, isDamagedLog, logCorruptExitCode, markLogCorrupt } from './log/index.ts';
import { NodeMemory, checkpointFolder, rebuildMemory, type NodeState, DedupIndex, loadRole } from './state/index.ts';
import { Checkpointer, GroupCommitter } from './write/index.ts';
import { createNodeMetrics, type NodeMetrics } from './node-metrics.ts';
import { createNodeService } from './node-service.ts';
import { Replicator } from './replication/index.ts';
import { LogScrubber } from './scrubber.ts';
import { Housekeeping } from './housekeeping.ts';
import { FrameStreams } from './handlers/index.ts';
import { withLeanReadShardsResponse } from '../wire/internal/index.ts';

const serviceName = 'tally.shard.v1.ShardNode';

runMain(async () => {
  const config = parseNodeConfig(process.argv.slice(2), process.env);
  const logger = createLogger('node', config.logLevel);
  const registry = createMetricsRegistry({ process: 'node', node: config.nodeName });
  const metrics = createNodeMetrics(registry);
  registerDataDirFreeBytes(registry, config.dataDir);

  const tls = loadNodeTls(config, logger);
  const { log, logCheck, stopForDamage } = openLog(config, metrics, logger);
  // The time entries are stamped with, and the dedup window, tombstones and
  // window buckets are measured against: a wall clock that a step cannot move
  // while the node runs (G11), never behind the log's last entry.
  const logClock = steadyWallClock(log.lastAtMs());
  if (log.abandonedInstall)
    logger.warn('a snapshot install was cut short: the log starts empty and the install starts over', { nodeId: log.nodeId });
  const state: NodeState = { ready: false, role: loadRole(log), confirmedLsn: 0n };
  const memory = new NodeMemory();
  const { replicator, dedup, committer } = createWritePath(config, { log, state, memory, metrics, logger, tls, logClock });

  const tallyServer = createNodeServer(config, tls, metrics);
  const streams = new FrameStreams();
  tallyServer.server.addService(
    guardMalformed(withLeanReadShardsResponse(shardNodeServiceDefinition)),
    createNodeService({
      state,
      log,
      memory,
      committer,
      replicator,
      dedup,
      logClock,
      metrics,
      logger,
      streams,
      ...serviceSettingsOf(config),
      // Bound once the checkpointer exists (below); a call before then finds the node not ready.
      foldNow: () => checkpointer.run(),
    }),
  );
  // A node takes TLS connections only from peers whose certificate chains to the cluster CA.
  const port = await bindServer(tallyServer.server, config.listenAddress, serverCredentialsOf(tls, true));
  const metricsServer =
    config.metricsPort === 0
      ? undefined
      : await startMetricsServer(registry, config.metricsHost, config.metricsPort === 'any' ? 0 : config.metricsPort);
  logger.info('start', {
    ...startFields(config, tls !== undefined, port),
    nodeId: log.nodeId,
    role: state.role.role,
    epoch: state.role.epoch,
    metricsPort: metricsServer?.port,
    logCheckMs: logCheck.checkMs,
  });

  becomeReady(config, {
    log,
    state,
    memory,
    dedup,
    replicator,
    metrics,
    logger,
    logClock,
    stopForDamage,
    tallyServer,
    port,
    metricsServer,
  });

  const { checkpointer, scrubber, housekeeping } = startBackground(config, {
    log,
    state,
    memory,
    dedup,
    replicator,
    metrics,
    logger,
    logClock,
  });

  onShutdown({
    logger,
    shutdownTimeoutMs: config.shutdownTimeoutMs,
    env: process.env,
    drain: () =>
      drain(config, {
        tallyServer,
        streams,
        state,
        committer,
        replicator,
        background: [checkpointer, scrubber, housekeeping],
        log,
        metricsServer,
      }),
  });
});

/** Opens the log after its checks at start; a damaged one is set aside, or marked for the next start to set aside. */
function openLog(config: NodeConfig, metrics: NodeMetrics, logger: Logger) {
  // A log that fails its checks is set aside: the node starts empty under a
  // new identity, which its supervisor refills from the partner (a lost disk).
  // eslint-disable-next-line no-restricted-properties -- shown, not compared: the stamp in the names of files set aside
  const logCheck = checkLogAtStart(logFileOf(config.dataDir), Date.now());
  metrics.logCheckSeconds.set(logCheck.checkMs / 1000);
  if (logCheck.problem !== undefined) {
    metrics.logCorruptions.inc({ found: 'startup' });
    logger.error('log failed its checks: set aside, starting empty under a new identity to be refilled from the partner', {
      problem: logCheck.problem,
      setAside: logCheck.setAside,
    });
  }
  if (logCheck.discardedTail !== undefined) {
    metrics.logDiscardedTails.inc();
    logger.warn('log ends in a commit a crash cut short (never acknowledged): discarded as SQLite does, the log served', {
      tail: logCheck.discardedTail,
    });
  }
  const log = ((): ShardLog => {
    try {
      return ShardLog.open(config.dataDir, checkpointFolder, `node ${config.nodeName}`);
    } catch (error) {
      // Damage the open itself meets (its last record fails its checksum, say): marked, so
      // the next start sets the log aside rather than failing the same way for ever.
      if (!isDamagedLog(error)) throw error;
      const why = error instanceof Error ? error.message : String(error);
      metrics.logCorruptions.inc({ found: 'replay' });
      markLogCorrupt(logFileOf(config.dataDir), why);
      logger.error('log failed its checks at open: stopping; the next start sets it aside and is refilled from the partner', {
        problem: why,
      });
      return process.exit(logCorruptExitCode);
    }
  })();
  // Damage found after the check (replay, a read or write): stop, never answer from a log that lies; the restart sets it aside.
  const stopForDamage = (found: 'replay' | 'running', error: unknown): never => {
    const why = error instanceof Error ? error.message : String(error);
    metrics.logCorruptions.inc({ found });
    markLogCorrupt(log.file, why);
    logger.error('log failed its checks: stopping; the next start sets it aside and is refilled from the partner', { found, problem: why });
    process.exit(logCorruptExitCode);
  };
  return { log, logCheck, stopForDamage };
}

/** The write path: the replicator to the partner, the dedup index and group commit, which tells the replicator of each commit. */
function createWritePath(
  config: NodeConfig,
  deps: {
    log: ShardLog;
    state: NodeState;
    memory: NodeMemory;
    metrics: NodeMetrics;
    logger: Logger;
    tls: TlsMaterial | undefined;
    logClock: () => number;
  },
) {
  const { log, state, memory, metrics, logger, tls, logClock } = deps;
  const replicator = new Replicator(
    log,
    () => state.role,
    {
      batchEntriesMax: replicationBatchEntriesMax,
      callTimeoutMs: config.replicationTimeoutMs,
      retryDelayMs: config.replicationRetryMs,
      dedupWindowMs: config.dedupWindowMs,
      memoryEntriesMax: replicationMemoryEntriesMax,
      memoryBytesMax: replicationMemoryBytesMax,
      channelCredentials: channelCredentialsOf(tls),
    },
    (lagEntries) => metrics.replicationLagEntries.set(Number(lagEntries)),
    logger,
    { logClock },
  );
  // Memory holds the newest keys; the log on disk holds the whole window behind it.
  const dedup = new DedupIndex(config.dedupWindowMs, config.dedupKeysInMemoryMax, log);
  const committer = new GroupCommitter(
    log,
    memory,
    () => state.role,
    dedup,
    {
      onCommit(rows, durationSeconds, lastLsn, epoch, atMs) {
        metrics.commitBatchRows.observe(rows.length);
        metrics.commitSeconds.observe(durationSeconds);
        metrics.lastLsn.set(Number(lastLsn));
        replicator.onCommit(rows, lastLsn, epoch, atMs);
      },
      waitForFollower: (lsn) => replicator.waitForAck(lsn, config.replicationTimeoutMs),
      refusal: () => replicator.refusal(),
      pace: (lsn) => replicator.paceWhileCatchingUp(lsn),
    },
    logClock,
  );
  return { replicator, dedup, committer };
}

/** What a started node is made of, handed to its later steps. */
interface NodeParts {
  log: ShardLog;
  state: NodeState;
  memory: NodeMemory;
  dedup: DedupIndex;
  replicator: Replicator;
  metrics: NodeMetrics;
  logger: Logger;
  logClock: () => number;
}

/** The background tasks of a ready node: the checkpointer, the log scrubber and housekeeping, each started. */
function startBackground(config: NodeConfig, deps: NodeParts) {
  const { log, state, memory, dedup, replicator, metrics, logger, logClock } = deps;
  const checkpointer = new Checkpointer(
    log,
    state,
    replicator,
    {
      intervalMs: config.checkpointIntervalMs,
      sliceRows: checkpointSliceRows,
      stepMs: checkpointStepMs,
      mergeBlocks: checkpointMergeBlocksMax,
      roundRowsMax: checkpointRoundRowsMax,
      dedupWindowMs: config.dedupWindowMs,
      retainEntries: config.checkpointRetainEntries,
      tombstoneMs: droppedShardTombstoneMs,
    },
    {
      onFold(rows, durationSeconds, checkpointLsn) {
        metrics.checkpointRows.inc(rows);
        metrics.checkpointSliceSeconds.observe(durationSeconds);
        metrics.checkpointLsn.set(Number(checkpointLsn));
      },
      onFoldRead(durationSeconds) {
        metrics.checkpointSliceSeconds.observe(durationSeconds);
      },
    },
    logger,
    logClock,
  );
  checkpointer.start();
  metrics.checkpointLsn.set(Number(log.checkpointLsn));

  const scrubber = new LogScrubber(
    log,
    { entriesPerSecond: config.scrubEntriesPerSecond, stepsPerSecond: scrubStepsPerSecond },
    {
      onRead: (kind, count) => metrics.scrubRead.inc({ kind }, count),
      onPass: () => metrics.scrubPasses.inc(),
      onMismatch: () => metrics.scrubMismatches.inc(),
    },
    logger,
  );
  scrubber.start();

  const housekeeping = new Housekeeping({
    log,
    memory,
    dedup,
    replicator,
    state,
    metrics,
    logger,
    dedupWindowMs: config.dedupWindowMs,
    logClock,
  });
  housekeeping.start();
  return { checkpointer, scrubber, housekeeping };
}

/** The node's gRPC server, its calls guarded. */
function createNodeServer(config: NodeConfig, tls: TlsMaterial | undefined, metrics: NodeMetrics) {
  // With TLS, a certificate from the cluster CA is not enough: only the router's
  // and the nodes' may reach ShardNode, each for its own methods. Plaintext
  // (loopback) has no certificates to check.
  return createTallyServer(
    [shardPackageDefinition, counterPackageDefinition],
    [serviceName],
    [
      ...(tls === undefined ? [] : [peerRoleInterceptor(serviceName, shardNodeCallerRoles)]),
      guardCalls({ deadlineMaxMs: config.callDeadlineMaxMs, onStatus: metrics.rpcStatus, isLongLived: isShardNodeStream }),
    ],
  );
}

/** Stops serving and drains: in-flight Apply calls finish their commit before the server closes, then every task stops and the log closes. */
async function drain(
  config: NodeConfig,
  parts: {
    tallyServer: ReturnType<typeof createTallyServer>;
    streams: FrameStreams;
    state: NodeState;
    committer: GroupCommitter;
    replicator: Replicator;
    background: readonly { stop(): void }[];
    log: ShardLog;
    metricsServer: { close(): Promise<void> } | undefined;
  },
): Promise<{ lastLsn: bigint }> {
  const { tallyServer, streams, state, committer, replicator, log, metricsServer } = parts;
  setServing(tallyServer, [serviceName], false);
  // Long-lived streams answer what they have begun and end, or the server would wait for them.
  streams.closeAll();
  await shutdownServer(tallyServer.server, config.shutdownTimeoutMs);
  state.ready = false;
  committer.flush();
  replicator.stop();
  for (const task of parts.background) task.stop();
  log.close();
  await metricsServer?.close();
  return { lastLsn: log.lastLsn };
}

/** Rebuilds memory from the log, then serves: from here a damaged log stops the node. */
function becomeReady(
  config: NodeConfig,
  deps: NodeParts & {
    stopForDamage: (found: 'replay' | 'running', error: unknown) => never;
    tallyServer: ReturnType<typeof createTallyServer>;
    port: number;
    metricsServer: { port: number } | undefined;
  },
): void {
  const { log, state, memory, dedup, replicator, metrics, logger, logClock, stopForDamage, tallyServer, port, metricsServer } = deps;
  const replayStartedMs = monotonicNowMs();
  const lastLsn = ((): bigint => {
    try {
      return rebuildMemory(log, memory, dedup, logClock(), config.dedupWindowMs);
    } catch (error) {
      if (!isDamagedLog(error)) throw error;
      return stopForDamage('replay', error);
    }
  })();
  log.onDamage = (error) => stopForDamage('running', error);
  metrics.lastLsn.set(Number(lastLsn));
  metrics.shardCount.set(memory.totals.shardCount);
  state.ready = true;
  replicator.onRoleChange();
  setServing(tallyServer, [serviceName], true);
  // The ports bound, for whoever asked for port 0 (ManagedProcess reads them).
  logger.info('ready', {
    port,
    metricsPort: metricsServer?.port,
    lastLsn,
    checkpointLsn: log.checkpointLsn,
    shards: memory.totals.shardCount,
    dedupKeys: dedup.size,
    replayMs: Math.round(monotonicNowMs() - replayStartedMs),
    role: state.role.role,
    epoch: state.role.epoch,
  });
}

/** What the node says of its configuration when it starts. */
function startFields(config: NodeConfig, tls: boolean, port: number) {
  return {
    listen: config.listenAddress,
    port,
    ...(config.zone === '' ? {} : { zone: config.zone }),
    ...(config.advertiseReplicationAddress === '' ? {} : { replicationAddress: config.advertiseReplicationAddress }),
    tls,
    dataDir: config.dataDir,
  };
}

/** The service's settings from the configuration. */
function serviceSettingsOf(config: NodeConfig) {
  return {
    dedupWindowMs: config.dedupWindowMs,
    replicationTimeoutMs: config.replicationTimeoutMs,
    zone: config.zone,
    replicationAddress: config.advertiseReplicationAddress,
  };
}

/** The node's TLS material, or undefined for plaintext (warned of when it is not loopback only). */
function loadNodeTls(config: NodeConfig, logger: Logger): TlsMaterial | undefined {
  const tls = config.tls === undefined ? undefined : loadTls(config.tls);
  if (tls === undefined && config.insecure)
    logger.warn('plaintext on a non-loopback address (--insecure): anyone who can reach this port can write', {
      listen: config.listenAddress,
    });
  return tls;
}
