// `tally backup --out DIR`: an online copy of a whole cluster through a
// router while writes go on. Every pair's snapshot first (each covers
// everything its primary had logged when asked), then the directory (so it
// never names a shard the snapshots could not know of a growth or clear
// from the future), then the manifest, all in a temporary directory renamed
// to DIR only once complete: a half-written backup is never taken for one.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Metadata, type ChannelCredentials, type ClientReadableStream } from '@grpc/grpc-js';
import { AdminServiceClient, type counterV1, type shardV1 } from '../common/index.ts';
import { ErrorCode, TallyError, clientChannelOptions, deadlineIn, fromServiceError } from '../wire/index.ts';
import {
  ChunkFileWriter,
  decodePiece,
  backupFormat,
  backupVersion,
  directoryFileName,
  manifestFileName,
  pairFileName,
  sha256Of,
  type BackupManifest,
  type ManifestPair,
} from './backup-format.ts';
import { pairPieces } from './verify-backup.ts';

export interface BackupOptions {
  out: string;
  /** The first router answers; the others are named in the manifest. */
  routers: string[];
  credentials: ChannelCredentials;
  token: string | undefined;
  /** Deadline of each unary call and of each pair's stream. */
  callTimeoutMs: number;
}

type AdminClient = InstanceType<typeof AdminServiceClient>;

function unaryCall<Response>(
  invoke: (metadata: Metadata, options: { deadline: number }, callback: (error: Error | null, response?: Response) => void) => void,
  metadata: Metadata,
  timeoutMs: number,
): Promise<Response> {
  return new Promise((resolve, reject) => {
    invoke(metadata, { deadline: deadlineIn(timeoutMs) }, (error, response) => {
      if (error || response === undefined) reject(fromServiceError(error));
      else resolve(response);
    });
  });
}

/** Streams one pair's pieces into its file and checks them all (CRCs, order, reach); what the manifest says of it. */
async function backupPair(
  client: AdminClient,
  metadata: Metadata,
  pairIndex: number,
  dir: string,
  timeoutMs: number,
): Promise<ManifestPair> {
  const file = pairFileName(pairIndex);
  const writer = new ChunkFileWriter(path.join(dir, file));
  let first: shardV1.InstallSnapshotRequest__Output | undefined;
  let node = '';
  let nodeId = '';
  let endLsn = '';
  let chunkCount = 0;
  let shardCount = 0;
  let keyCount = 0;
  let last = false;
  try {
    const stream: ClientReadableStream<counterV1.BackupChunk__Output> = client.BackupPair({ pair: pairIndex }, metadata, {
      deadline: deadlineIn(timeoutMs),
    });
    for await (const message of stream as AsyncIterable<counterV1.BackupChunk__Output>) {
      const piece = decodePiece(message.snapshotChunk);
      node = message.node;
      nodeId = message.nodeId;
      endLsn = piece.endLsn;
      writer.write(message.snapshotChunk);
      if (piece.chunk !== null && piece.chunk !== undefined) {
        first ??= piece.chunk;
        chunkCount++;
        shardCount += piece.chunk.shards.length;
        keyCount += piece.chunk.keys.length;
      }
      last = piece.last;
    }
  } catch (error) {
    throw error instanceof TallyError ? error : fromServiceError(error);
  } finally {
    writer.close();
  }
  if (first === undefined || !last) throw new TallyError(ErrorCode.unavailable, `pair ${pairIndex}: the snapshot stream ended early`);
  const pair: ManifestPair = {
    pair: pairIndex,
    node,
    nodeId,
    epoch: first.epoch,
    snapshotLsn: first.snapshotLsn,
    snapshotEpoch: first.snapshotEpoch,
    endLsn,
    chunkCount,
    shardCount,
    keyCount,
    file,
  };
  // Checked before the manifest may name it: damage on the way fails the backup, not a later restore.
  for (const _piece of pairPieces(dir, pair));
  return pair;
}

function writeSynced(file: string, text: string): void {
  const fd = fs.openSync(file, 'wx', 0o600);
  try {
    fs.writeSync(fd, text);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

function syncDir(dir: string): void {
  const fd = fs.openSync(dir, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** Takes the backup into options.out (which must not exist); returns its manifest. */
export async function takeBackup(options: BackupOptions): Promise<BackupManifest> {
  const out = path.resolve(options.out);
  if (fs.existsSync(out)) throw new TallyError(ErrorCode.failedPrecondition, `${out} already exists: a backup goes into a new directory`);
  const parent = path.dirname(out);
  if (!fs.existsSync(parent)) throw new TallyError(ErrorCode.notFound, `${parent} does not exist`);
  const partial = path.join(parent, `.${path.basename(out)}.partial-${crypto.randomBytes(4).toString('hex')}`);
  fs.mkdirSync(partial, { mode: 0o700 });
  const metadata = new Metadata();
  if (options.token !== undefined) metadata.set('authorization', `Bearer ${options.token}`);
  const client = new AdminServiceClient(options.routers[0]!, options.credentials, clientChannelOptions);
  try {
    // eslint-disable-next-line no-restricted-properties -- a timestamp stored in the manifest, for people
    const startedUnixMs = Date.now();
    const status = await unaryCall<counterV1.ClusterStatusResponse__Output>(
      (meta, callOptions, callback) => client.ClusterStatus({}, meta, callOptions, callback),
      metadata,
      options.callTimeoutMs,
    );
    const pairs: ManifestPair[] = [];
    for (let pairIndex = 0; pairIndex < status.pairs.length; pairIndex++)
      pairs.push(await backupPair(client, metadata, pairIndex, partial, options.callTimeoutMs));
    const pieces: Buffer[] = [];
    try {
      const exported = client.ExportDirectory({}, metadata, { deadline: deadlineIn(options.callTimeoutMs) });
      for await (const piece of exported as AsyncIterable<counterV1.ExportDirectoryResponse__Output>) pieces.push(piece.directoryJson);
    } catch (error) {
      throw fromServiceError(error);
    }
    const directory = JSON.parse(Buffer.concat(pieces).toString('utf8')) as { pairs: unknown[]; counters: unknown[] };
    if (directory.pairs.length !== pairs.length)
      throw new TallyError(
        ErrorCode.failedPrecondition,
        `the cluster went from ${pairs.length} to ${directory.pairs.length} pairs during the backup: take it again`,
      );
    writeSynced(path.join(partial, directoryFileName), `${JSON.stringify(directory, null, 1)}\n`);
    const files = [directoryFileName, ...pairs.map((pair) => pair.file)].map((name) => ({
      name,
      sizeBytes: fs.statSync(path.join(partial, name)).size,
      sha256: sha256Of(path.join(partial, name)),
    }));
    const manifest: BackupManifest = {
      format: backupFormat,
      version: backupVersion,
      cluster: { routers: options.routers, directoryStore: status.directoryStore, nodeIds: pairs.map((pair) => pair.nodeId) },
      startedUnixMs,
      // eslint-disable-next-line no-restricted-properties -- a timestamp stored in the manifest, for people
      finishedUnixMs: Date.now(),
      counterCount: directory.counters.length,
      pairs,
      files,
    };
    // The manifest last, then the rename: only a complete backup ever has DIR's name.
    writeSynced(path.join(partial, manifestFileName), `${JSON.stringify(manifest, null, 1)}\n`);
    syncDir(partial);
    fs.renameSync(partial, out);
    syncDir(parent);
    return manifest;
  } catch (error) {
    fs.rmSync(partial, { recursive: true, force: true });
    throw error;
  } finally {
    client.close();
  }
}
