// The client library's public shapes: options, call settings, and what each
// call returns. Amounts and totals are bigint end to end.
// Specific files, never ../common/index.ts: that re-exports server code
// (pino, prom-client, health, reflection) the client package must not carry.
import type { ChannelOptions } from '@grpc/grpc-js';
import type { WindowSetting } from '../wire/index.ts';

export interface TallyClientOptions {
  /**
   * Router address, host:port (give this or addresses; neither: the
   * TALLY_ROUTER environment variable, host:port[,host:port...]). A port is
   * required (routers listen on 50051 by default); a gRPC target such as
   * dns:///tally-router.tally.svc:50051 balances round-robin over every
   * address the name resolves to.
   */
  address?: string;
  /**
   * Several routers of one cluster, host:port each (give this or address; 1
   * to 16). Calls take turns over them; a router that cannot be reached is
   * passed over with nothing sent, and one that fails is avoided for 1-5 s.
   * A call that may have reached a router is sent again (to another) only
   * when that is safe: reads, and writes whose every increment is keyed. TLS
   * and the token apply to every address.
   */
  addresses?: readonly string[];
  /** Deadline of each call (all its retries included) unless the call gives its own. Default 5000. */
  deadlineMs?: number;
  /** Deadline of one attempt of a keyed increment; later attempts get what is left. Default 2000. */
  attemptTimeoutMs?: number;
  /** Attempts of a keyed increment that fails UNAVAILABLE or DEADLINE_EXCEEDED. Default 12. */
  attemptsMax?: number;
  /** TLS to the router: the CA to verify it by, and a client certificate if the router requires one (PEM). */
  tls?: { ca: Buffer; cert?: Buffer; key?: Buffer };
  /** Bearer token sent with every call (the client or the admin token). */
  token?: string;
  /**
   * For a token that rotates (give this or token): asked before every call
   * attempt, its answer sent as the bearer token. Cache inside it when
   * getting a token is costly. A callback that throws, or gives no usable
   * token, fails the call UNAUTHENTICATED with nothing sent.
   */
  credentials?: () => string | Promise<string>;
  /**
   * gRPC channel options over the client's defaults, which suit proxies
   * with grpc-go's keepalive enforcement (a ping at most every 5 minutes,
   * none without calls) and back reconnects off to 30 s with jitter, e.g.
   * { 'grpc.keepalive_time_ms': 600_000 }. The service config is Tally's.
   */
  channelOptions?: ChannelOptions;
  /**
   * Concurrent increment calls leave together in one IncrementBatch while
   * another is in flight, each caller answered on its own, with the keys,
   * deadlines, retries and errors of a single call. Default false: a batch
   * fails as a whole, so while one counter's node pair is unavailable its
   * unkeyed neighbours in a batch fail too (outcome unknown) where single
   * calls to healthy pairs would have succeeded. Turn it on for throughput
   * when that trade is right (most increments keyed, or one pair).
   * The batches travel on one IncrementStream per router (a router that
   * does not serve it gets unary IncrementBatch calls).
   */
  coalesce?: boolean;
  /**
   * With coalesce: send the batches on an IncrementStream (default true) or
   * as unary IncrementBatch calls (false). The answers, keys and retries are
   * the same either way.
   */
  incrementStream?: boolean;
  /**
   * incrementBatch() calls travel as batches on one IncrementStream per
   * router instead of unary IncrementBatch calls (default false): cheaper
   * per call for a service that sends batches continuously; the answers,
   * keys and retries are the same.
   */
  incrementBatchOnStream?: boolean;
  /**
   * readMany() calls made while another is in flight travel as pages on one
   * ReadStream per router instead of unary ReadMany calls (default true):
   * cheaper per page for a service that reads pages continuously; the
   * answers and retries are the same. A lone call stays a unary ReadMany.
   */
  readStream?: boolean;
}

export type Int64Input = bigint | number | string;

export interface CallSettings {
  deadlineMs?: number;
  /**
   * Aborts the call (and its retries): it rejects with code 'cancelled'. A
   * write it interrupts may or may not have applied; send a keyed one again
   * with its key. With coalesce, only an increment not yet queued stops.
   */
  signal?: AbortSignal;
}

export interface IncrementItem {
  counter: string;
  amount: Int64Input;
  /** 0-128 bytes. Omitted: the client makes one, so retries are safe. null: no key (never retried). */
  idempotencyKey?: string | Uint8Array | null;
}

export interface IncrementOptions extends CallSettings {
  /** 0-128 bytes. Omitted: the client makes one, so retries are safe. null: no key (never retried). */
  idempotencyKey?: string | Uint8Array | null;
  /**
   * Answer with the counter's exact total after this increment (result.total),
   * as an exact read would give it: one call for a rate limiter or a "new
   * count" display. Sent on its own call, never coalesced.
   */
  returnTotal?: boolean;
}

export interface IncrementResult {
  /**
   * False when the key was seen before and this increment was not applied
   * again; also when an earlier attempt of this same call (a retry, or a
   * coalesced batch re-sent item by item) had already applied it.
   */
  applied: boolean;
  /** Index of the shard within the counter that holds the increment. */
  shard: number;
  /**
   * With returnTotal: the counter's exact total read after this increment was
   * acknowledged (it includes it). Undefined when that read failed: the
   * increment stands, read the counter again.
   */
  total?: bigint;
}

export type Consistency = 'exact' | 'cached';

/**
 * Which regions a read adds up: 'region' (the default) is the answering
 * region's own total; 'global' adds every peer region's last received total
 * (never exact; each part listed in `regions`). docs/regions.md.
 */
export type ReadScope = 'region' | 'global';

/** What read() and readMany() take besides call settings. */
export interface ReadOptions extends CallSettings {
  consistency?: Consistency;
  scope?: ReadScope;
}

/** One region's part of a global read. */
export interface RegionPart {
  region: string;
  /** That region's own total. */
  total: bigint;
  /** When that region's total was taken, on its clock. */
  asOfUnixMs: number;
  stalenessMs: number;
  /** True for the region that answered. */
  home: boolean;
}

export interface ReadResult {
  counter: string;
  total: bigint;
  exact: boolean;
  asOfUnixMs: number;
  stalenessMs: number;
  shards: number;
  /** scope 'global' only: the answering region first, then each peer by name. */
  regions?: RegionPart[];
}

export interface ShardPlacement {
  shard: number;
  shardId: number;
  pair: number;
  primary: string;
  follower: string;
  epoch: number;
}

export interface CounterDescription {
  counter: string;
  shards: number;
  placements: ShardPlacement[];
  /** Increments/s, smoothed. */
  heatPerSec: number;
  /** Recent peak of heatPerSec: what automatic sizing follows. */
  peakPerSec: number;
  /** Increments/s per shard over the router's last sample window. */
  shardRates: number[];
  /** max shard rate / mean shard rate; 1 is even. */
  skew: number;
  createdUnixMs: number;
  /** False when heat-driven growth is off for this counter. */
  autoscale: boolean;
  /** 'total', 'distinct' or 'membership'. */
  kind: string;
  /** Totals with a window: bucket size and retention (0 when none). */
  windowBucketMs: number;
  windowRetentionMs: number;
  /** The time to live in force: deleted once not written for this long; 0 never expires. */
  ttlMs: number;
  /** Where ttlMs comes from: 'counter' (its own), 'default' (the router's), 'never' (exempted) or 'none'. */
  ttlFrom: string;
  /** Since the router last saw a write (or started, if later); the counter expires when this reaches ttlMs. */
  idleMs: number;
}

export interface WindowReadResult {
  counter: string;
  total: bigint;
  exact: boolean;
  /** The buckets summed, [fromUnixMs, toUnixMs); the newest is the current, partial one. */
  fromUnixMs: number;
  toUnixMs: number;
  bucketMs: number;
  buckets: number;
  asOfUnixMs: number;
  stalenessMs: number;
}

export interface DistinctCount {
  estimate: number;
  /** Relative standard error (about 0.0081). */
  standardError: number;
  shards: number;
}

/** A member id: an unsigned 64-bit integer as bigint, safe integer or decimal string. */
export type MemberId = bigint | number | string;

export interface PartitionReport {
  partition: number;
  shardId: number;
  pair: number;
  members: bigint;
  storedCount: bigint;
  drift: bigint;
  repaired: bigint;
  /** The same drift on the pair's follower; undefined when it could not be read. */
  followerDrift: bigint | undefined;
}

export interface RebuildReport {
  counter: string;
  members: bigint;
  storedCount: bigint;
  /** storedCount - members: 0 on a healthy counter. */
  drift: bigint;
  repaired: boolean;
  partitions: PartitionReport[];
}

export interface ConfigureOptions {
  autoscale?: boolean;
  /** Time buckets for a total counter ({0, 0} turns them off). */
  window?: WindowSetting;
  /** Creates a membership counter with this many partitions (fixed for life). */
  membershipPartitions?: number;
  /**
   * Time to live in ms (1,000..10 years): the counter is deleted once not
   * written for this long; 'never': it never expires, even under a router
   * default; 'default': drop its own, follow the router's. Setting it
   * restarts the counter's idle clock.
   */
  ttlMs?: number | 'never' | 'default';
}

export interface HotCounter {
  counter: string;
  /** Increments/s, smoothed. */
  ratePerSec: number;
  /** Recent peak of ratePerSec: what automatic sizing follows. */
  peakPerSec: number;
  shards: number;
  /** max shard rate / mean shard rate; 1 is even. */
  skew: number;
  shardRates: number[];
  autoscale: boolean;
}

/** One counter of a listing. */
export interface ListedCounter {
  name: string;
  /** 'total', 'distinct' or 'membership'. */
  kind: string;
  shards: number;
  /** The time to live in force (its own or the router default); 0: never expires. */
  ttlMs: number;
}

export interface ListCountersOptions {
  /** Only names starting with this (UTF-8, no control characters); default: every counter. */
  prefix?: string;
  /** A nextPageToken of an earlier page of the same prefix; default: the first page. */
  pageToken?: string;
  /** Counters per page, 1..1,000; default 100. */
  pageSize?: number;
}

/** One page of a listing, in byte order of the names. */
export interface CounterPage {
  counters: ListedCounter[];
  /** Pass it back as pageToken for the next page; '' on the last page. */
  nextPageToken: string;
}

export interface NodeStatus {
  address: string;
  role: string;
  pair: number;
  health: string;
  lastLsn: bigint;
  pid: number;
  shardCount: number;
  replicationLagEntries: bigint;
  replicationLagMs: number;
  /** The node's epoch (bumped by every failover of its pair). */
  epoch: number;
  /** Whether the pair is in sync: its follower holds every acknowledged increment. */
  inSync: boolean;
  /** The node's log identity: a new one at the same address means a new (empty) disk. */
  nodeId: string;
  /** A snapshot install into this node is under way. */
  installing: boolean;
  error: string;
  /** The failure domain the node reports ('' when it names none). */
  zone: string;
  /** Where its partner replicates to, when not its address ('' = the same). */
  replicationAddress: string;
  /** The internal wire version the node speaks (0: it did not answer). */
  protocolVersion: number;
}

/** Where a pair stands after its follower slot moved. */
/** What clear did. */
export interface ClearResult {
  counter: string;
  /** The counter's generation from this clear on: how many times it has been cleared. */
  generation: number;
  /** False for a retry (same key) of a clear already made: nothing more was cleared. */
  applied: boolean;
  shards: number;
  /** Shards whose node has yet to confirm the clear; they read 0 all the same, and the router keeps sending it. */
  shardsPending: number;
}

/** What deleteCounter did: the shards the counter had, and how many of their nodes have yet to confirm freeing them. */
export interface CounterDeletion {
  counter: string;
  shards: number;
  /** Shards whose pair had no reachable primary: the router keeps sending their drop until it is confirmed. */
  shardsPending: number;
}

export interface NodeReplacement {
  pair: number;
  primary: string;
  follower: string;
  epoch: number;
}

export interface ShardDrift {
  pair: number;
  shardId: number;
  counter: string;
  primaryMemory: bigint;
  primaryLog: bigint;
  followerMemory: bigint;
  followerLog: bigint;
  /** primary memory - primary log */
  primaryDrift: bigint;
  /** follower memory - follower log */
  followerDrift: bigint;
  /** primary log at the follower's lsn - follower log */
  replicaDrift: bigint;
}

export interface ReconcileReport {
  pairs: { pair: number; primaryLsn: bigint; followerLsn: bigint; followerChecked: boolean; note: string }[];
  /** Shards with drift (and every shard of a named counter). */
  shards: ShardDrift[];
  shardsChecked: number;
  shardsDrifting: number;
}

export interface PairStatus {
  pair: number;
  primary: string;
  follower: string;
  epoch: number;
  inSync: boolean;
  /** No new shards are placed on it. */
  draining: boolean;
  /** Shards placed on it, over all counters. */
  shardCount: number;
  /** Why its two nodes do not span failure domains (one zone while another exists); '' when they do. */
  zoneWarning: string;
}

export interface ClusterStatus {
  nodes: NodeStatus[];
  counters: number;
  pairs: PairStatus[];
  /** 'sqlite' (one router, embedded) or 'etcd' (several routers share it). */
  directoryStore: string;
  /** The routers sharing the directory now (their ids). */
  routers: string[];
  /** The router supervising the pairs now; '' while none holds the lease. */
  supervisor: string;
  /** The router that answered. */
  router: string;
  /** The answering router's dedup window (--dedup-window-ms); 0 from a router too old to say. */
  dedupWindowMs: number;
  /** This cluster's region ('' when it runs alone). */
  region: string;
  /** Each peer region as the answering router's link to it stands. */
  peerRegions: PeerRegionStatus[];
}

/** A link to a peer region (docs/regions.md). */
export interface PeerRegionStatus {
  region: string;
  /** 'up', 'connecting', 'down', 'refused', or 'standby' (the answering router does not publish). */
  link: string;
  address: string;
  /** This region's changed components the peer has not yet acknowledged. */
  componentsPending: number;
  /** Seconds since the last component from that peer was applied here; -1: none yet. */
  lagSeconds: number;
  /** Why the link is not up ('' when it is). */
  error: string;
}
