// The router's configuration: one typed object from flags and environment,
// defaults in one place, every key validated at startup.
import {
  ConfigReader,
  ConfigError,
  parseAddress,
  parseFlags,
  isLogLevel,
  pairsMax,
  memberPartitionsMax,
  routerCallsInFlightMax,
  routerLargeCallsInFlightMax,
  callDeadlineMaxMs,
  countersMax,
  shardsTotalMax,
  heatCountersMax,
  counterTtlMsMin,
  counterTtlMsMax,
  readTlsFiles,
  checkPlaintextAllowed,
  routerLeaseTtlMsMin,
  routerLeaseTtlMsMax,
  routerIdBytesMax,
  etcdPrefixBytesMax,
  etcdEndpointsMax,
  checkRegionName,
  parsePeerRegions,
  regionPublishIntervalMsDefault,
  regionTombstoneRetentionMsDefault,
  regionTombstoneRetentionMsMin,
  regionTombstoneRetentionMsMax,
  type PeerRegion,
  type LogLevel,
  type MetricsPort,
  type TlsFiles,
} from '../common/index.ts';
import { isLoopbackHost, shardsPerCounterMax } from '../wire/index.ts';
import fs from 'node:fs';
import os from 'node:os';
import type { PairAddresses } from './directory/index.ts';

export interface RouterConfig {
  listenAddress: string;
  /** Node pairs, primary then follower, in directory order. */
  pairs: PairAddresses[];
  dataDir: string;
  metricsHost: string;
  /** 0 disables the metrics endpoint; 'any' takes a port the kernel picks. */
  metricsPort: MetricsPort;
  /** The Connect and gRPC-Web port (router/http), on --listen's host with its TLS and tokens; 0: off; 'any': a port the kernel picks. */
  httpPort: MetricsPort;
  /** Origins browser pages may call the HTTP port from (CORS); '*': any. */
  httpCorsOrigins: string[];
  /** How often cached totals are recomputed (G4). */
  refreshIntervalMs: number;
  /** Deadline of one node read; bounds the summing time of any read. */
  readTimeoutMs: number;
  /** Deadline of one node Apply call. */
  nodeCallTimeoutMs: number;
  /** Apply and ReadShards as frames on one long-lived stream per node; off: one unary call each. */
  nodeStreams: 'on' | 'off';
  /** A counter not read CACHED for this long stops being refreshed. */
  cacheIdleMs: number;
  cacheEntriesMax: number;
  /** Half-life of the heat (increments/s) moving average. */
  heatHalfLifeMs: number;
  /** Counters whose heat is tracked at once; past it the least recently incremented is forgotten. */
  heatCountersMax: number;
  /** How often every node's status is checked. */
  healthIntervalMs: number;
  /** Deadline of one status check. */
  healthTimeoutMs: number;
  /** A primary silent this long is replaced by its in-sync follower. */
  failoverTimeoutMs: number;
  /** An increment no live shard can take (nothing sent) waits this long for a failover before failing UNAVAILABLE. */
  failoverWaitMs: number;
  /** A follower silent or lagging this long is marked out of sync (its primary then acknowledges alone). */
  followerTimeoutMs: number;
  /** How long a primary may take to bring a returning follower level before the pair is in sync. */
  catchUpTimeoutMs: number;
  /** Increments/s one shard is sized for: automatic sizing aims at ceil(peak / this) shards. */
  shardCeilingPerSec: number;
  /** Automatic sizing never grows a counter past this. */
  shardsMax: number;
  /** How often heat is sampled and sizing decided. */
  autoscaleIntervalMs: number;
  /** Counters with their own metric series: the K hottest. */
  topK: number;
  /**
   * Whether metrics may carry counter names as label values (the top-K
   * series): 'off' where counter names are private (user ids in names) or
   * must not reach the metrics store; `tally top` still shows them.
   */
  metricsCounterLabels: 'on' | 'off';
  /** Partitions a membership counter gets when its first SetMember creates it. */
  memberPartitions: number;
  /** Must equal the nodes' --dedup-window-ms: keyed retries consult shard homes from growths this recent. */
  dedupWindowMs: number;
  /** Counters the directory may hold; past it new names are RESOURCE_EXHAUSTED. */
  countersMax: number;
  /** Shards over all counters; past it creation and growth are RESOURCE_EXHAUSTED. */
  shardsTotalMax: number;
  /** Time to live of every counter without its own (Configure ttl); 0: counters never expire by default. */
  counterTtlMs: number;
  logLevel: LogLevel;
  shutdownTimeoutMs: number;
  /** TLS on the public port and mutual TLS to the nodes; undefined = plaintext (loopback only). */
  tls: TlsFiles | undefined;
  /** Require clients of the public port to present a certificate from the CA. */
  tlsRequireClientCert: boolean;
  insecure: boolean;
  /** Serve off loopback without both tokens or required client certificates, accepted explicitly (warned at every start). */
  allowUnauthenticated: boolean;
  /** Calls served at once; more are refused RESOURCE_EXHAUSTED on their headers. */
  callsInFlightMax: number;
  /** Of those, calls of the methods whose messages may be megabytes. */
  largeCallsInFlightMax: number;
  /** Ceiling on any call's deadline. */
  callDeadlineMaxMs: number;
  /** Bearer tokens; from files or env, never flags with the secret itself (ps would show it). */
  adminToken: string | undefined;
  clientToken: string | undefined;
  /** etcd client URLs: the directory lives there and several routers may share it; undefined = the embedded SQLite directory. */
  etcdEndpoints: string[] | undefined;
  /**
   * TLS to etcd (https:// endpoints): the CA etcd's certificate is checked
   * against, and this router's client certificate when etcd requires one
   * (--client-cert-auth). Use a CA that signs only routers' etcd
   * certificates: any certificate it signed can rewrite the directory.
   */
  etcdTls: { caFile: string; certFile: string | undefined; keyFile: string | undefined } | undefined;
  /** Every etcd key of this cluster starts with it (ends with "/"). */
  etcdPrefix: string;
  /** This router's name in etcd (presence key, supervisor value, tally status); unique among the routers of a cluster. */
  routerId: string;
  /** TTL of this router's etcd leases (presence and supervisor): a dead router is noticed, and replaced as supervisor, within it. */
  routerLeaseTtlMs: number;
  /** This cluster's region (docs/regions.md); '' when it runs alone. */
  region: string;
  /** The other regions' routers this one publishes components to. */
  peerRegions: PeerRegion[];
  /** Interval between the region publisher's rounds of exact reads of changed counters. */
  regionPublishIntervalMs: number;
  /** How long a deleted name's tombstone is kept (with no counter of that name) for peer regions cut off meanwhile. */
  regionTombstoneRetentionMs: number;
}

export const routerDefaults = {
  listenAddress: '127.0.0.1:50051',
  dataDir: './data/router',
  metricsHost: '127.0.0.1',
  metricsPort: 9464,
  // Off unless asked: a second public surface is opened on purpose (npm start asks for 8080).
  httpPort: 0 as MetricsPort,
  httpCorsOrigins: [] as string[],
  refreshIntervalMs: 1_000,
  readTimeoutMs: 1_000,
  nodeCallTimeoutMs: 2_000,
  nodeStreams: 'on' as 'on' | 'off',
  cacheIdleMs: 60_000,
  cacheEntriesMax: 100_000,
  heatHalfLifeMs: 5_000,
  heatCountersMax,
  healthIntervalMs: 250,
  healthTimeoutMs: 500,
  failoverTimeoutMs: 2_000,
  failoverWaitMs: 1_000,
  followerTimeoutMs: 1_000,
  catchUpTimeoutMs: 2_000,
  dedupWindowMs: 24 * 60 * 60 * 1000,
  shardCeilingPerSec: 1_000,
  shardsMax: 64,
  autoscaleIntervalMs: 1_000,
  topK: 20,
  metricsCounterLabels: 'on' as 'on' | 'off',
  memberPartitions: 16,
  countersMax,
  shardsTotalMax,
  counterTtlMs: 0,
  logLevel: 'info' as LogLevel,
  shutdownTimeoutMs: 5_000,
  tls: undefined as TlsFiles | undefined,
  tlsRequireClientCert: false,
  insecure: false,
  allowUnauthenticated: false,
  callsInFlightMax: routerCallsInFlightMax,
  largeCallsInFlightMax: routerLargeCallsInFlightMax,
  callDeadlineMaxMs,
  adminToken: undefined as string | undefined,
  clientToken: undefined as string | undefined,
  etcdEndpoints: undefined as string[] | undefined,
  etcdTls: undefined as RouterConfig['etcdTls'],
  etcdPrefix: '/tally/',
  routerLeaseTtlMs: 5_000,
  region: '',
  peerRegions: [] as PeerRegion[],
  regionPublishIntervalMs: regionPublishIntervalMsDefault,
  regionTombstoneRetentionMs: regionTombstoneRetentionMsDefault,
  // routerId has no fixed default: it is <host name>:<listen port> (defaultRouterId).
};

/** "p1:port,f1:port;p2:port,f2:port" → pairs. */
export function parsePairs(value: string): PairAddresses[] {
  if (value.trim() === '') throw new ConfigError('--pairs is required: "primary:port,follower:port;..."');
  const pairs = value.split(';').map((pairText, index) => {
    const members = pairText.split(',').map((member) => member.trim());
    if (members.length !== 2) throw new ConfigError(`--pairs entry ${index} must be "primary:port,follower:port", got "${pairText}"`);
    for (const member of members) parseAddress(member, `--pairs entry ${index}`);
    return { primary: members[0]!, follower: members[1]! };
  });
  if (pairs.length > pairsMax) throw new ConfigError(`--pairs lists ${pairs.length} pairs; the limit is ${pairsMax}`);
  const all = pairs.flatMap((pair) => [pair.primary, pair.follower]);
  if (new Set(all).size !== all.length) throw new ConfigError('--pairs names a node twice');
  return pairs;
}

/** "https://app.example.com,http://localhost:3000" → origins (scheme://host[:port], as a browser sends Origin), or "*". */
export function parseCorsOrigins(value: string): string[] {
  if (value.trim() === '') return [];
  const origins = value.split(',').map((entry) => entry.trim());
  origins.forEach((origin, index) => {
    if (origin === '*') return;
    let url: URL | undefined;
    try {
      url = new URL(origin);
    } catch {
      url = undefined;
    }
    if (url === undefined || url.origin !== origin || (url.protocol !== 'http:' && url.protocol !== 'https:'))
      throw new ConfigError(
        `--http-cors-origins entry ${index} must be an origin like https://app.example.com (no path, no trailing /) or *, got "${origin}"`,
      );
  });
  return origins;
}

/** "http://a:2379,https://b:2379" → endpoints; undefined when --etcd is not given (embedded directory). */
export function parseEtcdEndpoints(value: string | undefined): string[] | undefined {
  if (value === undefined) return undefined;
  const endpoints = value.split(',').map((entry) => entry.trim());
  endpoints.forEach((endpoint, index) => {
    let url: URL | undefined;
    try {
      url = new URL(endpoint);
    } catch {
      url = undefined;
    }
    // Only scheme://host:port: a path, query or credentials would be silently dropped by the etcd client.
    const plain = url !== undefined && `${url.protocol}//${url.host}` === endpoint.toLowerCase() && url.port !== '';
    if (!plain || (url!.protocol !== 'http:' && url!.protocol !== 'https:'))
      throw new ConfigError(`--etcd entry ${index} must be http://host:port or https://host:port, got "${endpoint}"`);
  });
  if (endpoints.length > etcdEndpointsMax)
    throw new ConfigError(`--etcd lists ${endpoints.length} endpoints; the limit is ${etcdEndpointsMax}`);
  if (new Set(endpoints).size !== endpoints.length) throw new ConfigError('--etcd names an endpoint twice');
  return endpoints;
}

function readEtcdTls(reader: ConfigReader): RouterConfig['etcdTls'] {
  const caFile = reader.nonEmptyString('etcd-tls-ca');
  const certFile = reader.nonEmptyString('etcd-tls-cert');
  const keyFile = reader.nonEmptyString('etcd-tls-key');
  if (caFile === undefined && certFile === undefined && keyFile === undefined) return undefined;
  if (caFile === undefined)
    throw new ConfigError("--etcd-tls-cert and --etcd-tls-key need --etcd-tls-ca (the CA that signed etcd's certificate)");
  if ((certFile === undefined) !== (keyFile === undefined)) throw new ConfigError('--etcd-tls-cert and --etcd-tls-key go together');
  return { caFile, certFile, keyFile };
}

/**
 * The directory is the cluster's map: whoever can write it can point counters
 * at other shards. Plaintext to an etcd off loopback needs --insecure; TLS
 * settings need https:// endpoints (and https:// needs them, or the system CAs).
 */
function checkEtcdTransport(endpoints: string[] | undefined, tls: RouterConfig['etcdTls'], insecure: boolean): void {
  if (endpoints === undefined) {
    if (tls !== undefined) throw new ConfigError('--etcd-tls-* go with --etcd');
    return;
  }
  for (const endpoint of endpoints) {
    const url = new URL(endpoint);
    if (url.protocol === 'https:') continue;
    if (tls !== undefined) throw new ConfigError(`--etcd ${endpoint} is http:// but --etcd-tls-* are given: use https:// endpoints`);
    const host = url.hostname.replace(/^\[|\]$/g, '');
    if (!insecure && !isLoopbackHost(host))
      throw new ConfigError(
        `refusing plaintext to etcd off loopback (--etcd ${endpoint}): anyone on the path could read and rewrite the directory; use https:// with --etcd-tls-ca (and --etcd-tls-cert/--etcd-tls-key), or --insecure to accept plaintext`,
      );
  }
}

/** Printable ASCII without spaces or "/": an id is one segment of an etcd key (routers/<id>). */
const routerIdPattern = /^[!-.0-~]+$/;

/**
 * <host name>:<listen port>: the same across restarts (the id is this
 * router's presence key in etcd), and different for every router of a
 * cluster as long as each host runs one router per port. In Kubernetes the
 * host name is the pod name. A restart after a clean stop takes the id at
 * once (the stop revoked its lease); after a crash it waits out the old
 * lease (at most its TTL and a margin), then registers.
 */
export function defaultRouterId(listenAddress: string, hostName: string = os.hostname()): string {
  const { port } = parseAddress(listenAddress, '--listen');
  return `${hostName}:${port}`;
}

function checkRouterId(routerId: string): string {
  if (Buffer.byteLength(routerId) > routerIdBytesMax || !routerIdPattern.test(routerId))
    throw new ConfigError(`--router-id must be 1..${routerIdBytesMax} printable ASCII characters without spaces or "/", got "${routerId}"`);
  return routerId;
}

function checkEtcdPrefix(prefix: string): string {
  if (Buffer.byteLength(prefix) > etcdPrefixBytesMax || !prefix.endsWith('/') || /\p{Cc}/u.test(prefix))
    throw new ConfigError(
      `--etcd-prefix must end with "/", have no control characters and be at most ${etcdPrefixBytesMax} bytes, got "${prefix}"`,
    );
  return prefix;
}

/** A token from its file (--*-token-file / TALLY_*_TOKEN_FILE) or the environment (TALLY_*_TOKEN). */
function readToken(file: string, fromEnv: string | undefined, what: string): string | undefined {
  let token = fromEnv;
  if (file !== '') {
    try {
      token = fs.readFileSync(file, 'utf8');
    } catch (error) {
      throw new ConfigError(
        `cannot read the ${what} token file ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
      );
    }
  }
  if (token === undefined) return undefined;
  token = token.trim();
  if (token.length < 16) throw new ConfigError(`the ${what} token must be at least 16 characters`);
  return token;
}

/**
 * Off loopback, every caller must prove who it is: both tokens (client and
 * admin), or client certificates required by TLS. Otherwise the router
 * refuses to start unless --allow-unauthenticated says the operator means it.
 */
function checkAuthenticationRequired(listenHost: string, config: RouterConfig): void {
  if (isLoopbackHost(listenHost) || config.allowUnauthenticated || config.tlsRequireClientCert) return;
  if (config.adminToken !== undefined && config.clientToken !== undefined) return;
  const missing = config.adminToken === undefined ? (config.clientToken === undefined ? 'tokens' : 'an admin token') : 'a client token';
  throw new ConfigError(
    `refusing to serve ${listenHost || 'all interfaces'} (--listen) without ${missing}: give --admin-token-file and --client-token-file (or TALLY_ADMIN_TOKEN and TALLY_CLIENT_TOKEN), or --tls-require-client-cert, or --allow-unauthenticated to let anyone who reaches the port call it`,
  );
}

/** --pairs is required: under --help, where nothing is given, it is only listed. */
function pairsUnlessHelp(reader: ConfigReader): PairAddresses[] {
  const text = reader.string('pairs', '');
  return reader.helpMode ? [] : parsePairs(text);
}

export function parseRouterConfig(argv: readonly string[], env: NodeJS.ProcessEnv): RouterConfig {
  const reader = new ConfigReader(parseFlags(argv, ['insecure', 'tls-require-client-cert', 'allow-unauthenticated']), env);
  const listenAddress = reader.string('listen', routerDefaults.listenAddress);
  parseAddress(listenAddress, '--listen');
  const logLevel = reader.string('log-level', routerDefaults.logLevel);
  if (!isLogLevel(logLevel)) throw new ConfigError(`--log-level must be debug, info, warn or error, got "${logLevel}"`);
  const region = checkRegionName(reader.string('region', routerDefaults.region));
  const config: RouterConfig = {
    listenAddress,
    pairs: pairsUnlessHelp(reader),
    dataDir: reader.string('data-dir', routerDefaults.dataDir),
    metricsHost: reader.string('metrics-host', routerDefaults.metricsHost),
    metricsPort: reader.metricsPort('metrics-port', routerDefaults.metricsPort),
    httpPort: reader.metricsPort('http-port', routerDefaults.httpPort),
    httpCorsOrigins: parseCorsOrigins(reader.string('http-cors-origins', '')),
    refreshIntervalMs: reader.int('refresh-interval-ms', routerDefaults.refreshIntervalMs, { min: 10, max: 3_600_000 }),
    readTimeoutMs: reader.int('read-timeout-ms', routerDefaults.readTimeoutMs, { min: 10, max: 60_000 }),
    nodeCallTimeoutMs: reader.int('node-call-timeout-ms', routerDefaults.nodeCallTimeoutMs, { min: 10, max: 60_000 }),
    nodeStreams: reader.oneOf('node-streams', routerDefaults.nodeStreams, ['on', 'off']),
    cacheIdleMs: reader.int('cache-idle-ms', routerDefaults.cacheIdleMs, { min: 1_000, max: 86_400_000 }),
    cacheEntriesMax: reader.int('cache-entries-max', routerDefaults.cacheEntriesMax, { min: 1, max: 10_000_000 }),
    heatHalfLifeMs: reader.int('heat-half-life-ms', routerDefaults.heatHalfLifeMs, { min: 100, max: 3_600_000 }),
    heatCountersMax: reader.int('heat-counters-max', routerDefaults.heatCountersMax, { min: 1, max: 1_000_000 }),
    healthIntervalMs: reader.int('health-interval-ms', routerDefaults.healthIntervalMs, { min: 10, max: 60_000 }),
    healthTimeoutMs: reader.int('health-timeout-ms', routerDefaults.healthTimeoutMs, { min: 10, max: 60_000 }),
    failoverTimeoutMs: reader.int('failover-timeout-ms', routerDefaults.failoverTimeoutMs, { min: 100, max: 600_000 }),
    failoverWaitMs: reader.int('failover-wait-ms', routerDefaults.failoverWaitMs, { min: 0, max: 60_000 }),
    followerTimeoutMs: reader.int('follower-timeout-ms', routerDefaults.followerTimeoutMs, { min: 100, max: 600_000 }),
    catchUpTimeoutMs: reader.int('catch-up-timeout-ms', routerDefaults.catchUpTimeoutMs, { min: 100, max: 600_000 }),
    shardCeilingPerSec: reader.int('shard-ceiling-per-sec', routerDefaults.shardCeilingPerSec, { min: 1, max: 10_000_000 }),
    shardsMax: reader.int('shards-max', routerDefaults.shardsMax, { min: 1, max: shardsPerCounterMax }),
    autoscaleIntervalMs: reader.int('autoscale-interval-ms', routerDefaults.autoscaleIntervalMs, { min: 50, max: 600_000 }),
    topK: reader.int('top-k', routerDefaults.topK, { min: 0, max: 1_000 }),
    metricsCounterLabels: reader.oneOf('metrics-counter-labels', routerDefaults.metricsCounterLabels, ['on', 'off']),
    memberPartitions: reader.int('member-partitions', routerDefaults.memberPartitions, { min: 1, max: memberPartitionsMax }),
    dedupWindowMs: reader.int('dedup-window-ms', routerDefaults.dedupWindowMs, { min: 1_000, max: 30 * 24 * 60 * 60 * 1000 }),
    countersMax: reader.int('counters-max', routerDefaults.countersMax, { min: 1, max: 10_000_000 }),
    shardsTotalMax: reader.int('shards-total-max', routerDefaults.shardsTotalMax, { min: 1, max: 40_000_000 }),
    counterTtlMs: reader.int('counter-ttl-ms', routerDefaults.counterTtlMs, { min: 0, max: counterTtlMsMax }),
    logLevel,
    shutdownTimeoutMs: reader.int('shutdown-timeout-ms', routerDefaults.shutdownTimeoutMs, { min: 100, max: 600_000 }),
    tls: readTlsFiles(reader),
    tlsRequireClientCert: reader.bool('tls-require-client-cert', routerDefaults.tlsRequireClientCert),
    insecure: reader.bool('insecure', routerDefaults.insecure),
    allowUnauthenticated: reader.bool('allow-unauthenticated', routerDefaults.allowUnauthenticated),
    callsInFlightMax: reader.int('calls-in-flight-max', routerDefaults.callsInFlightMax, { min: 1, max: 1_000_000 }),
    largeCallsInFlightMax: reader.int('large-calls-in-flight-max', routerDefaults.largeCallsInFlightMax, { min: 1, max: 1_000_000 }),
    callDeadlineMaxMs: reader.int('call-deadline-max-ms', routerDefaults.callDeadlineMaxMs, { min: 100, max: 3_600_000 }),
    adminToken: readToken(reader.nonEmptyString('admin-token-file') ?? '', reader.envOnly('TALLY_ADMIN_TOKEN'), 'admin'),
    clientToken: readToken(reader.nonEmptyString('client-token-file') ?? '', reader.envOnly('TALLY_CLIENT_TOKEN'), 'client'),
    etcdEndpoints: parseEtcdEndpoints(reader.nonEmptyString('etcd')),
    etcdTls: readEtcdTls(reader),
    etcdPrefix: checkEtcdPrefix(reader.nonEmptyString('etcd-prefix') ?? routerDefaults.etcdPrefix),
    routerId: checkRouterId(reader.nonEmptyString('router-id') ?? defaultRouterId(listenAddress)),
    routerLeaseTtlMs: reader.int('router-lease-ttl-ms', routerDefaults.routerLeaseTtlMs, {
      min: routerLeaseTtlMsMin,
      max: routerLeaseTtlMsMax,
    }),
    region,
    peerRegions: parsePeerRegions(reader.string('peer-regions', ''), region),
    regionPublishIntervalMs: reader.int('region-publish-interval-ms', routerDefaults.regionPublishIntervalMs, { min: 10, max: 60_000 }),
    regionTombstoneRetentionMs: reader.int('region-tombstone-retention-ms', routerDefaults.regionTombstoneRetentionMs, {
      min: regionTombstoneRetentionMsMin,
      max: regionTombstoneRetentionMsMax,
    }),
  };
  reader.rejectUnknownFlags();
  const listenHost = parseAddress(listenAddress, '--listen').host;
  checkPlaintextAllowed(listenHost, config.tls, config.insecure);
  checkAuthenticationRequired(listenHost, config);
  if (config.counterTtlMs > 0 && config.counterTtlMs < counterTtlMsMin)
    throw new ConfigError(`--counter-ttl-ms must be 0 (no default) or at least ${counterTtlMsMin}, got ${config.counterTtlMs}`);
  checkEtcdTransport(config.etcdEndpoints, config.etcdTls, config.insecure);
  if (config.counterTtlMs > 0 && config.etcdEndpoints !== undefined)
    throw new ConfigError(
      '--counter-ttl-ms needs the embedded directory: with several routers on etcd no router sees every write, so none can tell a counter is idle',
    );
  if (config.tlsRequireClientCert && config.tls === undefined)
    throw new ConfigError('--tls-require-client-cert needs --tls-cert, --tls-key and --tls-ca');
  if (config.routerLeaseTtlMs % 1_000 !== 0)
    throw new ConfigError(`--router-lease-ttl-ms must be whole seconds (etcd leases are), got ${config.routerLeaseTtlMs}`);
  if (config.adminToken !== undefined && config.adminToken === config.clientToken)
    throw new ConfigError('the admin and client tokens must differ');
  return config;
}
