// The whole public surface of the Tally client library.
import { TallyClient } from './client.ts';
import type { TallyClientOptions } from './types.ts';

export {
  /** The typed client; create one with createTallyClient. */
  TallyClient,
};
export type {
  /** The events a TallyClient emits: 'state', with the ConnectionState, each time it changes. */
  TallyClientEvents,
} from './client.ts';
/** 'idle', 'connecting', 'ready' (some router connected), 'transient_failure' (every router failing) or 'closed'. */
export type { ConnectionState } from './connection/connection-state.ts';
export type {
  /** Options for createTallyClient: the router address (or several: addresses), a default deadline, retries, TLS, a token or a credentials callback, channelOptions, and coalesce (default false). */
  TallyClientOptions,
  /** One item of incrementBatch. */
  IncrementItem,
  /** Per-call options of increment: deadlineMs, signal and idempotencyKey. */
  IncrementOptions,
  /** What an increment reports: applied (false for a duplicate key) and the shard. */
  IncrementResult,
  /** A total with how exact and how old it is. */
  ReadResult,
  /** 'exact' (sum every shard now) or 'cached' (the refreshed total). */
  Consistency,
  ReadOptions,
  ReadScope,
  RegionPart,
  PeerRegionStatus,
  /** Shard count, placements and heat of one counter. */
  CounterDescription,
  /** One entry of hot(): a hot counter's rate, peak, shards and skew. */
  HotCounter,
  /** Where one shard lives. */
  ShardPlacement,
  /** Every node's address, role, health and log position. */
  ClusterStatus,
  PairStatus,
  /** One node in ClusterStatus. */
  NodeStatus,
  /** What reconcile found: per pair log positions, per shard drift. */
  ReconcileReport,
  /** One shard's figures in a ReconcileReport. */
  ShardDrift,
  /** Per-call settings: deadlineMs and an AbortSignal. */
  CallSettings,
  /** An int64 as bigint, safe-integer number or decimal string. */
  Int64Input,
  /** A window read: the sum and the buckets it covers. */
  WindowReadResult,
  /** A distinct-count estimate and its relative standard error. */
  DistinctCount,
  /** A membership member id: unsigned 64-bit, as bigint, number or decimal string. */
  MemberId,
  /** What rebuild found: members in the bitmaps, the stored count, drift per partition. */
  RebuildReport,
  /** One partition of a RebuildReport. */
  PartitionReport,
  /** Options of configure: autoscale, window, membershipPartitions. */
  ConfigureOptions,
  /** A pair after replaceNode: its primary, its new follower and its epoch. */
  NodeReplacement,
  /** What deleteCounter did: the counter's shard count and the drops still owed by unreachable nodes. */
  CounterDeletion,
  /** What clear did: the counter's new generation, whether it applied (false: a keyed retry), the clears still owed. */
  ClearResult,
  /** One counter of a listing: name, kind and shard count. */
  ListedCounter,
  /** Options of listCounters: prefix, pageToken, pageSize. */
  ListCountersOptions,
  /** One page of listCounters and the token of the next. */
  CounterPage,
} from './types.ts';
/** A total counter's time buckets: bucketMs wide, kept retentionMs ({0, 0}: none). */
export type { WindowSetting } from '../wire/index.ts';
/**
 * The error every failed call rejects with: `code` to match on, `grpcCode` as
 * received, and the server's google.rpc details: `reason` (ErrorInfo),
 * `certainlyNotApplied` (reason NOT_APPLIED: even an unkeyed increment may be
 * sent again) and `retryAfterMs` (RetryInfo).
 */
export { TallyError, ErrorCode, ErrorReason } from '../wire/index.ts';
/** The ErrorInfo reasons Tally sends (domain 'tally.counter.v1'): NOT_APPLIED and OUTCOME_UNKNOWN. */

/**
 * Creates a client for the router at options.address, or for the routers of
 * one cluster at options.addresses (calls take turns over them), or, given
 * neither, for those of the TALLY_ROUTER environment variable
 * (host:port[,host:port...]). Throws INVALID_ARGUMENT for a malformed
 * address or list, or one without a port. Call close() when done.
 */
export function createTallyClient(options: TallyClientOptions = {}): TallyClient {
  return new TallyClient(options);
}
