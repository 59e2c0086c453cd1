// The ShardNode gRPC service: decodes and checks calls from the router and
// from the pair's primary, hands increments to group commit, answers reads
// from memory. It never acknowledges an increment before its log commit (and
// the follower's, while the pair is in sync), and never acts on a stale epoch.
import assert from 'node:assert/strict';
import { status } from '@grpc/grpc-js';
import type { handleUnaryCall } from '@grpc/grpc-js';
import { ErrorCode, TallyError, isInt64, toServiceError } from '../wire/index.ts';
import { unary, applyItemsPerCallMax, type Logger, type shardV1 } from '../common/index.ts';
import { peerProtocolOf, shardProtocolRefusal, shardProtocolStamp, packComponents } from '../wire/internal/index.ts';
import type { GroupCommitter, ApplyEntry } from './group-commit.ts';
import {
  type DedupIndex,
  type NodeMemory,
  refusalOf,
  saveRole,
  type Role,
  type RoleOrder,
  type RoleState,
  type NodeState,
  rebuildMemory,
} from './state/index.ts';
import { EntryKind, type ShardLog } from './log/index.ts';
import { HllSketch } from '../sketch/index.ts';
import type { NodeMetrics } from './node-metrics.ts';
import { type Replicator, createFollower } from './replication/index.ts';
import { decodeGroup, packedIncrementCount, parseShardId } from './request-decoding.ts';
import type { LeanReadShardsRequest, ReadShardsAnswer } from '../wire/internal/index.ts';
import { serveFrames, type FrameStreams } from './frame-streams.ts';
import { createSnapshotExport } from './snapshot-export.ts';

const emptyKey = Buffer.alloc(0);

export function createNodeService(deps: {
  state: NodeState;
  log: ShardLog;
  memory: NodeMemory;
  committer: GroupCommitter;
  replicator: Replicator;
  dedup: DedupIndex;
  dedupWindowMs: number;
  /** The node's log clock (steadyWallClock): entry times and the dedup window are measured on it. */
  logClock: () => number;
  /** How long a read waits for the follower to confirm what it answers. */
  replicationTimeoutMs: number;
  metrics: NodeMetrics;
  logger: Logger;
  /** What this node says of itself in Status: its failure domain and the address its partner replicates to ('' = its own). */
  zone: string;
  replicationAddress: string;
  /** The streams served, so a shutdown can end them. */
  streams: FrameStreams;
  /** Folds the checkpoint as far as is safe now (a backup's snapshot waits for it). */
  foldNow: () => Promise<void>;
}) {
  const { state, log, memory, committer, replicator, dedup, metrics, logger } = deps;
  const { totals } = memory;
  const requireReady = (): void => {
    if (!state.ready) throw new TallyError(ErrorCode.unavailable, 'node is not ready (replaying its log or shutting down)');
  };
  /** Reads and reconciliation need the whole log: not while a snapshot install has emptied it. */
  const requireWholeLog = (): void => {
    requireReady();
    if (log.installing) throw new TallyError(ErrorCode.unavailable, 'a snapshot install is under way: this node holds an incomplete log');
  };

  const statusOf = (): shardV1.StatusResponse__Output => {
    const replication = replicator.status();
    const isPrimary = state.role.role === 'primary';
    return {
      role: state.role.role,
      pid: process.pid,
      lastLsn: log.lastLsn.toString(),
      shardCount: String(totals.shardCount),
      epoch: state.role.epoch.toString(),
      ready: state.ready,
      peer: state.role.peer,
      syncRequired: state.role.syncRequired,
      followerAckedLsn: isPrimary ? replication.ackedLsn.toString() : '0',
      followerCaughtUp: isPrimary && replication.caughtUp,
      followerError: isPrimary ? replication.lastError : '',
      replicationLagMs: String(isPrimary ? Math.max(0, Math.round(replication.lagMs)) : 0),
      epochStartLsn: state.role.epochStartLsn.toString(),
      nodeId: log.nodeId,
      lastEpoch: log.lastEpoch.toString(),
      checkpointLsn: log.checkpointLsn.toString(),
      followerId: isPrimary ? replication.followerId : '',
      installing: log.installing,
      configVersion: state.role.configVersion.toString(),
      followerLostEntries: isPrimary && replication.followerLostEntries,
      followerAhead: isPrimary && replication.followerAhead,
      protocol: { current: shardProtocolStamp.current!, oldest: shardProtocolStamp.oldest! },
      zone: deps.zone,
      replicationAddress: deps.replicationAddress,
    };
  };

  /**
   * Reads at the generations the router tagged each shard with (none: 0). A
   * shard at an older generation has not seen its counter's clear yet: it
   * reads as empty. One at a newer generation is named in
   * newerGenerationIndexes: a clear overtook the read, which the router
   * takes again, so a read never mixes cleared and uncleared shards.
   */
  const generationsOf = (
    ids: readonly number[],
    tagged: readonly (string | number | bigint)[],
  ): { visible: (index: number) => boolean; newerGenerationIndexes: number[] } => {
    if (tagged.length !== 0 && tagged.length !== ids.length)
      throw new TallyError(ErrorCode.invalidArgument, `${tagged.length} generations for ${ids.length} shards`);
    // The common case: no counter read was ever cleared, and no shard here was.
    if (tagged.length === 0 && memory.clearedShardCount === 0) return { visible: () => true, newerGenerationIndexes: [] };
    const visible: boolean[] = new Array(ids.length);
    const newerGenerationIndexes: number[] = [];
    ids.forEach((id, index) => {
      const wanted = tagged.length === 0 ? 0 : Number(tagged[index]);
      if (!Number.isSafeInteger(wanted) || wanted < 0)
        throw new TallyError(ErrorCode.invalidArgument, `generation ${tagged[index]} is invalid`);
      const held = memory.generationOf(id);
      visible[index] = held >= wanted;
      if (held > wanted) newerGenerationIndexes.push(index);
    });
    return { visible: (index) => visible[index]!, newerGenerationIndexes };
  };

  const readMeta = () => ({ lsn: log.lastLsn.toString(), role: state.role.role, epoch: state.role.epoch.toString(), nodeId: log.nodeId });

  /**
   * Reads answer only what a failover can no longer drop (G3: a total never
   * goes backwards). Values are taken now; while the pair is in sync the
   * answer waits until the follower holds everything up to now.
   */
  const confirmed = async <T>(values: T): Promise<T> => {
    const refusal = state.role.role === 'primary' ? replicator.refusal() : undefined;
    if (refusal !== undefined) throw new TallyError(ErrorCode.unavailable, refusal);
    if (state.role.role === 'primary' && state.role.syncRequired) await replicator.waitForAck(log.lastLsn, deps.replicationTimeoutMs);
    return values;
  };

  const follower = createFollower({
    state,
    log,
    memory,
    dedup,
    metrics,
    logger,
    rebuild: () => rebuildMemory(log, memory, dedup, deps.logClock(), deps.dedupWindowMs),
  });

  const waitUntilCaughtUp = async (timeoutMs: number): Promise<void> => {
    await replicator.waitForAck(log.lastLsn, timeoutMs);
  };

  /** Apply's body, for the unary call and for each ApplyStream frame alike. */
  const apply = async (request: shardV1.ApplyRequest__Output): Promise<shardV1.ApplyResponse__Output> => {
    requireReady();
    const epoch = BigInt(request.epoch);
    if (state.role.role !== 'primary' || epoch !== state.role.epoch) {
      metrics.incrementsRejected.inc({ reason: 'stale_epoch' });
      throw new TallyError(ErrorCode.failedPrecondition, `stale epoch: request ${epoch}, node ${state.role.role} at ${state.role.epoch}`);
    }
    let itemCount = 0;
    const packedCounts = request.groups.map((group) => {
      const packed = packedIncrementCount(group);
      itemCount += packed.records + group.items.length;
      return packed;
    });
    if (itemCount > applyItemsPerCallMax) {
      throw new TallyError(ErrorCode.resourceExhausted, `apply of ${itemCount} items exceeds ${applyItemsPerCallMax}`);
    }
    const decoded = request.groups.map(decodeGroup);
    const valid = decoded.filter((group): group is ApplyEntry[] => Array.isArray(group));
    const { results, lsn } = valid.length > 0 ? await committer.submit(valid, epoch) : { results: [], lsn: log.lastLsn };
    let next = 0;
    const merged = decoded.map((group, index): shardV1.GroupResult__Output => {
      if (!Array.isArray(group)) return { ...group, packedRecordsApplied: 0 };
      const outcome = results[next++]!;
      if (outcome.code !== status.OK) return { ...outcome, packedRecordsApplied: 0 };
      // Entries are the packed increments, then the items: the answer speaks of the items only.
      const packedCount = packedCounts[index]!.records;
      if (packedCount === 0) return { ...outcome, packedRecordsApplied: 0 };
      return {
        ...outcome,
        applied: outcome.applied.slice(packedCount),
        changed: outcome.changed.slice(packedCount),
        packedRecordsApplied: packedCount,
      };
    });
    for (const [index, outcome] of merged.entries()) {
      if (outcome.code === status.OK) {
        // Increments only: a member set that changes nothing is not a duplicate.
        const items = request.groups[index]!.items;
        let appliedCount = packedCounts[index]!.increments;
        let duplicateCount = 0;
        items.forEach((item, position) => {
          if ((item.op ?? 'INCREMENT') !== 'INCREMENT') return;
          if (outcome.applied[position]) appliedCount++;
          else duplicateCount++;
        });
        metrics.incrementsApplied.inc(appliedCount);
        metrics.incrementsDeduplicated.inc(duplicateCount);
      } else
        metrics.incrementsRejected.inc({
          reason: outcome.code === status.OUT_OF_RANGE ? 'out_of_range' : outcome.code === status.NOT_FOUND ? 'dropped' : 'invalid',
        });
    }
    return { results: merged, lsn: lsn.toString() };
  };

  /** ReadShards' body, for the unary call and for each ReadShardsStream frame alike. */
  // Ids and generations as numbers (read-shards-codec.ts), not decimal strings.
  const readShards = (request: LeanReadShardsRequest): Promise<ReadShardsAnswer> => {
    requireWholeLog();
    const ids = request.shardIds.map(parseShardId);
    const { visible, newerGenerationIndexes } = generationsOf(ids, request.generations);
    const shardTotals = ids.map((id, index) => (visible(index) ? totals.get(id) : 0n));
    return confirmed({
      totals: shardTotals,
      newerGenerationIndexes,
      lsn: log.lastLsn,
      role: state.role.role,
      epoch: state.role.epoch,
      nodeId: log.nodeId,
    });
  };

  const streamed = <Request extends { protocol?: shardV1.ProtocolVersion__Output | null }, Response>(
    method: string,
    handle: (request: Request) => Promise<Response>,
  ) =>
    serveFrames<Request, Response>({
      method,
      handle,
      refusalOf: (request) => protocolRefusalOf(method, request),
      streams: deps.streams,
      onAnswered: (code) => metrics.streamFrames.inc({ method, code: status[code] ?? String(code) }),
    });

  const unaryHandlers = checkProtocol({
    Apply: unary<shardV1.ApplyRequest__Output, shardV1.ApplyResponse__Output>(apply),

    // Read and answered through the lean codecs (read-shards-codec.ts, wired in main.ts): no string per id or total.
    ReadShards: unary<LeanReadShardsRequest, ReadShardsAnswer>(readShards),

    ReadSketches: unary<shardV1.ReadSketchesRequest__Output, shardV1.ReadSketchesResponse__Output>((request) => {
      requireWholeLog();
      const ids = request.shardIds.map(parseShardId);
      const { visible, newerGenerationIndexes } = generationsOf(ids, request.generations);
      const sketchOf = (id: number, index: number): HllSketch | undefined => (visible(index) ? memory.sketch(id) : undefined);
      if (!request.merge)
        return confirmed({
          sketches: ids.map((id, index) => sketchOf(id, index)?.serialize() ?? emptyKey),
          newerGenerationIndexes,
          ...readMeta(),
        });
      const union = new HllSketch();
      ids.forEach((id, index) => {
        const sketch = sketchOf(id, index);
        if (sketch !== undefined) union.mergeFrom(sketch);
      });
      return confirmed({ sketches: [union.serialize()], newerGenerationIndexes, ...readMeta() });
    }),

    ReadWindows: unary<shardV1.ReadWindowsRequest__Output, shardV1.ReadShardsResponse__Output>((request) => {
      requireWholeLog();
      const ids = request.shardIds.map(parseShardId);
      const fromMs = Number(request.fromMs);
      const toMs = Number(request.toMs);
      const bucketMs = Number(request.bucketMs);
      if (!Number.isSafeInteger(fromMs) || !Number.isSafeInteger(toMs) || fromMs > toMs)
        throw new TallyError(ErrorCode.invalidArgument, `bad window [${request.fromMs}, ${request.toMs})`);
      const { visible, newerGenerationIndexes } = generationsOf(ids, request.generations);
      const sums = ids.map((id, index) =>
        visible(index) && memory.windows.configOf(id)?.bucketMs === bucketMs ? memory.windows.sum(id, fromMs, toMs) : 0n,
      );
      // Buckets are int64 each, but a sum of several may not be: say so rather than wrap on the wire.
      if (!sums.every(isInt64)) throw new TallyError(ErrorCode.outOfRange, "a shard's window sum is beyond int64");
      return confirmed({ totals: sums.map(String), newerGenerationIndexes, ...readMeta() });
    }),

    CheckMembers: unary<shardV1.CheckMembersRequest__Output, shardV1.CheckMembersResponse__Output>((request) => {
      requireWholeLog();
      if (request.shardIds.length !== request.members.length)
        throw new TallyError(ErrorCode.invalidArgument, 'shard ids and members differ in length');
      const ids = request.shardIds.map(parseShardId);
      const { visible, newerGenerationIndexes } = generationsOf(ids, request.generations);
      return confirmed({
        present: ids.map((id, index) => visible(index) && memory.hasMember(id, BigInt(request.members[index]!))),
        newerGenerationIndexes,
        ...readMeta(),
      });
    }),

    MemberCounts: unary<shardV1.ReadShardsRequest__Output, shardV1.MemberCountsResponse__Output>((request) => {
      requireWholeLog();
      const ids = request.shardIds.map(parseShardId);
      return confirmed({
        memberCounts: ids.map((id) => String(memory.memberCount(id))),
        totals: ids.map((id) => totals.get(id).toString()),
        ...readMeta(),
      });
    }),

    ReadComponents: unary<shardV1.ReadShardsRequest__Output, shardV1.ReadComponentsResponse__Output>((request) => {
      requireWholeLog();
      const ids = request.shardIds.map(parseShardId);
      return confirmed({
        components: ids.map((id) => packComponents(memory.componentsOf(id)?.values() ?? [])),
        ...readMeta(),
      });
    }),

    Status: unary<shardV1.StatusRequest__Output, shardV1.StatusResponse__Output>(() => statusOf()),

    SetRole: unary<shardV1.SetRoleRequest__Output, shardV1.StatusResponse__Output>(async (request) => {
      requireReady();
      const role = request.role as Role;
      if (role !== 'primary' && role !== 'follower')
        throw new TallyError(ErrorCode.invalidArgument, `role must be primary or follower, got "${request.role}"`);
      const epoch = BigInt(request.epoch);
      const current = state.role;
      const order: RoleOrder = {
        role,
        epoch,
        peer: request.peer,
        syncRequired: role === 'primary' && request.syncRequired,
        configVersion: BigInt(request.configVersion ?? '0'),
      };
      const refusal = refusalOf(current, order);
      if (refusal !== undefined) throw new TallyError(ErrorCode.failedPrecondition, refusal);
      // The router names the log it means: a node that lost its disk is not
      // the node it was, whatever its address.
      if ((request.nodeId ?? '') !== '' && request.nodeId !== log.nodeId) {
        throw new TallyError(
          ErrorCode.failedPrecondition,
          `node identity is ${log.nodeId}, not ${request.nodeId}: this log is not the one the router knows`,
        );
      }
      if (role === 'primary') {
        const minLastLsn = BigInt(request.minLastLsn ?? '0');
        if (log.installing) throw new TallyError(ErrorCode.failedPrecondition, 'a snapshot install is under way: this log is incomplete');
        if (log.lastLsn < minLastLsn)
          throw new TallyError(ErrorCode.failedPrecondition, `log ends at lsn ${log.lastLsn}, before the acknowledged ${minLastLsn}`);
      }
      const changed =
        role !== current.role ||
        epoch !== current.epoch ||
        request.peer !== current.peer ||
        order.syncRequired !== current.syncRequired ||
        order.configVersion !== current.configVersion;
      if (changed) {
        const becamePrimaryNow = role === 'primary' && (current.role !== 'primary' || epoch !== current.epoch);
        const next: RoleState = {
          role,
          epoch,
          peer: request.peer,
          syncRequired: order.syncRequired,
          epochStartLsn: becamePrimaryNow ? log.lastLsn : role === 'primary' ? current.epochStartLsn : 0n,
          configVersion: order.configVersion > current.configVersion ? order.configVersion : current.configVersion,
        };
        // Durable before anyone hears of it: a restart resumes this role.
        saveRole(log, next);
        state.role = next;
        state.confirmedLsn = 0n;
        replicator.onRoleChange();
        logger.info(role === 'primary' && current.role !== 'primary' ? 'promotion' : 'role', {
          role,
          epoch,
          peer: request.peer,
          syncRequired: next.syncRequired,
          configVersion: next.configVersion,
          lastLsn: log.lastLsn,
          previousRole: current.role,
          previousEpoch: current.epoch,
        });
      }
      // Asked to require sync: answer only once the follower holds our whole
      // log, so the router marks the pair in sync only when it truly is.
      if (state.role.role === 'primary' && state.role.syncRequired) await waitUntilCaughtUp(Math.max(100, request.catchUpTimeoutMs));
      return statusOf();
    }),

    AppendEntries: unary<shardV1.AppendEntriesRequest__Output, shardV1.AppendEntriesResponse__Output>((request) => {
      requireReady();
      return follower.appendEntries(request);
    }),

    InstallSnapshot: unary<shardV1.InstallSnapshotRequest__Output, shardV1.AppendEntriesResponse__Output>((request) => {
      requireReady();
      return follower.installSnapshot(request);
    }),

    Reconcile: unary<shardV1.ReconcileRequest__Output, shardV1.ReconcileResponse__Output>(async (request) => {
      requireWholeLog();
      const compareAtLsn = BigInt(request.compareAtLsn);
      const wanted = request.shardIds.length > 0 ? request.shardIds.map(parseShardId) : undefined;
      // Memory and a read view of the log are taken in the same turn, so
      // both stand at lastLsn; the view then stays fixed while writes and
      // checkpoint folds go on (a fold during the replay cannot fake drift).
      const lastLsn = log.lastLsn;
      const ids = wanted ?? totals.shardIds();
      const memory = new Map(ids.map((shardId) => [shardId, totals.get(shardId)]));
      const view = log.openView();
      let checkpointLsn: bigint;
      let compareAvailable: boolean;
      const fromLog = new Map<number, bigint>();
      let atCompare = new Map<number, bigint>();
      try {
        assert.equal(view.lastLsn, lastLsn, 'a log view opened in the same turn sees the same log end');
        checkpointLsn = view.checkpointLsn;
        // The log's view: the checkpoint's totals plus the entries after it.
        for (const [shardId, total] of view.checkpointTotals(wanted)) fromLog.set(shardId, total);
        // The log at compareAtLsn is only known when that lsn is not folded yet.
        compareAvailable = compareAtLsn >= checkpointLsn;
        atCompare = new Map(compareAvailable ? fromLog : []);
        await view.replaySliced(
          (lsn, shardId, amount, kind) => {
            // A drop or a clear leaves the shard as if never written, in the log's view as in memory.
            if (kind === EntryKind.drop || kind === EntryKind.clear) {
              fromLog.set(shardId, 0n);
              if (lsn <= compareAtLsn) atCompare.set(shardId, 0n);
              return;
            }
            fromLog.set(shardId, (fromLog.get(shardId) ?? 0n) + amount);
            if (lsn <= compareAtLsn) atCompare.set(shardId, (atCompare.get(shardId) ?? 0n) + amount);
          },
          lastLsn,
          wanted,
        );
      } finally {
        view.close();
      }
      const allIds = wanted ?? [...new Set([...memory.keys(), ...fromLog.keys()])];
      return {
        lastLsn: lastLsn.toString(),
        role: state.role.role,
        epoch: state.role.epoch.toString(),
        checkpointLsn: checkpointLsn.toString(),
        compareAvailable,
        shards: allIds.map((shardId) => ({
          shardId: String(shardId),
          memoryTotal: (memory.get(shardId) ?? 0n).toString(),
          logTotal: (fromLog.get(shardId) ?? 0n).toString(),
          logTotalAtCompareLsn: (atCompare.get(shardId) ?? 0n).toString(),
        })),
      };
    }),
  });

  return {
    ...unaryHandlers,
    ApplyStream: streamed('ApplyStream', apply),
    // Answers written by the lean encoder too (read-shards-codec.ts).
    ReadShardsStream: streamed('ReadShardsStream', readShards),
    ...createSnapshotExport({ state, log, dedupWindowMs: deps.dedupWindowMs, logClock: deps.logClock, foldNow: deps.foldNow, logger }),
    // Handled in the order frames arrive (several may be committed together): every frame continues the one before.
    ReplicateStream: streamed<shardV1.AppendEntriesRequest__Output, shardV1.AppendEntriesResponse__Output>(
      'ReplicateStream',
      async (request) => {
        requireReady();
        return follower.appendQueued(request);
      },
    ),
  };
}

/** Why this node cannot serve a request of method (its sender's wire version is out of range), or undefined. */
function protocolRefusalOf(method: string, request: { protocol?: shardV1.ProtocolVersion__Output | null } | null): string | undefined {
  return shardProtocolRefusal(peerProtocolOf(request?.protocol), `the caller of ${method}`);
}

/**
 * Every method refuses a caller whose wire version this node cannot serve
 * (shard-protocol.ts): FAILED_PRECONDITION naming both versions, before the
 * call does anything. A request without a version is from a router or node
 * before versions (1), which this release still serves.
 */
function checkProtocol<Handlers extends object>(handlers: Handlers): Handlers {
  const checked: Record<string, handleUnaryCall<unknown, unknown>> = {};
  for (const [method, handler] of Object.entries(handlers) as [string, handleUnaryCall<unknown, unknown>][]) {
    checked[method] = (call, callback) => {
      const refusal = protocolRefusalOf(method, call.request as { protocol?: shardV1.ProtocolVersion__Output | null } | null);
      if (refusal !== undefined) {
        callback(toServiceError(new TallyError(ErrorCode.failedPrecondition, refusal)));
        return;
      }
      handler(call, callback);
    };
  }
  return checked as Handlers;
}
