// The shard node's Prometheus metrics.
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { batchSizeBuckets, latencyBucketsSeconds, registerRpcCounter } from '../common/index.ts';

export function createNodeMetrics(registry: Registry) {
  // Registered in this order: /metrics lists them so.
  return { ...callMetrics(registry), ...commitMetrics(registry), ...stateMetrics(registry) };
}
export type NodeMetrics = ReturnType<typeof createNodeMetrics>;

/** Calls, increments and the dedup index's keys. */
function callMetrics(registry: Registry) {
  return {
    rpcStatus: registerRpcCounter(registry),
    streamFrames: new Counter({
      name: 'tally_node_stream_frames_total',
      help: 'Frames answered on the router streams (ApplyStream, ReadShardsStream), by method and gRPC status code; tally_rpc_total counts each stream once, when it ends',
      labelNames: ['method', 'code'],
      registers: [registry],
    }),
    incrementsApplied: new Counter({
      name: 'tally_node_increments_applied_total',
      help: "Increments committed to this node's log",
      registers: [registry],
    }),
    incrementsDeduplicated: new Counter({
      name: 'tally_node_increments_deduplicated_total',
      help: 'Keyed increments (and key fences) answered as duplicates of an earlier key',
      registers: [registry],
    }),
    dedupKeys: new Gauge({
      name: 'tally_dedup_keys',
      help: 'Idempotency keys held in memory (the recent part of the dedup window)',
      registers: [registry],
    }),
    dedupEvictedEarly: new Counter({
      name: 'tally_dedup_keys_evicted_early_total',
      help: 'Keys dropped from memory before their window ended because memory was full (the log on disk still finds them)',
      registers: [registry],
    }),
    dedupCoveredSeconds: new Gauge({
      name: 'tally_dedup_window_covered_seconds',
      help: 'How far back keys are deduplicated: the whole window, memory and disk together',
      registers: [registry],
    }),
    dedupMemoryCoveredSeconds: new Gauge({
      name: 'tally_dedup_memory_covered_seconds',
      help: 'How far back memory alone holds every key; a miss younger than the window is looked up on disk',
      registers: [registry],
    }),
    dedupDiskLookups: new Counter({
      name: 'tally_dedup_disk_lookups_total',
      help: 'Keys missing from memory looked up in the log on disk',
      registers: [registry],
    }),
    replicationEntriesShipped: new Counter({
      name: 'tally_replication_entries_shipped_total',
      help: 'Entries sent to the follower, by where they came from: memory (just committed) or log (catch-up)',
      labelNames: ['source'] as const,
      registers: [registry],
    }),
    dedupPruned: new Counter({
      name: 'tally_dedup_keys_pruned_total',
      help: 'Idempotency keys dropped after the dedup window',
      registers: [registry],
    }),
  };
}

/** Commits, replication lag and the checkpoint. */
function commitMetrics(registry: Registry) {
  return {
    incrementsRejected: new Counter({
      name: 'tally_node_increments_rejected_total',
      help: 'Increment groups this node refused, by reason',
      labelNames: ['reason'],
      registers: [registry],
    }),
    commitBatchRows: new Histogram({
      name: 'tally_log_commit_batch_rows',
      help: 'Log entries per commit (one transaction, one fsync)',
      buckets: batchSizeBuckets,
      registers: [registry],
    }),
    commitSeconds: new Histogram({
      name: 'tally_log_fsync_seconds',
      help: 'Time to commit one log transaction, fsync included',
      buckets: latencyBucketsSeconds,
      registers: [registry],
    }),
    lastLsn: new Gauge({ name: 'tally_log_last_lsn', help: 'Last committed log sequence number', registers: [registry] }),
    shardCount: new Gauge({ name: 'tally_node_shards', help: 'Shards held in memory', registers: [registry] }),
    droppedShards: new Gauge({
      name: 'tally_node_dropped_shards',
      help: 'Tombstones of dropped shards (their counter was deleted) held in memory; each refuses late writes for a week',
      registers: [registry],
    }),
    replicationLagEntries: new Gauge({
      name: 'tally_replication_lag_entries',
      help: 'Primary: log entries its follower has not confirmed',
      registers: [registry],
    }),
    replicationLagSeconds: new Gauge({
      name: 'tally_replication_lag_seconds',
      help: 'Primary: how long the oldest unconfirmed entry has waited, in seconds',
      registers: [registry],
    }),
    checkpointLsn: new Gauge({
      name: 'tally_checkpoint_lsn',
      help: 'Every log entry up to this lsn is folded into the checkpoint',
      registers: [registry],
    }),
    checkpointRows: new Counter({
      name: 'tally_checkpoint_rows_folded_total',
      help: 'Log entries folded into the checkpoint',
      registers: [registry],
    }),
    checkpointSliceSeconds: new Histogram({
      name: 'tally_checkpoint_slice_seconds',
      help: 'Time one checkpoint slice read, block merge step or round write held the event loop',
      buckets: latencyBucketsSeconds,
      registers: [registry],
    }),
  };
}

/** Memory held by kinds, the log's checks and its size. */
function stateMetrics(registry: Registry) {
  return {
    sketchBytes: new Gauge({ name: 'tally_distinct_sketch_bytes', help: 'Memory held by distinct-count sketches', registers: [registry] }),
    memberSetBytes: new Gauge({
      name: 'tally_member_set_bytes',
      help: 'Memory held by membership bitmaps (estimated)',
      registers: [registry],
    }),
    windowBuckets: new Gauge({ name: 'tally_window_buckets', help: 'Window buckets held in memory', registers: [registry] }),
    windowBucketsExpired: new Counter({
      name: 'tally_window_buckets_expired_total',
      help: 'Window buckets dropped after their retention',
      registers: [registry],
    }),
    logCorruptions: new Counter({
      name: 'tally_log_corruptions_total',
      help: 'Times this node found its log damaged, by when: startup (set aside, started empty), replay or running (stopped to be restarted into the check)',
      labelNames: ['found'] as const,
      registers: [registry],
    }),
    scrubRead: new Counter({
      name: 'tally_scrub_read_total',
      help: 'Log entries, checkpoint blocks and checkpoint parts the scrubber has read and checked against their checksums, by kind (its progress)',
      labelNames: ['kind'] as const,
      registers: [registry],
    }),
    scrubPasses: new Counter({
      name: 'tally_scrub_passes_total',
      help: 'Whole passes of the scrubber over the log (every entry kept and every checkpoint block)',
      registers: [registry],
    }),
    scrubMismatches: new Counter({
      name: 'tally_scrub_mismatches_total',
      help: 'Log entries or blocks the scrubber found damaged (a checksum or a check failed); the node then stops and its log is set aside at the next start',
      registers: [registry],
    }),
    logDiscardedTails: new Counter({
      name: 'tally_log_discarded_tails_total',
      help: 'Times this node started on a log whose write-ahead file ended in a commit a crash cut short (never acknowledged; discarded, the log served)',
      registers: [registry],
    }),
    logCheckSeconds: new Gauge({
      name: 'tally_log_check_seconds',
      help: "Time the start-up check of the log took (torn write-ahead tail, SQLite's quick_check of every page)",
      registers: [registry],
    }),
    logSizeBytes: new Gauge({ name: 'tally_log_size_bytes', help: 'Size of the log database file', registers: [registry] }),
    logWalBytes: new Gauge({
      name: 'tally_log_wal_bytes',
      help: "Size of the log's SQLite write-ahead file; grows while a snapshot install holds a read view",
      registers: [registry],
    }),
  };
}
