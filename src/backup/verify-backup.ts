// `tally backup verify`: a backup is whole when its manifest is, every file
// it names has the size and SHA-256 it records, every pair file's pieces
// decode, follow each other (one snapshot's chunks 0.. in order, the last
// done, then entries from the snapshot's lsn to the manifest's end, then
// the last piece) and pass their own CRC-32, and the directory export is
// consistent.
// It reads only.
import fs from 'node:fs';
import path from 'node:path';
import { ErrorCode, TallyError } from '../wire/index.ts';
import { type shardV1 } from '../common/index.ts';
import { bytesChecksum, chunkChecksum, decodeEntryColumns, decodeReplicated, type SnapshotChunk, type StoredEntry } from '../node/index.ts';
import { validateSnapshot, type DirectorySnapshot } from '../router/index.ts';
import { directoryFileName, readPieces, readManifest, sha256Of, type BackupManifest, type ManifestPair } from './backup-format.ts';

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

/** What a pair file holds, in order: checkpoint chunks, then blocks of the entries past the checkpoint. */
export type PairPiece = { chunk: SnapshotChunk; entries?: undefined } | { chunk?: undefined; entries: StoredEntry[] };

/** Every piece of one pair's file, checked as a sequence; yields each as the log writes it. */
export function* pairPieces(dir: string, pair: ManifestPair): Generator<PairPiece> {
  let snapshotId: string | undefined;
  let chunkIndex = 0;
  let chunksDone = false;
  let last = false;
  const snapshotLsn = BigInt(pair.snapshotLsn);
  let afterLsn = snapshotLsn;
  for (const piece of readPieces(path.join(dir, pair.file))) {
    if (last) damaged(pair.file, 'a piece follows the last');
    if (piece.endLsn !== pair.endLsn) damaged(pair.file, `a piece reaches lsn ${piece.endLsn}, the manifest says ${pair.endLsn}`);
    const request = piece.chunk;
    if (request !== null && request !== undefined) {
      if (chunksDone) damaged(pair.file, `chunk ${request.chunkIndex} follows the last chunk`);
      snapshotId ??= request.snapshotId;
      if (request.snapshotId !== snapshotId || request.chunkIndex !== chunkIndex)
        damaged(pair.file, `chunk ${request.chunkIndex} of ${request.snapshotId} where chunk ${chunkIndex} of ${snapshotId} belongs`);
      if (BigInt(request.snapshotLsn) !== snapshotLsn || request.snapshotEpoch !== pair.snapshotEpoch)
        damaged(pair.file, `chunk ${chunkIndex} is of lsn ${request.snapshotLsn}, the manifest says ${pair.snapshotLsn}`);
      const chunk = snapshotChunkOf(request, pair.file);
      if (chunk.keys.some((entry) => entry.lsn > snapshotLsn || entry.idempotencyKey.length === 0))
        damaged(pair.file, `chunk ${chunkIndex} holds a key entry past the snapshot or without a key`);
      yield { chunk };
      chunksDone = request.done;
      chunkIndex++;
      continue;
    }
    if (!chunksDone) damaged(pair.file, `entries or the end before the last checkpoint chunk (after ${chunkIndex} chunks)`);
    if (piece.last) {
      last = true;
      continue;
    }
    if (BigInt(piece.prevLsn) !== afterLsn) damaged(pair.file, `entries after lsn ${piece.prevLsn} where lsn ${afterLsn + 1n} belongs`);
    if (bytesChecksum(piece.columns) !== piece.columnsCrc32) damaged(pair.file, `entries after lsn ${piece.prevLsn} fail their CRC-32`);
    let entries: StoredEntry[];
    try {
      entries = decodeEntryColumns(afterLsn + 1n, piece.entryCount, piece.columns);
    } catch (error) {
      damaged(pair.file, `entries after lsn ${piece.prevLsn} are malformed (${(error as Error).message})`);
    }
    if (entries.length === 0) damaged(pair.file, `an empty block of entries after lsn ${piece.prevLsn}`);
    afterLsn += BigInt(entries.length);
    yield { entries };
  }
  if (!last) damaged(pair.file, `ends after ${chunkIndex} chunks and entries up to lsn ${afterLsn} without its last piece`);
  if (chunkIndex !== pair.chunkCount) damaged(pair.file, `holds ${chunkIndex} chunks, the manifest says ${pair.chunkCount}`);
  if (afterLsn !== BigInt(pair.endLsn)) damaged(pair.file, `entries reach lsn ${afterLsn}, the manifest says ${pair.endLsn}`);
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
  for (const pair of manifest.pairs) for (const _piece of pairPieces(dir, pair)) chunkCount++;
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
