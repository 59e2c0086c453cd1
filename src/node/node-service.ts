// The ShardNode gRPC service: wiring only. Binds each method to its handler
// (src/node/handlers), behind the wire-version gate; the streamed methods
// answer frame by frame through the same handlers as their unary twins. It
// never acknowledges an increment before its log commit (and the follower's,
// while the pair is in sync), and never acts on a stale epoch: the handlers
// check both.
import { status } from '@grpc/grpc-js';
import { unary, type Logger, type shardV1 } from '../common/index.ts';
import type { ShardLog } from './log/index.ts';
import type { DedupIndex, NodeMemory, NodeState } from './state/index.ts';
import type { Replicator } from './replication/index.ts';
import type { GroupCommitter } from './write/index.ts';
import type { NodeMetrics } from './node-metrics.ts';
import {
  NodeContext,
  checkProtocol,
  createApplyHandler,
  createChangedShards,
  createReadHandlers,
  createReconcileHandler,
  createReplicationHandlers,
  createRoleHandlers,
  createSnapshotExport,
  protocolRefusalOf,
  serveFrames,
  type FrameStreams,
} from './handlers/index.ts';
import type { LeanReadShardsRequest, ReadShardsAnswer } from '../wire/internal/index.ts';

export interface NodeServiceDeps {
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
}

export function createNodeService(deps: NodeServiceDeps) {
  const { state, log, memory, committer, replicator, dedup, metrics, logger } = deps;
  const context = new NodeContext({ state, log, memory, replicator, replicationTimeoutMs: deps.replicationTimeoutMs });
  const apply = createApplyHandler({
    context,
    committer,
    metrics,
    followerHoldsPackedComponents: () => replicator.followerHoldsPackedComponents(),
  });
  const reads = createReadHandlers(context);
  const roles = createRoleHandlers({
    state,
    log,
    memory,
    replicator,
    logger,
    zone: deps.zone,
    replicationAddress: deps.replicationAddress,
  });
  const replication = createReplicationHandlers({
    context,
    dedup,
    dedupWindowMs: deps.dedupWindowMs,
    logClock: deps.logClock,
    metrics,
    logger,
  });

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
    ReadShards: unary<LeanReadShardsRequest, ReadShardsAnswer>(reads.readShards),
    ReadSketches: unary<shardV1.ReadSketchesRequest__Output, shardV1.ReadSketchesResponse__Output>(reads.readSketches),
    ReadWindows: unary<shardV1.ReadWindowsRequest__Output, shardV1.ReadShardsResponse__Output>(reads.readWindows),
    CheckMembers: unary<shardV1.CheckMembersRequest__Output, shardV1.CheckMembersResponse__Output>(reads.checkMembers),
    MemberCounts: unary<shardV1.ReadShardsRequest__Output, shardV1.MemberCountsResponse__Output>(reads.memberCounts),
    ReadComponents: unary<shardV1.ReadShardsRequest__Output, shardV1.ReadComponentsResponse__Output>(reads.readComponents),
    Status: unary<shardV1.StatusRequest__Output, shardV1.StatusResponse__Output>(roles.status),
    SetRole: unary<shardV1.SetRoleRequest__Output, shardV1.StatusResponse__Output>(roles.setRole),
    AppendEntries: unary<shardV1.AppendEntriesRequest__Output, shardV1.AppendEntriesResponse__Output>(replication.appendEntries),
    InstallSnapshot: unary<shardV1.InstallSnapshotRequest__Output, shardV1.AppendEntriesResponse__Output>(replication.installSnapshot),
    Reconcile: unary<shardV1.ReconcileRequest__Output, shardV1.ReconcileResponse__Output>(createReconcileHandler(context)),
    ChangedShards: unary(
      createChangedShards({
        memory,
        log,
        state,
        requireWholeLog: () => context.requireWholeLog(),
        confirmed: context.confirmed.bind(context),
      }),
    ),
  });

  return {
    ...unaryHandlers,
    ApplyStream: streamed('ApplyStream', apply),
    // Answers written by the lean encoder too (read-shards-codec.ts).
    ReadShardsStream: streamed('ReadShardsStream', reads.readShards),
    ...createSnapshotExport({ state, log, dedupWindowMs: deps.dedupWindowMs, logClock: deps.logClock, foldNow: deps.foldNow, logger }),
    // Handled in the order frames arrive (several may be committed together): every frame continues the one before.
    ReplicateStream: streamed<shardV1.AppendEntriesRequest__Output, shardV1.AppendEntriesResponse__Output>(
      'ReplicateStream',
      replication.appendQueued,
    ),
  };
}
