// AdminService's backup calls (tally backup): one pair's state relayed
// from its primary as the node encoded it, and the directory as a JSON
// export. They only read: nothing in the directory or on a node changes.
import type { ServerWritableStream, ServiceError } from '@grpc/grpc-js';
import { ErrorCode, TallyError, deadlineIn, toServiceError } from '../../../wire/index.ts';
import { backupPairStreamTimeoutMs, shardNodeServiceDefinition, type counterV1, type Logger, type shardV1 } from '../../../common/index.ts';
import { shardProtocolStamp } from '../../../wire/internal/index.ts';
import type { Directory } from '../../directory/index.ts';
import type { NodePool } from '../../nodes/index.ts';

const streamSnapshotPath = '/tally.shard.v1.ShardNode/StreamSnapshot';
/** A directory export's piece: well inside a message. */
const directoryPieceBytes = 1024 * 1024;

type BackupPairCall = ServerWritableStream<counterV1.BackupPairRequest__Output, counterV1.BackupChunk>;

export function createBackupHandlers(deps: { directory: Directory; pool: NodePool; logger: Logger }) {
  const { directory, pool, logger } = deps;

  const backupPair = (call: BackupPairCall): void => {
    const pairIndex = call.request.pair;
    if (!Number.isInteger(pairIndex) || pairIndex >= directory.allPairs().length) {
      call.emit('error', toServiceError(new TallyError(ErrorCode.notFound, `there is no pair ${String(pairIndex)}`)));
      return;
    }
    const pair = directory.pair(pairIndex);
    const request: shardV1.StreamSnapshotRequest = { protocol: shardProtocolStamp };
    // Bytes in, bytes out: the chunks reach the backup exactly as the node checksummed them.
    const upstream = pool.get(pair.primary).rpc.makeServerStreamRequest<shardV1.StreamSnapshotRequest, Buffer>(
      streamSnapshotPath,
      (message) => shardNodeServiceDefinition.StreamSnapshot!.requestSerialize(message),
      (bytes) => bytes,
      request,
      { deadline: deadlineIn(backupPairStreamTimeoutMs) },
    );
    let chunkCount = 0;
    upstream.on('data', (bytes: Buffer) => {
      chunkCount++;
      if (!call.write({ snapshotChunk: bytes, node: pair.primary, nodeId: pair.primaryId })) {
        upstream.pause();
        call.once('drain', () => upstream.resume());
      }
    });
    upstream.on('end', () => {
      logger.info('backup of a pair streamed', { pair: pairIndex, node: pair.primary, chunks: chunkCount });
      call.end();
    });
    upstream.on('error', (error: ServiceError) => {
      if (call.cancelled) return;
      const details = `pair ${pairIndex} primary ${pair.primary}: ${error.details ?? error.message}`;
      call.emit('error', { code: error.code, details, metadata: error.metadata });
    });
    call.on('cancelled', () => upstream.cancel());
  };

  return {
    BackupPair: backupPair,

    ExportDirectory: (call: ServerWritableStream<counterV1.ExportDirectoryRequest__Output, counterV1.ExportDirectoryResponse>): void => {
      directory.exportSnapshot().then(
        (snapshot) => {
          const bytes = Buffer.from(JSON.stringify(snapshot));
          for (let offset = 0; offset === 0 || offset < bytes.length; offset += directoryPieceBytes)
            call.write({ directoryJson: bytes.subarray(offset, offset + directoryPieceBytes) });
          call.end();
        },
        (error: unknown) => call.emit('error', toServiceError(error, true)),
      );
    },
  };
}
