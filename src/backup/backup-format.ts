// The layout of a backup directory, written and read only here: a
// directory export (directory.json), one file per pair (pair-N.snapshot:
// the pieces its primary streamed, checkpoint chunks then entry blocks,
// each as a 4-byte little-endian length and the bytes the node encoded),
// and manifest.json, written last, naming every
// file with its size and SHA-256. A directory without a valid manifest is
// not a backup.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { ErrorCode, TallyError } from '../wire/index.ts';
import { shardNodeServiceDefinition, type shardV1 } from '../common/index.ts';

export const manifestFileName = 'manifest.json';
export const directoryFileName = 'directory.json';
export const backupFormat = 'tally-backup';
export const backupVersion = 1;
/** A chunk is at most a node call's size; anything larger in a file is damage, not data. */
const chunkBytesMax = 64 * 1024 * 1024;

export function pairFileName(pairIndex: number): string {
  return `pair-${pairIndex}.snapshot`;
}

export interface ManifestPair {
  pair: number;
  /** The primary the snapshot was read from: its address and its log's identity. */
  node: string;
  nodeId: string;
  /** The primary's epoch when it streamed; its checkpoint's lsn and epoch; the lsn its entries reach (decimal). */
  epoch: string;
  snapshotLsn: string;
  snapshotEpoch: string;
  endLsn: string;
  /** Checkpoint chunks, then entries past the checkpoint (endLsn - snapshotLsn of them). */
  chunkCount: number;
  shardCount: number;
  keyCount: number;
  file: string;
}

export interface ManifestFile {
  name: string;
  sizeBytes: number;
  sha256: string;
}

export interface BackupManifest {
  format: typeof backupFormat;
  version: typeof backupVersion;
  /** Which cluster: the routers asked, the directory store, every pair's primary log identity. */
  cluster: { routers: string[]; directoryStore: string; nodeIds: string[] };
  /** Wall-clock times, for people: the backup holds everything acknowledged before startedUnixMs. */
  startedUnixMs: number;
  finishedUnixMs: number;
  counterCount: number;
  pairs: ManifestPair[];
  files: ManifestFile[];
}

function notBackup(dir: string, why: string): never {
  throw new TallyError(ErrorCode.invalidArgument, `${dir} is not a tally backup: ${why}`);
}

/** The manifest of dir, checked for shape; INVALID_ARGUMENT naming dir when it is not a backup. */
export function readManifest(dir: string): BackupManifest {
  const file = path.join(dir, manifestFileName);
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    notBackup(dir, `no readable ${manifestFileName} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
  let value: Partial<BackupManifest>;
  try {
    value = JSON.parse(text) as Partial<BackupManifest>;
  } catch (error) {
    notBackup(dir, `${manifestFileName} is not JSON (${(error as Error).message})`);
  }
  if (typeof value !== 'object' || value === null) notBackup(dir, `${manifestFileName} is not an object`);
  if (value.format !== backupFormat) notBackup(dir, `format is ${String(value.format)}, expected ${backupFormat}`);
  if (value.version !== backupVersion) notBackup(dir, `version ${String(value.version)} is not ${backupVersion}`);
  if (!Array.isArray(value.files) || !Array.isArray(value.pairs)) notBackup(dir, 'files and pairs must be arrays');
  const names = new Set<string>();
  for (const entry of value.files) {
    const name = entry?.name;
    // Plain names only: a manifest never points outside its directory.
    if (typeof name !== 'string' || name !== path.basename(name) || name === '' || name.startsWith('.') || names.has(name))
      notBackup(dir, `file name ${String(name)}`);
    if (!Number.isSafeInteger(entry.sizeBytes) || entry.sizeBytes < 0 || !/^[0-9a-f]{64}$/.test(String(entry.sha256)))
      notBackup(dir, `file ${name}: size or sha256`);
    names.add(name);
  }
  if (!names.has(directoryFileName)) notBackup(dir, `${directoryFileName} is not listed`);
  value.pairs.forEach((pair, index) => {
    if (pair?.pair !== index) notBackup(dir, `pair ${index} is numbered ${String(pair?.pair)}`);
    if (pair.file !== pairFileName(index) || !names.has(pair.file)) notBackup(dir, `pair ${index} file ${String(pair.file)}`);
    if (![pair.snapshotLsn, pair.snapshotEpoch, pair.endLsn].every((value) => /^\d{1,19}$/.test(String(value))))
      notBackup(dir, `pair ${index} snapshot lsn, epoch or end lsn`);
    if (BigInt(pair.endLsn) < BigInt(pair.snapshotLsn)) notBackup(dir, `pair ${index} ends before its snapshot`);
  });
  return value as BackupManifest;
}

export function sha256Of(file: string): string {
  const hash = crypto.createHash('sha256');
  const fd = fs.openSync(file, 'r');
  try {
    const buffer = Buffer.allocUnsafe(1 << 20);
    for (let read = fs.readSync(fd, buffer); read > 0; read = fs.readSync(fd, buffer)) hash.update(buffer.subarray(0, read));
  } finally {
    fs.closeSync(fd);
  }
  return hash.digest('hex');
}

/** Appends pieces to a pair file, each length-prefixed. */
export class ChunkFileWriter {
  private readonly fd: number;
  sizeBytes = 0;

  constructor(readonly file: string) {
    this.fd = fs.openSync(file, 'wx', 0o600);
  }

  write(chunk: Buffer): void {
    const length = Buffer.allocUnsafe(4);
    length.writeUInt32LE(chunk.length, 0);
    fs.writeSync(this.fd, length);
    fs.writeSync(this.fd, chunk);
    this.sizeBytes += 4 + chunk.length;
  }

  /** Flushed to the disk before the manifest may name it. */
  close(): void {
    fs.fsyncSync(this.fd);
    fs.closeSync(this.fd);
  }
}

/** A pair file's pieces as the node encoded them. */
export function decodePiece(bytes: Buffer): shardV1.SnapshotStreamPiece__Output {
  return shardNodeServiceDefinition.StreamSnapshot!.responseDeserialize(bytes) as shardV1.SnapshotStreamPiece__Output;
}

/** A pair file's pieces, decoded in order; INVALID_ARGUMENT naming the file when its framing is broken. */
export function* readPieces(file: string): Generator<shardV1.SnapshotStreamPiece__Output> {
  const bytes = fs.readFileSync(file);
  let offset = 0;
  while (offset < bytes.length) {
    if (offset + 4 > bytes.length) throw new TallyError(ErrorCode.invalidArgument, `${path.basename(file)}: truncated chunk length`);
    const length = bytes.readUInt32LE(offset);
    if (length > chunkBytesMax || offset + 4 + length > bytes.length)
      throw new TallyError(ErrorCode.invalidArgument, `${path.basename(file)}: chunk at byte ${offset} runs past the file`);
    let piece: shardV1.SnapshotStreamPiece__Output;
    try {
      piece = decodePiece(bytes.subarray(offset + 4, offset + 4 + length));
    } catch (error) {
      throw new TallyError(
        ErrorCode.invalidArgument,
        `${path.basename(file)}: chunk at byte ${offset} does not decode (${(error as Error).message})`,
      );
    }
    yield piece;
    offset += 4 + length;
  }
}
