// The primary's side of a snapshot install: a fixed view of its log, read
// chunk by chunk into InstallSnapshot requests. It sends nothing itself (the
// replicator does, one chunk at a time) and never changes the log.
import { randomUUID } from 'node:crypto';
import { nodeCallBytesMax, type shardV1 } from '../../common/index.ts';
import { shardProtocolStamp } from '../../wire/internal/index.ts';
import { chunkChecksum, type LogView, type SnapshotChunk } from '../log/index.ts';
import { entryToWire } from './entry-wire.ts';

/** Snapshot chunks get longer than appends: the follower writes a whole chunk in one transaction. */
export const installCallTimeoutMinMs = 10_000;
/** How long after an install its snapshot stays unfolded for a follower that is still rebuilding its memory. */
export const installedHoldMs = 60_000;

/** A snapshot install in progress: a fixed view of our log, sent chunk by chunk. */
export interface Install {
  view: LogView;
  chunks: Generator<SnapshotChunk>;
  next: IteratorResult<SnapshotChunk>;
  snapshotId: string;
  chunkIndex: number;
  startedMs: number;
}

/** Starts an install over view, carrying the keys written since keysSinceMs; reads its first chunk (which may throw). */
export function openInstall(view: LogView, keysSinceMs: number, startedMs: number): Install {
  const chunks = view.snapshotChunks(nodeCallBytesMax, keysSinceMs);
  return { view, chunks, next: chunks.next(), snapshotId: randomUUID(), chunkIndex: 0, startedMs };
}

/** Ends the install's read and closes its view. */
export function closeInstall(install: Install): void {
  try {
    install.chunks.return(undefined);
  } finally {
    install.view.close();
  }
}

/** The install's next chunk as a request under epoch; reads the chunk after it (which may throw) to tell whether this one is the last. */
export function nextChunkRequest(install: Install, epoch: bigint): { request: shardV1.InstallSnapshotRequest; done: boolean } {
  const chunk = install.next.value as SnapshotChunk;
  install.next = install.chunks.next();
  const done = install.next.done === true;
  return {
    done,
    request: {
      protocol: shardProtocolStamp,
      epoch: epoch.toString(),
      snapshotId: install.snapshotId,
      chunkIndex: install.chunkIndex,
      snapshotLsn: install.view.checkpointLsn.toString(),
      snapshotEpoch: install.view.checkpointEpoch.toString(),
      shards: chunk.shards.map(([shardId, total]) => ({ shardId, total: total.toString() })),
      parts: chunk.parts,
      keys: chunk.keys.map(entryToWire),
      done,
      chunkCrc32: chunkChecksum(chunk),
      chunkChecked: true,
    },
  };
}
