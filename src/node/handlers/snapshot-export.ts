// StreamSnapshot: this node's whole state for a backup, as a follower
// refilled from it gets it: the checkpoint as InstallSnapshot's chunks (same
// content, same checksums), then the entries past it as AppendEntries'
// column blocks, up to the log's end when the call arrived, from one fixed
// view of the log. It only reads: it never changes the log, the memory or
// the role.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { ServerWritableStream } from '@grpc/grpc-js';
import { ErrorCode, TallyError, toServiceError } from '../../wire/index.ts';
import { nodeCallBytesMax, type Logger, type shardV1 } from '../../common/index.ts';
import { peerProtocolOf, shardProtocolRefusal, shardProtocolStamp } from '../../wire/internal/index.ts';
import { bytesChecksum, chunkChecksum, encodeEntryColumns, type ShardLog } from '../log/index.ts';
import type { NodeState } from '../state/index.ts';
import { entryToWire, entryWireBytes } from '../replication/index.ts';

/** Entries read from the view at a time; the pieces sent are bounded by bytes. */
const tailReadEntries = 1024;

export interface SnapshotExportDeps {
  state: NodeState;
  log: ShardLog;
  dedupWindowMs: number;
  /** The node's log clock: which keys the snapshot carries, as entries were stamped. */
  logClock: () => number;
  /** Folds everything safe now (Checkpointer.run): a shorter tail to send. */
  foldNow: () => Promise<void>;
  logger: Logger;
}

type SnapshotCall = ServerWritableStream<shardV1.StreamSnapshotRequest__Output, shardV1.SnapshotStreamPiece>;

export function createSnapshotExport(deps: SnapshotExportDeps): { StreamSnapshot: (call: SnapshotCall) => void } {
  const { state, log, logger } = deps;

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
    // Best effort: what is folded travels as totals, not entries. The view is the backup's moment.
    await deps.foldNow();
    const epoch = state.role.epoch;
    const view = log.openView();
    try {
      const endLsn = view.lastLsn.toString();
      const send = async (piece: shardV1.SnapshotStreamPiece): Promise<void> => {
        if (!call.write({ ...piece, endLsn })) await drained(call);
      };
      const snapshotId = randomUUID();
      const chunks = view.snapshotChunks(nodeCallBytesMax, deps.logClock() - deps.dedupWindowMs);
      let next = chunks.next();
      for (let chunkIndex = 0; !next.done; chunkIndex++) {
        if (call.cancelled) return;
        const chunk = next.value;
        next = chunks.next();
        await send({
          chunk: {
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
          },
        });
      }
      // The tail: bounded by the view's end, each read returns at least one entry or the view is broken.
      let afterLsn = view.checkpointLsn;
      const readsMax = Number(view.lastLsn - view.checkpointLsn) + 1;
      for (let read = 0; afterLsn < view.lastLsn && read < readsMax; read++) {
        if (call.cancelled) return;
        const entries = view.entriesAfter(afterLsn, view.lastLsn, tailReadEntries);
        // A hole in the view is the log's damage to report, not a reason to stop serving the pair.
        if (entries.length === 0 || entries[0]!.lsn !== afterLsn + 1n)
          throw new TallyError(ErrorCode.internal, `the log has no entry after lsn ${afterLsn} below its end ${view.lastLsn}`);
        let first = 0;
        let sizeBytes = 0;
        for (let index = 0; index < entries.length; index++) {
          sizeBytes += entryWireBytes(entries[index]!);
          if (sizeBytes < nodeCallBytesMax / 2 && index < entries.length - 1) continue;
          const block = entries.slice(first, index + 1);
          const columns = encodeEntryColumns(block);
          await send({ prevLsn: afterLsn.toString(), entryCount: block.length, columns, columnsCrc32: bytesChecksum(columns) });
          afterLsn = block[block.length - 1]!.lsn;
          first = index + 1;
          sizeBytes = 0;
        }
      }
      assert.equal(afterLsn, view.lastLsn, 'the backup stream reaches the end of its view');
      await send({ last: true });
      logger.info('snapshot streamed for a backup', { snapshotId, snapshotLsn: view.checkpointLsn, endLsn: view.lastLsn });
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
