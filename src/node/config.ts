// The shard node's configuration: one typed object from flags and environment,
// defaults in one place, every key validated at startup.
import {
  ConfigReader,
  parseAddress,
  parseFlags,
  isLogLevel,
  ConfigError,
  readTlsFiles,
  checkPlaintextAllowed,
  dedupKeysInMemoryMax,
  callDeadlineMaxMs,
  checkZone,
  checkRegionName,
  type LogLevel,
  type MetricsPort,
  type TlsFiles,
} from '../common/index.ts';

export interface NodeConfig {
  /** host:port the gRPC server binds. */
  listenAddress: string;
  /** Directory holding this node's log (node.sqlite). */
  dataDir: string;
  metricsHost: string;
  /**
   * 0 disables the metrics endpoint; 'any' takes a port the kernel picks.
   * Default 9465 (the router's is 9464): on by default like the router's, on
   * loopback unless --metrics-host says otherwise; a second node on one host
   * needs its own port (or 0).
   */
  metricsPort: MetricsPort;
  /** Name used in logs and metric labels. */
  nodeName: string;
  logLevel: LogLevel;
  shutdownTimeoutMs: number;
  /** How long a primary in sync waits for its follower to confirm a commit before failing the call. */
  replicationTimeoutMs: number;
  /** Pause before a primary retries an unreachable follower. */
  replicationRetryMs: number;
  /** A key is deduplicated for this long after its first increment (G2). */
  dedupWindowMs: number;
  /** Keys held in memory; older keys of the window are looked up in the log on disk. */
  dedupKeysInMemoryMax: number;
  /** How often committed entries are folded into the checkpoint (bounds the log and recovery). */
  checkpointIntervalMs: number;
  /** Out of sync, a primary keeps this many recent entries unfolded so a follower briefly away catches up by log, not by snapshot. */
  checkpointRetainEntries: number;
  /** The scrubber reads (and checks) this many log entries or checkpoint blocks a second; 0 turns it off. */
  scrubEntriesPerSecond: number;
  /** Mutual TLS for every call in and out (router, peer); undefined = plaintext (loopback only). */
  tls: TlsFiles | undefined;
  /** Plaintext on a non-loopback address, accepted explicitly. */
  insecure: boolean;
  /** Ceiling on any call's deadline. */
  callDeadlineMaxMs: number;
  /** The failure domain (zone, rack) this node runs in, reported to the routers; '' when not given. */
  zone: string;
  /** The region (docs/regions.md) this node's cluster serves, shown in its logs; '' when it runs alone. */
  region: string;
  /**
   * host:port its partner dials to replicate to it, when that is not the
   * address routers dial (a separate replication network, NAT); '' = the same.
   */
  advertiseReplicationAddress: string;
}

export const nodeDefaults = {
  listenAddress: '127.0.0.1:50061',
  dataDir: './data/node',
  metricsHost: '127.0.0.1',
  metricsPort: 9465,
  logLevel: 'info' as LogLevel,
  shutdownTimeoutMs: 5_000,
  replicationTimeoutMs: 1_000,
  replicationRetryMs: 100,
  dedupWindowMs: 24 * 60 * 60 * 1000,
  dedupKeysInMemoryMax,
  checkpointIntervalMs: 2_000,
  checkpointRetainEntries: 100_000,
  // A pass over a log of a million entries in about 8 minutes, for ~1% of a core.
  scrubEntriesPerSecond: 2_000,
  tls: undefined as TlsFiles | undefined,
  insecure: false,
  callDeadlineMaxMs,
  zone: '',
  region: '',
  advertiseReplicationAddress: '',
};

export function parseNodeConfig(argv: readonly string[], env: NodeJS.ProcessEnv): NodeConfig {
  const reader = new ConfigReader(parseFlags(argv, ['insecure']), env);
  const listenAddress = reader.string('listen', nodeDefaults.listenAddress);
  parseAddress(listenAddress, '--listen');
  const logLevel = reader.string('log-level', nodeDefaults.logLevel);
  if (!isLogLevel(logLevel)) throw new ConfigError(`--log-level must be debug, info, warn or error, got "${logLevel}"`);
  const config: NodeConfig = {
    listenAddress,
    dataDir: reader.string('data-dir', nodeDefaults.dataDir),
    metricsHost: reader.string('metrics-host', nodeDefaults.metricsHost),
    metricsPort: reader.metricsPort('metrics-port', nodeDefaults.metricsPort),
    nodeName: reader.string('node-name', listenAddress),
    logLevel,
    shutdownTimeoutMs: reader.int('shutdown-timeout-ms', nodeDefaults.shutdownTimeoutMs, { min: 100, max: 600_000 }),
    replicationTimeoutMs: reader.int('replication-timeout-ms', nodeDefaults.replicationTimeoutMs, { min: 10, max: 60_000 }),
    replicationRetryMs: reader.int('replication-retry-ms', nodeDefaults.replicationRetryMs, { min: 1, max: 60_000 }),
    dedupWindowMs: reader.int('dedup-window-ms', nodeDefaults.dedupWindowMs, { min: 1_000, max: 30 * 24 * 60 * 60 * 1000 }),
    // At least one key; at most ~20 GB of memory.
    dedupKeysInMemoryMax: reader.int('dedup-keys-in-memory-max', nodeDefaults.dedupKeysInMemoryMax, { min: 1, max: 100_000_000 }),
    checkpointIntervalMs: reader.int('checkpoint-interval-ms', nodeDefaults.checkpointIntervalMs, { min: 10, max: 3_600_000 }),
    checkpointRetainEntries: reader.int('checkpoint-retain-entries', nodeDefaults.checkpointRetainEntries, { min: 0, max: 100_000_000 }),
    scrubEntriesPerSecond: reader.int('scrub-entries-per-second', nodeDefaults.scrubEntriesPerSecond, { min: 0, max: 10_000_000 }),
    tls: readTlsFiles(reader),
    insecure: reader.bool('insecure', nodeDefaults.insecure),
    callDeadlineMaxMs: reader.int('call-deadline-max-ms', nodeDefaults.callDeadlineMaxMs, { min: 100, max: 3_600_000 }),
    zone: checkZone(reader.string('zone', nodeDefaults.zone)),
    region: checkRegionName(reader.string('region', nodeDefaults.region)),
    advertiseReplicationAddress: reader.string('advertise-replication-address', nodeDefaults.advertiseReplicationAddress),
  };
  if (config.advertiseReplicationAddress !== '') {
    const { host } = parseAddress(config.advertiseReplicationAddress, '--advertise-replication-address');
    if (host === '' || host === '0.0.0.0' || host === '::' || host === '[::]')
      throw new ConfigError(
        `--advertise-replication-address must name a host the partner can dial, not a wildcard, got "${config.advertiseReplicationAddress}"`,
      );
  }
  checkPlaintextAllowed(parseAddress(listenAddress, '--listen').host, config.tls, config.insecure);
  reader.rejectUnknownFlags();
  return config;
}
