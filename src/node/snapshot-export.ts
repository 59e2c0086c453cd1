// StreamSnapshot: this node's whole state for a backup, as the chunks a
// follower's InstallSnapshot gets (same content, same checksums). It first
// folds the checkpoint up to the log's end at the call's arrival, so the
// snapshot holds every increment acknowledged before the backup asked. It
// only reads: it never changes the log, the memory or the role.
import { randomUUID } from 'node:crypto';
import type { ServerWritableStream } from '@grpc/grpc-js';
import {
  ErrorCode,
  TallyError,
  nodeCallBytesMax,
  peerProtocolOf,
  shardProtocolRefusal,
  shardProtocolStamp,
  toServiceError,
  type Logger,
  type shardV1,
} from '../common/index.ts';
import { chunkChecksum, type ShardLog } from './log/index.ts';
import type { NodeState } from './state/index.ts';
import { entryToWire } from './replication/index.ts';

/** How long a backup waits for the checkpoint to reach the log's end when the caller does not say. */
const foldWaitDefaultMs = 10_000;
/** Between fold attempts while waiting: the checkpointer may be mid-round, or the follower a commit behind. */
const foldRetryDelayMs = 20;

export interface SnapshotExportDeps {
  state: NodeState;
  log: ShardLog;
  dedupWindowMs: number;
  /** The node's log clock: which keys the snapshot carries, as entries were stamped. */
  logClock: () => number;
  /** Folds everything safe now (Checkpointer.run). */
  foldNow: () => Promise<void>;
  logger: Logger;
}

type SnapshotCall = ServerWritableStream<shardV1.StreamSnapshotRequest__Output, shardV1.InstallSnapshotRequest>;

export function createSnapshotExport(deps: SnapshotExportDeps): { StreamSnapshot: (call: SnapshotCall) => void } {
  const { state, log, logger } = deps;

  /** Folds until the checkpoint covers targetLsn; false when waitMs passed first. */
  const foldUpTo = async (targetLsn: bigint, waitMs: number, call: SnapshotCall): Promise<boolean> => {
    const attemptsMax = Math.ceil(waitMs / foldRetryDelayMs) + 1;
    for (let attempt = 0; attempt < attemptsMax && !call.cancelled; attempt++) {
      if (log.checkpointLsn >= targetLsn) return true;
      await deps.foldNow();
      if (log.checkpointLsn >= targetLsn) return true;
      await new Promise((resolve) => setTimeout(resolve, foldRetryDelayMs));
    }
    return log.checkpointLsn >= targetLsn;
  };

  /** Resolves once the stream can take more (a slow reader holds the view, not our memory). */
  const drained = (call: SnapshotCall): Promise<void> =>
    new Promise((resolve) => {
      const done = (): void => {
        call.off('drain', done);
        call.off('close', done);
        resolve();
      };
      call.on('drain', done);
      call.on('close', done);
    });

  const stream = async (call: SnapshotCall): Promise<void> => {
    const refusal = shardProtocolRefusal(peerProtocolOf(call.request.protocol), 'the caller of StreamSnapshot');
    if (refusal !== undefined) throw new TallyError(ErrorCode.failedPrecondition, refusal);
    if (!state.ready || log.installing)
      throw new TallyError(ErrorCode.unavailable, 'node is not ready (replaying its log, installing a snapshot or shutting down)');
    if (state.role.role !== 'primary')
      throw new TallyError(ErrorCode.failedPrecondition, `a backup reads a pair's primary; this node is ${state.role.role}`);
    const targetLsn = log.lastLsn;
    const waitMs = call.request.waitMs > 0 ? call.request.waitMs : foldWaitDefaultMs;
    if (!(await foldUpTo(targetLsn, waitMs, call)))
      throw new TallyError(
        ErrorCode.unavailable,
        `the checkpoint is at lsn ${log.checkpointLsn}, short of ${targetLsn} after ${waitMs} ms (is the follower out of sync?): no snapshot taken`,
      );
    const epoch = state.role.epoch;
    const view = log.openView();
    try {
      const snapshotId = randomUUID();
      const chunks = view.snapshotChunks(nodeCallBytesMax, deps.logClock() - deps.dedupWindowMs);
      let next = chunks.next();
      for (let chunkIndex = 0; !next.done; chunkIndex++) {
        if (call.cancelled) return;
        const chunk = next.value;
        next = chunks.next();
        const request: shardV1.InstallSnapshotRequest = {
          protocol: shardProtocolStamp,
          epoch: epoch.toString(),
          snapshotId,
          chunkIndex,
          snapshotLsn: view.checkpointLsn.toString(),
          snapshotEpoch: view.checkpointEpoch.toString(),
          shards: chunk.shards.map(([shardId, total]) => ({ shardId, total: total.toString() })),
          parts: chunk.parts,
          keys: chunk.keys.map(entryToWire),
          done: next.done === true,
          chunkCrc32: chunkChecksum(chunk),
          chunkChecked: true,
        };
        if (!call.write(request)) await drained(call);
      }
      logger.info('snapshot streamed for a backup', { snapshotId, snapshotLsn: view.checkpointLsn, targetLsn });
    } finally {
      view.close();
    }
  };

  return {
    StreamSnapshot: (call) => {
      stream(call).then(
        () => call.end(),
        (error: unknown) => {
          if (call.cancelled) return;
          call.emit('error', toServiceError(error));
        },
      );
    },
  };
}
