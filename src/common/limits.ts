// Every bound in Tally, in one place. Processes and the client import these;
// nothing else hard-codes a limit.
// The bounds the client library shares with the servers live in
// src/wire/checks/client-limits.ts (the client package ships that file,
// never this one).
import { messageBytesMax, counterNameBytesMax, idempotencyKeyBytesMax, batchItemsMax, readManyCountersMax } from '../wire/index.ts';

/**
 * Default cap on the counters one router's directory holds (--counters-max).
 * The router keeps every counter in memory (~140 bytes for a one-shard
 * counter at 10M: its name, a Map entry and its typed-array columns) and
 * reads them all at start (~8 us each): 1M is ~0.14 GB and ~8 s of start-up.
 */
export const countersMax = 1_000_000;
/**
 * Default cap on the shards of all counters (--shards-total-max): creation
 * and growth stop there. A membership counter costs its partitions (16 by
 * default) and growth adds shards to a counter. An extra shard costs the
 * router ~46 bytes and the node holding it ~53 bytes of totals: 4M leaves
 * room for 1M counters plus 3M shards of partitions and growth, ~0.15 GB
 * more on the router and ~0.2 GB on a single pair's nodes.
 */
export const shardsTotalMax = 4_000_000;

// --- Directory on etcd: EtcdDirectory ---
/**
 * Operations one etcd transaction may hold. Creating newCountersPerCallMax
 * counters is one transaction of that many compares and puts, and deleting
 * or clearing a counter of shardsPerCounterMax shards one of as many task
 * puts: etcd's default (--max-txn-ops 128) is far too few, so the launcher
 * and the tests start etcd with this, and an operator's etcd needs at least
 * this (--max-txn-ops 2048). A larger delete splits into transactions of
 * whole counters.
 */
export const etcdTxnOpsMax = 2_048;
/**
 * Bytes (estimated) of new counters one creation transaction carries when it
 * gathers several calls: well under etcd's default request limit (1.5 MiB).
 * One call's counters always go together, whatever their size.
 */
export const etcdTxnBytesMax = 1024 * 1024;
/** Deadline of one etcd call (a transaction, a range page, a lease keepalive): past it the change fails UNAVAILABLE. */
export const etcdCallTimeoutMs = 2_000;
/** Keys one page of the directory's load reads from etcd (halved while a page is larger than a gRPC message may be). */
export const etcdRangePageKeysMax = 1_000;
/**
 * How long a change committed to etcd waits to reach this router's memory
 * through its watch before failing UNAVAILABLE (the change stands; the
 * watch delivers it when it is back).
 */
export const directoryWatchApplyTimeoutMs = 5_000;
/**
 * Times one change is planned again after its compare failed (another
 * router changed a key it read first); past it the change fails
 * UNAVAILABLE. Changes of one router never race each other (they run one
 * at a time, creations batched), so only other routers can cost attempts.
 */
export const directoryChangeAttemptsMax = 8;
/**
 * A growth is announced (read, not written) until every live router has
 * acknowledged it; the grower waits at most the router lease TTL plus this
 * (a dead router's presence is gone after the TTL), then fails UNAVAILABLE
 * and leaves the growth announced for the next pass.
 */
export const growthActivationMarginMs = 2_000;
/**
 * Heartbeat writes of a router's presence key per lease TTL: each proves the
 * router's directory current once its watch brings it back, and a router
 * vouches for its copy only while such a proof is younger than the lease
 * TTL, below the acknowledgement wait (TTL + growthActivationMarginMs) by
 * the margin (see etcd-presence.ts). At 3, two heartbeats in a row may fail
 * before a router stops serving exact reads and writes.
 */
export const currencyProofsPerLeaseTtl = 3;
/**
 * Keys of recent keyed clears one counter remembers in the etcd store (they
 * live in its value, rewritten by every change of the counter). Past it the
 * oldest are forgotten early: a retry with such a key would clear again.
 */
export const clearKeysPerCounterMax = 100;
/**
 * Shard ids a router takes from etcd's shard-id-next at once (one
 * conditioned transaction), then hands out from memory: if every creation
 * allocated from shard-id-next itself, every creation through every router
 * would conflict with every other (measured: two routers creating counters
 * together lost 8 compares in a row within seconds). Ids a router reserved
 * and did not use are never handed out (a restart leaves a gap; ids are
 * never reused, not dense).
 */
export const shardIdsPerReservation = 1_000;
/** The directory's etcd watch reconnects after this, doubling up to etcdWatchReconnectMaxMs while etcd stays away. */
export const etcdWatchReconnectMinMs = 50;
export const etcdWatchReconnectMaxMs = 1_000;
/** Pause before a presence write or a registration with etcd is tried again. */
export const etcdRetryDelayMs = 250;

// --- Counter lifecycle: listing ---
/** Counters in one ListCounters page when the request says 0. */
export const listPageSizeDefault = 100;

// --- Counter lifecycle: expiry ---
/** Shortest time to live (Configure ttl, --counter-ttl-ms). */
export const counterTtlMsMin = 1_000;
/** Longest time to live: 10 years (far inside a safe integer of milliseconds). */
export const counterTtlMsMax = 10 * 365 * 86_400_000;
/** How often the router's expiry sweeper runs one slice. */
export const expirySweepIntervalMs = 100;
/**
 * Counters one expiry slice checks (two property reads and a subtraction
 * each): a slice holds the event loop ~0.25 ms (p50 over 1M counters; p99
 * 8 ms, a GC landing in it). At 10 slices a second a full pass over 1M
 * counters takes 10 s, and that pass bounds how late an expiry is found.
 */
export const expiryChecksPerSweep = 10_000;
/**
 * Expired counters deleted per second at most: each slice hands at most
 * this / (1000 / expirySweepIntervalMs) names to the deleter, one batch, so
 * a burst of expiries (10,000 counters idle since the same hour) becomes a
 * steady trickle of small deletions, not a stall.
 */
export const expiryDeletesPerSecondMax = 500;

/** Node pairs one router may address. */
export const pairsMax = 64;
// --- Launcher: several routers on a local etcd ---
/** Routers `npm start -- --routers N` runs; each takes a port (--port + i) and a metrics port. */
export const launcherRoutersMax = 8;
/**
 * Restarts of one child (router, node or etcd) the launcher allows within
 * launcherRestartWindowMs; one more takes the cluster down with a clear
 * message instead of spinning on a process that cannot start.
 */
export const launcherRestartsPerWindowMax = 5;
export const launcherRestartWindowMs = 60_000;
/** Wait before the first restart of a child; each further restart within the window doubles it, up to the max. */
export const launcherRestartBackoffMs = 1_000;
export const launcherRestartBackoffMaxMs = 8_000;
/** Items one router-to-node Apply call carries; further items wait for the next call. */
export const applyItemsPerCallMax = 20_000;
/** Router-to-node calls in flight per node; later increments coalesce behind them. */
export const nodeCallsInFlightMax = 2;

/**
 * Frames one router keeps in flight on one node's ReadShardsStream; later
 * reads wait in the stream's queue (bounded by nodeStreamQueuedFramesMax).
 * Apply frames are fewer: nodeCallsInFlightMax, with coalescing behind them.
 */
export const nodeStreamFramesInFlightMax = 64;
/** Encoded bytes (estimated) of frames one router keeps in flight on one node stream: flow control by bytes. */
export const nodeStreamBytesInFlightMax = 8 * 1024 * 1024;
/** Frames waiting for room on one node stream before the router refuses more (RESOURCE_EXHAUSTED, nothing sent). */
export const nodeStreamQueuedFramesMax = 10_000;
/**
 * Ceiling on a frame's deadline (the caller's timeout: --node-call-timeout-ms
 * for Apply, --read-timeout-ms for reads). A frame not answered by then
 * fails its callers with an unknown outcome and the stream is abandoned and
 * reopened: a stalled stream is never left to grpc keepalive.
 */
export const nodeStreamFrameDeadlineMsMax = 60_000;
/**
 * Frames a node works on at once for one stream; a frame beyond it is
 * answered RESOURCE_EXHAUSTED (nothing applied). Above what a router sends
 * (nodeStreamFramesInFlightMax), so only a misbehaving peer meets it.
 */
export const nodeStreamFramesInProgressMax = 256;
/** Increments queued for one node before the router sheds load (RESOURCE_EXHAUSTED). */
export const nodeQueueItemsMax = 200_000;
/**
 * The google.rpc.RetryInfo delay of a call refused as busy (calls in flight
 * at the server's cap, a node's queue full): short, since a slot frees as
 * soon as one call ends (node calls take milliseconds), and callers add
 * their own jitter. Nothing of such a call was applied.
 */
export const busyRetryDelayMs = 100;
/**
 * The RetryInfo delay of an increment refused UNAVAILABLE with nothing sent
 * (no live shard could take it even after the failover wait): a failover
 * takes about the router's --failover-timeout-ms (2 s by default).
 */
export const unavailableRetryDelayMs = 1_000;
/** Rows a node reads per step while replaying its log. */
export const replayBatchRows = 10_000;
/** Log entries one AppendEntries call carries from a primary to its follower. */
export const replicationBatchEntriesMax = 5_000;
/**
 * Entries a primary keeps in memory, just committed and not yet confirmed by
 * its follower, to ship without reading the log back. A follower further
 * behind is sent entries read from the log (catch-up).
 */
export const replicationMemoryEntriesMax = 50_000;
/** Bytes (estimated as on the wire) of those entries: sketch rows are large. */
export const replicationMemoryBytesMax = 16 * 1024 * 1024;
/** Bytes of stored records one ReplicateStream frame carries at most (a frame is one follower transaction, one fsync). */
export const replicationFrameBytesMax = 256 * 1024;
/** Log entries one ReplicateStream frame carries at most: one follower transaction (one fsync) each, so more than a unary call. */
export const replicationFrameEntriesMax = 20_000;
/** Frames a primary keeps in flight on its ReplicateStream: its log read and the follower's write overlap. */
export const replicationFramesInFlightMax = 8;
/** Bytes of records in flight on a ReplicateStream at most: what a stalled follower's connection may hold. */
export const replicationBytesInFlightMax = 2 * 1024 * 1024;
/**
 * How far (in log entries) a follower may be behind its primary's head for
 * the supervisor to try marking the pair in sync, as long as it confirms
 * within the follower timeout: what the primary ships from memory. One
 * shipment was too tight: under steady load a follower catching up streams
 * at about the rate the primary writes (they share the cores), so it trailed
 * by several shipments for good and the pair never rejoined. Trying costs a
 * stall of at most the catch-up timeout: SetRole(syncRequired) makes new
 * commits wait for the follower, which then drains the rest.
 */
export const inSyncGapEntriesMax = replicationMemoryEntriesMax;
/**
 * How far (in log entries) an out-of-sync primary lets a streaming follower
 * trail before it paces its answers (Replicator.paceWhileCatchingUp): well
 * inside inSyncGapEntriesMax, so a paced pair is one the supervisor marks in
 * sync.
 */
export const catchUpTrailEntriesMax = 10_000;
/** The most one answer waits, paced, for a follower catching up. */
export const catchUpPaceMaxMs = 25;
/**
 * Default bound on the idempotency keys one node holds in memory (~200 bytes
 * each: ~200 MB); a node sets its own with --dedup-keys-in-memory-max. Past
 * it the oldest keys leave memory (tally_dedup_keys_evicted_early_total) and
 * are looked up in the log on disk, which keeps them for the whole window.
 * 1M rather than more: a restart loads them at ~6 us each (6 s), and most
 * retries come within seconds, well inside what memory holds.
 */
export const dedupKeysInMemoryMax = 1_000_000;

// Bounded caches and queues: every map the router or a node
// grows from requests has a bound here or in its flag's default, and drops its
// oldest or least used entry in O(1) (src/common/lru-map.ts, fifo.ts).
/**
 * Default bound on the counters the router tracks heat for (--heat-counters-max).
 * Each autoscale tick visits every tracked counter and sorts them (about 5 ms
 * at 10,000); a counter hot enough to need more shards is incremented so often
 * it is never the least recently incremented one the bound evicts.
 */
export const heatCountersMax = 10_000;
/**
 * Increments a counter must gather lately (a count-min sketch, halved at
 * every heat sample) before it may take a place in a full heat table: a
 * counter touched once or twice among millions never evicts one that is
 * warm, and any counter sizing cares about (thousands a second) passes at
 * its first batch.
 */
export const heatAdmitIncrements = 16;
/** Cells per row of the heat admission sketch (4 rows of 16-bit cells: 256 KiB). */
export const heatAdmitSketchWidth = 32_768;
/** Hottest counters one AdminService.Hot call lists; the router keeps no more of its last ranking. */
export const hotCountersListedMax = 1_000;
/**
 * Commits a primary remembers (lsn and time) until its follower confirms them:
 * the replication lag is the age of the oldest. A follower further behind is
 * measured by the oldest remembered; one entry per commit, not per increment.
 */
export const replicationUnconfirmedCommitsMax = 100_000;

/**
 * Rows a checkpoint fold reads per slice: the unit its steps are made of (an
 * entry is a row, a packed component entry as many as it carries).
 */
export const checkpointSliceRows = 1_000;

/**
 * Region components a node logs in one packed entry: a receiving region's
 * batch (up to 512) is logged as several, so a reader that takes the log a
 * number of entries at a time (scrubber, reconcile, export) stays bounded.
 */
export const packedComponentRowsPerEntryMax = 64;
/**
 * Event-loop time one step of a checkpoint fold holds before it yields to
 * the commits queued behind it. A fold at a million shards is hundreds of
 * ms of work: in steps of 5,000 rows and 256 blocks, each held the loop for
 * tens of ms and a commit arriving during a fold waited for one.
 */
export const checkpointStepMs = 3;
/** Steps a second the log scrubber takes its rate in: each reads a tenth of --scrub-entries-per-second, the event loop free between. */
export const scrubStepsPerSecond = 10;
/**
 * Log entries one checkpoint write folds at most (one transaction, each
 * touched shard written once). Larger rounds write fewer bytes on a spread
 * workload (a page of the checkpoint table per round, not per slice) but hold
 * the event loop longer while they commit.
 */
export const checkpointRoundRowsMax = 100_000;
/**
 * Checkpoint blocks (256 shard ids each) a round merges its totals into per
 * call before it commits (a step is several calls, checkpointStepMs): at a
 * million shards a round touches all ~3,900, and merging them inside the
 * commit held the event loop for most of its time.
 */
export const checkpointMergeBlocksMax = 32;
/** Concurrent calls one client connection may have open on a server (HTTP/2 streams). */
export const streamsPerConnectionMax = 1_000;
/** Window shards the background expiry visits per second on a node. */
export const windowShardsPerSweep = 1_000;
/** Members in one AddDistinct or IsMember call. */
export const distinctMembersMax = 10_000;
/** Bytes of one distinct member. */
export const distinctMemberBytesMax = 1_024;
/** Counters in one CountDistinct. */
export const countDistinctCountersMax = 100;
/** Partitions a membership counter may have (fixed at creation). */
export const memberPartitionsMax = 256;
/**
 * Bytes one router-to-node Apply or one AppendEntries may carry (estimated),
 * half the message limit: items with large payloads (sketch registers) stop
 * a batch before it could exceed messageBytesMax.
 */
export const nodeCallBytesMax = messageBytesMax / 2;

// — Calls a server holds (security issue). A call beyond these is refused
// RESOURCE_EXHAUSTED on its headers, before its message is read.

/** Calls a router serves at once, of every method. */
export const routerCallsInFlightMax = 1_000;
/**
 * Of those, calls of methods whose message may be megabytes (IncrementBatch,
 * AddDistinct, ReadMany, IsMember, CountDistinct): each may hold its whole
 * message, so this times messageBytesMax (128 × 4 MiB = 512 MiB) bounds
 * what a flood by a token holder can make the router hold.
 */
export const routerLargeCallsInFlightMax = 128;
/** HTTP/2 memory one connection may use before the server refuses its new streams (grpc-node.max_session_memory, in MiB). */
export const sessionMemoryMaxMiB = 64;
/** Default ceiling on any call's deadline: a call without one, or a later one, ends DEADLINE_EXCEEDED after this. */
export const callDeadlineMaxMs = 60_000;
/** Bytes of a request naming one counter with scalar fields (Increment, Read, Describe, Configure, ...). */
export const singleRequestBytesMax = 4 * 1024;
/** Protobuf framing one repeated element may add: field tag, length prefix, a nested message's own tags. */
const elementFramingBytesMax = 16;
/** The largest request of each public method that carries a list; any other public method: singleRequestBytesMax. */
export const listRequestBytesMax: Readonly<Record<string, number>> = {
  IncrementBatch: Math.min(messageBytesMax, batchItemsMax * (counterNameBytesMax + idempotencyKeyBytesMax + elementFramingBytesMax + 10)),
  ReadMany: readManyCountersMax * (counterNameBytesMax + elementFramingBytesMax) + singleRequestBytesMax,
  AddDistinct: Math.min(messageBytesMax, distinctMembersMax * (distinctMemberBytesMax + elementFramingBytesMax) + singleRequestBytesMax),
  IsMember: distinctMembersMax * (20 + elementFramingBytesMax) + singleRequestBytesMax,
  CountDistinct: countDistinctCountersMax * (counterNameBytesMax + elementFramingBytesMax) + singleRequestBytesMax,
};

/**
 * Stream batches one router works on at once over all its streams (like
 * routerLargeCallsInFlightMax for unary calls: this times the largest batch
 * bounds what streams make the router hold); beyond it a batch is answered
 * RESOURCE_EXHAUSTED as above. A stream itself is one call in flight.
 */
export const routerStreamBatchesInFlightMax = 128;
/** The largest message of an IncrementStream: an IncrementBatch's bound and its sequence number. */
export const incrementStreamMessageBytesMax = (listRequestBytesMax.IncrementBatch ?? messageBytesMax) + 16;
/**
 * ReadStream pages one router works on at once over all its streams (as
 * routerLargeCallsInFlightMax bounds unary ReadMany calls); beyond it a page
 * is answered RESOURCE_EXHAUSTED by its sequence number.
 */
export const routerReadStreamPagesInFlightMax = 128;
/** The largest message of a ReadStream: a ReadMany's bound and its sequence number. */
export const readStreamMessageBytesMax = (listRequestBytesMax.ReadMany ?? messageBytesMax) + 16;

// --- Counter lifecycle: delete and clear ---
/**
 * How long a node keeps a dropped shard's tombstone (memory, checkpoint,
 * snapshot). Shard ids are never reused, so a tombstone is only needed
 * against an increment routed before its counter's delete and still on its
 * way: a router's node call ends after --node-call-timeout-ms and any call
 * at --call-deadline-max-ms (60 s). A week is thousands of times that, and
 * keeps the cost bounded: ~40 bytes of node memory and one checkpoint row
 * per dropped shard, for a week.
 */
export const droppedShardTombstoneMs = 7 * 24 * 60 * 60 * 1_000;
/** Tombstones a node's housekeeping looks at per second when forgetting expired ones. */
export const tombstoneVisitsPerSweep = 10_000;
/** Shards the router asks nodes to drop or clear in one Apply group (a counter has at most shardsPerCounterMax). */
export const lifecycleShardsPerCallMax = 1_024;
/**
 * Drops and clears one retry round (every second) sends a pair at most:
 * 8 groups. A pair back after hours away is worked off at ~8,000 a second
 * rather than in one round that would hold the router's event loop.
 */
export const lifecycleTasksPerPairPerRoundMax = 8 * lifecycleShardsPerCallMax;
/** How often the router re-sends drops and clears a node has not confirmed (its pair had no reachable primary). */
export const lifecycleRetryIntervalMs = 1_000;
/**
 * Times a read is taken again because a clear of its counter overtook it (a
 * shard answered at a newer generation than the read named). One retry
 * settles it unless the counter is cleared again meanwhile; past this the
 * read fails UNAVAILABLE rather than mix cleared and uncleared shards.
 */
export const clearOvertakenReadsMax = 4;

// --- Several routers: supervisor election and router flags ---
/** Shortest router lease (--router-lease-ttl-ms): etcd leases are whole seconds, at least one. */
export const routerLeaseTtlMsMin = 1_000;
/** Longest router lease: a dead supervisor is replaced only once its lease runs out, so keep it short. */
export const routerLeaseTtlMsMax = 60_000;
/** Bytes of a router id (--router-id): an etcd key segment and a line of tally status. */
export const routerIdBytesMax = 256;
/** Bytes of a zone name (--zone): a Kubernetes label value's limit. */
export const zoneBytesMax = 63;
/** Bytes of --etcd-prefix: every key of the directory starts with it. */
export const etcdPrefixBytesMax = 256;
/** Endpoints --etcd may list (members of one etcd cluster). */
export const etcdEndpointsMax = 16;
/**
 * Keepalives (and campaign checks) the supervisor election sends per lease
 * TTL. It steps down once half a TTL passes without a confirmed keepalive,
 * so three tries fit before it gives up leading; one late answer is not a
 * step-down.
 */
export const supervisorKeepalivesPerTtl = 6;

/** How long a router relays one pair's snapshot to a backup: inside a node's callDeadlineMaxMs. */
export const backupPairStreamTimeoutMs = 55_000;

// Regions (docs/regions.md)

/** Peer regions one cluster exchanges components with: every publisher keeps a stream to each. */
export const peerRegionsMax = 16;
/** Router addresses --peer-regions may give one peer region. */
export const peerRegionAddressesMax = 8;
/** Components in one batch between regions: a batch is one message and one durable write per shard group. */
export const regionBatchComponentsMax = 512;
/** Component bytes in one batch between regions: sketches are large, and a batch is one gRPC message. */
export const regionBatchBytesMax = 1_048_576;
/** Default interval between a publisher's rounds of reading changed counters. */
export const regionPublishIntervalMsDefault = 500;
/** Wait before a dead link to a peer region is tried again (doubled up to regionReconnectMaxMs). */
export const regionReconnectMinMs = 200;
export const regionReconnectMaxMs = 5_000;
/** Global totals a router remembers to keep a peer's part from going backwards; the least recently read is forgotten. */
export const regionFloorCountersMax = 100_000;
/** Default of --region-tombstone-retention-ms: how long a deleted name's tombstone outlives its counter (7 days). */
export const regionTombstoneRetentionMsDefault = 7 * 24 * 60 * 60 * 1000;
/** Bounds of --region-tombstone-retention-ms: a minute, a year. */
export const regionTombstoneRetentionMsMin = 60_000;
export const regionTombstoneRetentionMsMax = 366 * 24 * 60 * 60 * 1000;
/** How often a router forgets tombstones past retention. */
export const regionTombstonePruneIntervalMs = 60_000;
/** Clears a region makes in one go to catch up with a peer's clears of one counter; past it the component is refused. */
export const regionClearStepsMax = 64;
/**
 * Every this many rounds the region publisher reads every total counter,
 * not only those written through its own router: a write through another
 * router of the region (etcd) reaches the peers within this many rounds.
 */
export const regionFullSweepRounds = 20;
/** A peer region that holds a batch unanswered this long is treated as a dead link (the stream is opened again and resumes). */
export const regionAnswerTimeoutMs = 30_000;
/**
 * Shard changes a node remembers for the region feed (ChangedShards): a ring
 * of shard ids, 8 bytes each, allocated on the feed's first call. A
 * publisher whose position fell out of it gets a full answer instead.
 */
export const regionFeedRingEntries = 1 << 19;
/** Shards in one ChangedShards answer: 20 bytes each on the wire, well under messageBytesMax. */
export const regionFeedShardsMax = 100_000;
/** ChangedShards calls a publisher makes to one pair in one round (more=true continues next round). */
export const regionFeedCallsPerRoundMax = 8;
/** Batches a link to a peer region keeps unanswered at once: a link catching up is not one round trip per batch. */
export const regionLinkBatchesInFlightMax = 8;
/** Batches one RegionLink stream may have being stored at once on the receiver (a sender keeps at most regionLinkBatchesInFlightMax). */
export const regionReceiverBatchesStoringMax = 4 * regionLinkBatchesInFlightMax;
/** Batches of one RegionLink stream a receiver stores at once (the rest wait their turn, answered in order). */
export const regionReceiverBatchesStoringAtOnce = 2;
