// AppendEntries, InstallSnapshot and ReplicateStream: the follower's side of
// replication, served to the pair's primary once the node is ready. The
// follower (src/node/replication) decides what is written; these only gate
// it on readiness.
import type { Logger, shardV1 } from '../../common/index.ts';
import type { NodeMetrics } from '../node-metrics.ts';
import { createFollower } from '../replication/index.ts';
import { rebuildMemory, type DedupIndex } from '../state/index.ts';
import type { NodeContext } from './node-context.ts';

type AppendRequest = shardV1.AppendEntriesRequest__Output;
type AppendResponse = shardV1.AppendEntriesResponse__Output;

export interface ReplicationDeps {
  context: NodeContext;
  dedup: DedupIndex;
  dedupWindowMs: number;
  /** The node's log clock (steadyWallClock): a rebuild measures the dedup window on it. */
  logClock: () => number;
  metrics: NodeMetrics;
  logger: Logger;
}

export interface ReplicationHandlers {
  appendEntries(request: AppendRequest): AppendResponse;
  installSnapshot(request: shardV1.InstallSnapshotRequest__Output): AppendResponse;
  /** A ReplicateStream frame: handled in the order frames arrive (several may be committed together). */
  appendQueued(request: AppendRequest): Promise<AppendResponse>;
}

export function createReplicationHandlers(deps: ReplicationDeps): ReplicationHandlers {
  const { context, dedup } = deps;
  const { state, log, memory } = context;
  const follower = createFollower({
    state,
    log,
    memory,
    dedup,
    metrics: deps.metrics,
    logger: deps.logger,
    rebuild: () => rebuildMemory(log, memory, dedup, deps.logClock(), deps.dedupWindowMs),
  });
  return {
    appendEntries(request) {
      context.requireReady();
      return follower.appendEntries(request);
    },
    installSnapshot(request) {
      context.requireReady();
      return follower.installSnapshot(request);
    },
    async appendQueued(request) {
      context.requireReady();
      return follower.appendQueued(request);
    },
  };
}
