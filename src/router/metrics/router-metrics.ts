// The router's Prometheus metrics. No series per counter but the top-K
// hottest (and none with --metrics-counter-labels off): counter names are
// unbounded, labels here are not.
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { batchSizeBuckets, latencyBucketsSeconds, registerRpcCounter } from '../../common/index.ts';

/** Calls: their statuses, increments by outcome, and latencies. */
function callMetrics(registry: Registry) {
  return {
    /** Counts a call's status in tally_rpc_total{service, method, code} (CallGuards.onStatus). */
    rpcStatus: registerRpcCounter(registry),
    incrementsAccepted: new Counter({
      name: 'tally_increments_accepted_total',
      help: 'Increments acknowledged as applied',
      registers: [registry],
    }),
    incrementsDeduplicated: new Counter({
      name: 'tally_increments_deduplicated_total',
      help: 'Increments acknowledged as duplicates of an earlier key',
      registers: [registry],
    }),
    incrementsRejected: new Counter({
      name: 'tally_increments_rejected_total',
      help: 'Increments refused, by reason',
      labelNames: ['reason'],
      registers: [registry],
    }),
    incrementLatency: new Histogram({
      name: 'tally_increment_latency_seconds',
      help: 'Increment and IncrementBatch call latency, and IncrementStream batch latency (rpc=increment_stream)',
      labelNames: ['rpc'],
      buckets: latencyBucketsSeconds,
      registers: [registry],
    }),
    readLatency: new Histogram({
      name: 'tally_read_latency_seconds',
      help: 'Read latency by consistency',
      labelNames: ['consistency'],
      buckets: latencyBucketsSeconds,
      registers: [registry],
    }),
  };
}

/** The router's calls to nodes. */
function nodeCallMetrics(registry: Registry) {
  return {
    nodeCalls: new Counter({
      name: 'tally_router_node_calls_total',
      help: 'Calls from the router to nodes, by kind',
      labelNames: ['kind'],
      registers: [registry],
    }),
    nodeStreamStrayAnswers: new Counter({
      name: 'tally_router_node_stream_stray_answers_total',
      help: 'Answers on a node stream for a frame not in flight (answered twice, after its deadline, or on a replaced stream): ignored',
      registers: [registry],
    }),
    nodeStreamsAbandoned: new Counter({
      name: 'tally_router_node_streams_abandoned_total',
      help: 'Node streams replaced with frames in flight (failed with an unknown outcome), by why: deadline (a frame stalled) or broken',
      labelNames: ['why'],
      registers: [registry],
    }),
    nodeCallItems: new Histogram({
      name: 'tally_router_node_call_items',
      help: 'Increments coalesced into one node Apply call',
      buckets: batchSizeBuckets,
      registers: [registry],
    }),
  };
}

/** Cached and window totals, and their refresher. */
function cacheMetrics(registry: Registry) {
  return {
    cacheAgeSeconds: new Histogram({
      name: 'tally_cache_age_seconds',
      help: 'Age of cached totals when served',
      buckets: latencyBucketsSeconds,
      registers: [registry],
    }),
    cacheEntries: new Gauge({ name: 'tally_cache_entries', help: 'Counters whose total the refresher keeps', registers: [registry] }),
    cacheEvictions: new Counter({
      name: 'tally_cache_evictions_total',
      help: 'Cached totals dropped: full (least recently read, to make room) or idle (not read for --cache-idle-ms)',
      labelNames: ['reason'],
      registers: [registry],
    }),
    windowCacheEntries: new Gauge({
      name: 'tally_window_cache_entries',
      help: 'Window sums kept for CACHED window reads',
      registers: [registry],
    }),
    cacheRefreshSeconds: new Histogram({
      name: 'tally_cache_refresh_seconds',
      help: 'Time to recompute every cached total once',
      buckets: latencyBucketsSeconds,
      registers: [registry],
    }),
  };
}

/** The directory and counter expiry. */
function directoryMetrics(registry: Registry) {
  return {
    directoryCounters: new Gauge({ name: 'tally_directory_counters', help: 'Counters in the directory', registers: [registry] }),
    directoryShards: new Gauge({ name: 'tally_directory_shards', help: 'Shards of every counter in the directory', registers: [registry] }),
    directoryFresh: new Gauge({
      name: 'tally_directory_fresh',
      help: '1 while this router can prove its copy of the directory current (etcd: lease renewed, watch up and caught up); 0 while it refuses exact reads and writes',
      registers: [registry],
    }),
    countersDeleted: new Counter({
      name: 'tally_counters_deleted_total',
      help: 'Counters deleted, by cause (ttl: expired; delete: DeleteCounter)',
      labelNames: ['cause'],
      registers: [registry],
    }),
    expiryPassSeconds: new Gauge({
      name: 'tally_expiry_pass_seconds',
      help: 'Duration of the last full expiry pass over the directory (or of the one under way, once longer): how late an expired counter may be found',
      registers: [registry],
    }),
  };
}

/** Pairs: failovers and replication. */
function pairMetrics(registry: Registry) {
  return {
    failovers: new Counter({
      name: 'tally_failovers_total',
      help: 'Followers promoted after their primary went silent',
      labelNames: ['pair'],
      registers: [registry],
    }),
    outOfSync: new Counter({
      name: 'tally_out_of_sync_total',
      help: 'Times a pair fell out of sync',
      labelNames: ['pair'],
      registers: [registry],
    }),
    pairInSync: new Gauge({
      name: 'tally_pair_in_sync',
      help: '1 while the pair is in sync (follower promotable)',
      labelNames: ['pair'],
      registers: [registry],
    }),
  };
}

/** Membership and distinct counters, and drift found by reconcile. */
function kindMetrics(registry: Registry) {
  return {
    membershipDrift: new Gauge({
      name: 'tally_membership_drift',
      help: 'Stored count minus bitmap members found by the last rebuild (any counter)',
      registers: [registry],
    }),
    membershipRebuilds: new Counter({
      name: 'tally_membership_rebuilds_total',
      help: 'Rebuilds of membership counters, by result (clean, drift, repaired)',
      labelNames: ['result'],
      registers: [registry],
    }),
    memberSets: new Counter({
      name: 'tally_member_set_requests_total',
      help: 'SetMember calls, by whether they flipped the member',
      labelNames: ['changed'],
      registers: [registry],
    }),
    distinctMembersAdded: new Counter({
      name: 'tally_distinct_members_added_total',
      help: 'Members AddDistinct received (seen before or not)',
      registers: [registry],
    }),
    reconcileDrift: new Gauge({
      name: 'tally_reconcile_drift',
      help: 'Absolute drift found by the last reconciliation, by pair and kind',
      labelNames: ['pair', 'kind'],
      registers: [registry],
    }),
  };
}

/** Heat and automatic sizing (top-K counter series only). */
function heatMetrics(registry: Registry) {
  return {
    counterRate: new Gauge({
      name: 'tally_hot_increments_per_second',
      help: 'Smoothed increments/s of the top-K hottest counters (K = --top-k)',
      labelNames: ['counter'],
      registers: [registry],
    }),
    counterShards: new Gauge({
      name: 'tally_hot_shards',
      help: 'Shard count of the top-K hottest counters',
      labelNames: ['counter'],
      registers: [registry],
    }),
    counterSkew: new Gauge({
      name: 'tally_hot_shard_skew',
      help: 'Max shard rate / mean shard rate of the top-K hottest counters',
      labelNames: ['counter'],
      registers: [registry],
    }),
    otherCountersRate: new Gauge({
      name: 'tally_other_counters_increments_per_second',
      help: 'Increments/s of every counter outside the top K, summed',
      registers: [registry],
    }),
    trackedCounters: new Gauge({ name: 'tally_heat_tracked_counters', help: 'Counters with measurable heat', registers: [registry] }),
    heatRefusals: new Counter({
      name: 'tally_heat_touches_refused_total',
      help: 'Increments of counters a full heat table did not take: not yet warm enough (count-min admission)',
      registers: [registry],
    }),
    heatEvictions: new Counter({
      name: 'tally_heat_counters_evicted_total',
      help: 'Counters whose heat was forgotten to stay within --heat-counters-max (least recently incremented first)',
      registers: [registry],
    }),
    shardSkewMax: new Gauge({
      name: 'tally_shard_skew_max',
      help: 'Highest shard skew among the top-K multi-shard counters',
      registers: [registry],
    }),
    shardGrowths: new Counter({
      name: 'tally_shard_growths_total',
      help: 'Shard set growths, by cause',
      labelNames: ['cause'],
      registers: [registry],
    }),
  };
}

/** Load the router carries now, and calls refused before their message. */
function loadMetrics(registry: Registry) {
  return {
    callsInFlight: new Gauge({ name: 'tally_router_calls_in_flight', help: 'Calls the router is serving now', registers: [registry] }),
    streamBatchesInFlight: new Gauge({
      name: 'tally_router_stream_batches_in_flight',
      help: 'IncrementStream batches the router is working on now, over all streams',
      registers: [registry],
    }),
    callsRefused: new Counter({
      name: 'tally_router_calls_refused_total',
      help: 'Calls refused on their headers, before their message was read, by reason (unauthenticated, permission_denied, busy)',
      labelNames: ['reason'],
      registers: [registry],
    }),
  };
}

/** Counter lifecycle and supervision. */
function lifecycleMetrics(registry: Registry) {
  return {
    // Counter lifecycle.
    countersCleared: new Counter({
      name: 'tally_counters_cleared_total',
      help: 'Clears of counters (a keyed retry of a clear already made is not counted)',
      registers: [registry],
    }),
    shardTasksPending: new Gauge({
      name: 'tally_shard_tasks_pending',
      help: 'Shards whose node has not yet confirmed a drop (deleted counter) or a clear, by kind; the router keeps sending them',
      labelNames: ['kind'],
      registers: [registry],
    }),
    // Several routers.
    supervisor: new Gauge({
      name: 'tally_router_supervisor',
      help: '1 while this router is the pair supervisor (always with the embedded directory; the elected one with etcd)',
      registers: [registry],
    }),
  };
}

/** Every router metric, registered in this order (the order /metrics lists them). */
export function createRouterMetrics(registry: Registry) {
  return {
    ...callMetrics(registry),
    ...nodeCallMetrics(registry),
    ...cacheMetrics(registry),
    ...directoryMetrics(registry),
    ...pairMetrics(registry),
    ...kindMetrics(registry),
    ...heatMetrics(registry),
    ...loadMetrics(registry),
    ...lifecycleMetrics(registry),
  };
}
export type RouterMetrics = ReturnType<typeof createRouterMetrics>;
