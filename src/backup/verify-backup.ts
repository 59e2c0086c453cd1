// `tally backup verify`: a backup is whole when its manifest is, every file
// it names has the size and SHA-256 it records, every pair file's chunks
// decode, follow each other (one snapshot, chunks 0.. in order, the last
// done) and pass their own CRC-32, and the directory export is consistent.
// It reads only.
import fs from 'node:fs';
import path from 'node:path';
import { ErrorCode, TallyError, type shardV1 } from '../common/index.ts';
import { chunkChecksum, decodeReplicated, type SnapshotChunk } from '../node/index.ts';
import { validateSnapshot, type DirectorySnapshot } from '../router/index.ts';
import { directoryFileName, readChunks, readManifest, sha256Of, type BackupManifest, type ManifestPair } from './backup-format.ts';

export interface VerifiedBackup {
  manifest: BackupManifest;
  directory: DirectorySnapshot;
  chunkCount: number;
}

function damaged(name: string, why: string): never {
  throw new TallyError(ErrorCode.invalidArgument, `damaged backup: ${name}: ${why}`);
}

/** A chunk as the log installs it, its CRC checked; damaged() naming file when it fails. */
export function snapshotChunkOf(request: shardV1.InstallSnapshotRequest__Output, file: string): SnapshotChunk {
  let chunk: SnapshotChunk;
  try {
    chunk = {
      shards: request.shards.map((shard) => [Number(shard.shardId), BigInt(shard.total)]),
      parts: request.parts.map((piece) => ({ shardId: Number(piece.shardId), part: piece.part, data: piece.data })),
      keys: request.keys.map(decodeReplicated),
    };
  } catch (error) {
    damaged(file, `chunk ${request.chunkIndex} is malformed (${(error as Error).message})`);
  }
  if (!request.chunkChecked || chunkChecksum(chunk) !== request.chunkCrc32) damaged(file, `chunk ${request.chunkIndex} fails its CRC-32`);
  const badShard = chunk.shards.find(([shardId]) => !Number.isSafeInteger(shardId) || shardId <= 0);
  if (badShard !== undefined) damaged(file, `chunk ${request.chunkIndex} names shard ${badShard[0]}`);
  return chunk;
}

/** Every chunk of one pair's file, checked as a sequence; yields each as the log installs it. */
export function* pairChunks(dir: string, pair: ManifestPair): Generator<SnapshotChunk> {
  let snapshotId: string | undefined;
  let index = 0;
  let done = false;
  const snapshotLsn = BigInt(pair.snapshotLsn);
  for (const request of readChunks(path.join(dir, pair.file))) {
    if (done) damaged(pair.file, `chunk ${request.chunkIndex} follows the last`);
    snapshotId ??= request.snapshotId;
    if (request.snapshotId !== snapshotId || request.chunkIndex !== index)
      damaged(pair.file, `chunk ${request.chunkIndex} of ${request.snapshotId} where chunk ${index} of ${snapshotId} belongs`);
    if (BigInt(request.snapshotLsn) !== snapshotLsn || request.snapshotEpoch !== pair.snapshotEpoch)
      damaged(pair.file, `chunk ${index} is of lsn ${request.snapshotLsn}, the manifest says ${pair.snapshotLsn}`);
    const chunk = snapshotChunkOf(request, pair.file);
    if (chunk.keys.some((entry) => entry.lsn > snapshotLsn || entry.idempotencyKey.length === 0))
      damaged(pair.file, `chunk ${index} holds a key entry past the snapshot or without a key`);
    yield chunk;
    done = request.done;
    index++;
  }
  if (!done) damaged(pair.file, `ends after ${index} chunks without the last one`);
  if (index !== pair.chunkCount) damaged(pair.file, `holds ${index} chunks, the manifest says ${pair.chunkCount}`);
}

/** Checks the whole backup in dir; INVALID_ARGUMENT when it is not one or when a file is damaged (naming it). */
export function verifyBackup(dir: string): VerifiedBackup {
  const manifest = readManifest(dir);
  for (const entry of manifest.files) {
    const file = path.join(dir, entry.name);
    let sizeBytes: number;
    try {
      sizeBytes = fs.statSync(file).size;
    } catch (error) {
      damaged(entry.name, `missing (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
    }
    if (sizeBytes !== entry.sizeBytes) damaged(entry.name, `${sizeBytes} bytes, the manifest says ${entry.sizeBytes}`);
    if (sha256Of(file) !== entry.sha256) damaged(entry.name, 'SHA-256 differs from the manifest');
  }
  let chunkCount = 0;
  for (const pair of manifest.pairs) for (const _chunk of pairChunks(dir, pair)) chunkCount++;
  let directory: DirectorySnapshot;
  try {
    directory = validateSnapshot(JSON.parse(fs.readFileSync(path.join(dir, directoryFileName), 'utf8')));
  } catch (error) {
    damaged(directoryFileName, (error as Error).message);
  }
  if (directory.pairs.length !== manifest.pairs.length)
    damaged(directoryFileName, `${directory.pairs.length} pairs, the manifest has ${manifest.pairs.length}`);
  return { manifest, directory, chunkCount };
}
