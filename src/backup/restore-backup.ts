// `tally restore --from DIR`: a new cluster's data built offline, before
// its processes first start. Each pair's primary gets a log holding the
// pair's checkpoint and the entries past it, written by the node's own
// install and append code (totals, parts, key windows, entries); its follower starts empty and is
// filled by the primary's snapshot install, as a replaced node is. The
// directory goes into the new router's store with the backup's counters,
// shard ids, generations and owed tasks, and no pairs: the router
// registers the pairs of its --pairs at start, as on a first start, in the
// order of --node-data-dirs. Everything is checked before anything is
// written; a failure part way removes what it wrote.
import fs from 'node:fs';
import path from 'node:path';
import { ErrorCode, TallyError } from '../wire/index.ts';
import { ShardLog, logFileOf } from '../node/index.ts';
import { openDirectoryTransfer, type DirectoryLocation } from '../router/index.ts';
import { pairPieces, verifyBackup } from './verify-backup.ts';

/**
 * The epoch a restored log's history is written at: the one a router gives
 * a newly registered pair. The old cluster's epochs mean nothing to the new
 * pair, and a log must never hold an epoch past its pair's (a follower
 * refuses a snapshot from the future).
 */
const restoredEpoch = 1n;

export interface RestoreOptions {
  from: string;
  /** The new cluster's directory store: a router's --data-dir, or etcd. */
  store: DirectoryLocation;
  /** Each pair's primary data directory, in pair order. */
  nodeDataDirs: string[];
}

export interface RestoreSummary {
  counterCount: number;
  pairCount: number;
  chunkCount: number;
}

function refuse(message: string): never {
  throw new TallyError(ErrorCode.failedPrecondition, message);
}

/** The log files a node keeps in dataDir (the database and SQLite's companions). */
function logFilesOf(dataDir: string): string[] {
  const file = logFileOf(dataDir);
  return [file, `${file}-wal`, `${file}-shm`];
}

export async function restoreBackup(options: RestoreOptions): Promise<RestoreSummary> {
  const { manifest, directory, chunkCount } = verifyBackup(options.from);
  const dirs = options.nodeDataDirs.map((dir) => path.resolve(dir));
  if (dirs.length !== manifest.pairs.length)
    throw new TallyError(
      ErrorCode.invalidArgument,
      `the backup holds ${manifest.pairs.length} pairs: give as many --node-data-dirs (each pair's primary, in order), not ${dirs.length}`,
    );
  if (new Set(dirs).size !== dirs.length) throw new TallyError(ErrorCode.invalidArgument, '--node-data-dirs names a directory twice');
  for (const dir of dirs)
    if (logFilesOf(dir).some((file) => fs.existsSync(file)))
      refuse(`${dir} already holds a node log: restore into new, empty data directories`);
  const store = await openDirectoryTransfer(options.store);
  try {
    // etcd: its import refuses a prefix holding any key, and what was written is then removed. An export
    // here would open a directory on the prefix (and could leave keys); the embedded store is read as it is.
    if ('dataDir' in options.store) {
      const held = await store.export().catch((error: unknown) => {
        // No directory there yet: the empty store a restore wants.
        if (error instanceof TallyError && error.code === ErrorCode.notFound) return undefined;
        throw error;
      });
      if (held !== undefined && (held.counters.length > 0 || held.pairs.length > 0))
        refuse(
          `the directory store already holds ${held.counters.length} counters and ${held.pairs.length} pairs: restore into a new cluster`,
        );
    }
    const created: string[] = [];
    try {
      manifest.pairs.forEach((pair, index) => {
        const dir = dirs[index]!;
        if (!fs.existsSync(dir)) created.push(dir);
        const log = ShardLog.open(dir, undefined, `restore of pair ${index}`);
        try {
          log.beginInstall(`restore-${pair.nodeId || index}`);
          let installed = false;
          for (const piece of pairPieces(options.from, pair)) {
            if (piece.chunk !== undefined) {
              for (const entry of piece.chunk.keys) entry.epoch = restoredEpoch;
              log.installChunk(piece.chunk);
              continue;
            }
            // The entries past the checkpoint follow it, as a refilled follower appends them after its install.
            if (!installed) log.finishInstall(BigInt(pair.snapshotLsn), restoredEpoch);
            installed = true;
            for (const entry of piece.entries) entry.epoch = restoredEpoch;
            log.appendReplicated(piece.entries);
          }
          if (!installed) log.finishInstall(BigInt(pair.snapshotLsn), restoredEpoch);
        } finally {
          log.close();
        }
      });
      await store.import({ ...directory, pairs: [] });
    } catch (error) {
      for (const dir of dirs) for (const file of logFilesOf(dir)) fs.rmSync(file, { force: true });
      for (const dir of created) fs.rmSync(dir, { recursive: true, force: true });
      throw error;
    }
  } finally {
    await store.close();
  }
  return { counterCount: directory.counters.length, pairCount: manifest.pairs.length, chunkCount };
}
