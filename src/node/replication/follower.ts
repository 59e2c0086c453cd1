// The follower side of replication: AppendEntries and InstallSnapshot from
// the pair's primary. Appends only entries whose predecessor (lsn and epoch)
// matches its own log (log matching), drops only a deposed primary's tail,
// and replaces its whole state only with a snapshot sent in order by the
// primary of its current epoch. A block of entries is written in one
// transaction. It never decides who the primary is.
import { ErrorCode, TallyError, monotonicNowMs } from '../../wire/index.ts';
import { type Logger, type shardV1 } from '../../common/index.ts';
import { shardProtocol } from '../../wire/internal/index.ts';
import { type DedupIndex, type NodeMemory, type NodeState } from '../state/index.ts';
import {
  EntryKind,
  entryProblem,
  type ShardLog,
  type StoredEntry,
  type SnapshotChunk,
  bytesChecksum,
  chunkChecksum,
  decodeCommitWire,
  decodeEntryColumns,
  visitRecord,
  type CommitWire,
  type LogEntry,
} from '../log/index.ts';
import type { NodeMetrics } from '../node-metrics.ts';

/** A peer's entry (a snapshot's keys), checked like a stored row: a malformed one is refused, never written. */
export function decodeReplicated(entry: shardV1.LogEntryMsg__Output): StoredEntry {
  const kind = (entry.kind ?? 0) as EntryKind;
  const decoded: StoredEntry = {
    lsn: BigInt(entry.lsn),
    epoch: BigInt(entry.epoch),
    shardId: Number(entry.shardId),
    amount: BigInt(entry.amount),
    idempotencyKey: entry.idempotencyKey,
    fenceShardCount: Number(entry.fenceShardCount),
    atMs: Number(entry.atMs),
    kind,
    member: kind === EntryKind.memberFlip ? BigInt(entry.member ?? '0') : undefined,
    payload: entry.payload !== undefined && entry.payload.length > 0 ? entry.payload : undefined,
  };
  const problem = entryProblem(decoded);
  if (problem !== undefined) throw new TallyError(ErrorCode.invalidArgument, `replicated entry ${entry.lsn} is invalid: ${problem}`);
  return decoded;
}

/** An AppendEntries as the follower reads it: records (and their checksum) absent from a sender before them. */
export type AppendRequest = Omit<shardV1.AppendEntriesRequest__Output, 'protocol' | 'records' | 'recordsCrc32' | 'moreFollows'> &
  Partial<Pick<shardV1.AppendEntriesRequest__Output, 'records' | 'recordsCrc32' | 'moreFollows'>>;

/** The frame's records, checked whole (their CRC-32, then each piece's shape and checksum): INVALID_ARGUMENT, nothing written, else. */
function checkedWire(request: AppendRequest, prevLsn: bigint): CommitWire {
  const records = request.records!;
  if (bytesChecksum(records) !== request.recordsCrc32)
    throw new TallyError(ErrorCode.invalidArgument, `replicated records after lsn ${prevLsn} fail their checksum`);
  return decodeCommitWire(records, prevLsn + 1n, request.entryCount);
}

const plainScratch: LogEntry = { shardId: 0, amount: 0n, idempotencyKey: Buffer.alloc(0), fenceShardCount: 0 };

/** Bytes of frames a follower holds back to write together, at most. */
const queuedBytesMax = 1024 * 1024;
/** How long a frame that says more follow may wait for them. */
const queuedDelayMaxMs = 20;

/** How long after answering the last snapshot chunk the follower starts rebuilding its memory. */
const rebuildDelayMs = 50;

export interface FollowerDeps {
  state: NodeState;
  log: ShardLog;
  memory: NodeMemory;
  dedup: DedupIndex;
  metrics: NodeMetrics;
  logger: Logger;
  /** Rebuilds memory and keys from the log (after a truncation or an install). */
  rebuild: () => void;
}

export function createFollower(deps: FollowerDeps) {
  const appendEntries = appendEntriesOf(deps);
  return { appendEntries, appendQueued: frameQueueOf(deps, appendEntries), installSnapshot: installSnapshotOf(deps) };
}

/** AppendEntries: entries only where they continue this log (log matching), a deposed primary's tail dropped first. */
function appendEntriesOf(deps: FollowerDeps): (request: AppendRequest) => shardV1.AppendEntriesResponse__Output {
  const { state, log, memory, dedup, metrics, logger } = deps;
  const appendEntries = (request: AppendRequest): shardV1.AppendEntriesResponse__Output => {
    const epoch = BigInt(request.epoch);
    checkPrimary(state, epoch);
    const prevLsn = BigInt(request.prevLsn ?? '0');
    const prevEpoch = BigInt(request.prevEpoch ?? '0');
    // Checked and decoded first: a damaged or malformed request changes nothing.
    const records = request.records;
    const wire = records !== undefined && records.length > 0 ? checkedWire(request, prevLsn) : undefined;
    if (wire === undefined && request.columnsChecked === true && bytesChecksum(request.columns) !== request.columnsCrc32)
      throw new TallyError(ErrorCode.invalidArgument, `replication block after lsn ${prevLsn} fails its checksum`);
    const entries = wire === undefined ? decodeEntryColumns(prevLsn + 1n, request.entryCount, request.columns) : undefined;
    // A probe, or a primary's append into an install it does not know about: say where we are.
    if (log.installing) return position(log, false);
    if (request.truncate) {
      const afterLsn = BigInt(request.truncateAfterLsn);
      // Log matching: the entry we keep must be the primary's.
      if (afterLsn !== prevLsn || log.entryEpoch(afterLsn) !== prevEpoch) return position(log, false);
      if (afterLsn < log.lastLsn) {
        // Only a deposed primary's tail is dropped: entries written under
        // this epoch (or a newer one) may have been acknowledged.
        const newestEpoch = log.maxEpochAfter(afterLsn);
        if (newestEpoch >= epoch) {
          // UNAVAILABLE, not FAILED_PRECONDITION: the primary is not deposed, this is a state to look at.
          logger.error('refused truncation of current-epoch entries', { afterLsn, newestEpoch, epoch });
          throw new TallyError(
            ErrorCode.unavailable,
            `refusing to drop entries after lsn ${afterLsn}: they carry epoch ${newestEpoch}, not older than ${epoch}`,
          );
        }
        if (afterLsn < log.checkpointLsn) return position(log, false);
        const dropped = log.truncateAfter(afterLsn);
        deps.rebuild();
        logger.warn('truncated unacknowledged tail', { afterLsn, dropped, epoch });
      }
    } else if (prevLsn !== log.lastLsn || prevEpoch !== log.lastEpoch) {
      // Not our log's end (a probe lands here too): nothing changes.
      return position(log, false);
    }
    if (wire !== undefined) {
      if (prevLsn !== log.lastLsn) return position(log, false);
      appendWire(deps, wire);
    } else if (entries!.length > 0) {
      if (entries![0]!.lsn !== log.lastLsn + 1n) return position(log, false);
      // Nothing is written that memory could not apply: the logs would have diverged.
      const problem = memory.flipProblem(entries!);
      if (problem !== undefined) {
        logger.error('refused replicated entries that do not follow this log', { problem, fromLsn: entries![0]!.lsn });
        throw new TallyError(ErrorCode.internal, `refusing entries from lsn ${entries![0]!.lsn}: ${problem}`);
      }
      const startedNs = process.hrtime.bigint();
      log.appendReplicated(entries!);
      for (const entry of entries!) {
        memory.apply(entry, entry.atMs);
        if (entry.idempotencyKey.length > 0) dedup.add(entry.shardId, entry.idempotencyKey, entry.lsn, entry.atMs, entry.fenceShardCount);
      }
      metrics.commitBatchRows.observe(entries!.length);
      metrics.commitSeconds.observe(Number(process.hrtime.bigint() - startedNs) / 1e9);
      metrics.lastLsn.set(Number(log.lastLsn));
    }
    // Our log now matches this epoch's primary up to its end.
    state.confirmedLsn = log.lastLsn;
    return position(log, true);
  };
  return appendEntries;
}

/** InstallSnapshot: the whole state replaced, chunk by chunk in order, by the primary of the current epoch. */
function installSnapshotOf(
  deps: FollowerDeps,
): (request: Omit<shardV1.InstallSnapshotRequest__Output, 'protocol'>) => shardV1.AppendEntriesResponse__Output {
  const { state, log, memory, dedup, metrics, logger } = deps;
  /** The install under way: its id and the chunk expected next. */
  let install: { snapshotId: string; nextChunk: number } | undefined;
  const installSnapshot = (request: Omit<shardV1.InstallSnapshotRequest__Output, 'protocol'>): shardV1.AppendEntriesResponse__Output => {
    const epoch = BigInt(request.epoch);
    checkPrimary(state, epoch);
    const snapshotLsn = BigInt(request.snapshotLsn);
    const snapshotEpoch = BigInt(request.snapshotEpoch);
    if (snapshotEpoch > epoch)
      throw new TallyError(ErrorCode.invalidArgument, `snapshot epoch ${snapshotEpoch} is past the primary's ${epoch}`);
    // Decoded and checked before anything is written.
    const chunk: SnapshotChunk = {
      shards: request.shards.map((shard) => {
        const shardId = Number(shard.shardId);
        if (!Number.isSafeInteger(shardId) || shardId <= 0)
          throw new TallyError(ErrorCode.invalidArgument, `snapshot shard id ${shard.shardId} is invalid`);
        return [shardId, BigInt(shard.total)];
      }),
      parts: request.parts.map((piece) => {
        const shardId = Number(piece.shardId);
        if (!Number.isSafeInteger(shardId) || shardId <= 0 || piece.part === '')
          throw new TallyError(ErrorCode.invalidArgument, `snapshot part of shard ${piece.shardId} is invalid`);
        return { shardId, part: piece.part, data: piece.data };
      }),
      keys: request.keys.map(decodeReplicated),
    };
    if (request.chunkChecked === true && chunkChecksum(chunk) !== request.chunkCrc32)
      throw new TallyError(ErrorCode.invalidArgument, `snapshot chunk ${request.chunkIndex} of ${request.snapshotId} fails its checksum`);
    if (chunk.keys.some((entry) => entry.lsn > snapshotLsn || entry.idempotencyKey.length === 0)) {
      throw new TallyError(ErrorCode.invalidArgument, 'snapshot keys must be keyed entries at or before the snapshot lsn');
    }
    // A snapshot never takes back entries this epoch's primary wrote here: by
    // log matching they are its own history, so a chunk 0 that would is a
    // late copy of an install long over (a dropped connection's queued bytes
    // delivered after a partition heals), not a request to empty this log.
    if (request.chunkIndex === 0 && !log.installing && log.lastEpoch === epoch && snapshotLsn < log.lastLsn) {
      throw new TallyError(
        ErrorCode.failedPrecondition,
        `snapshot ${request.snapshotId} at lsn ${snapshotLsn} would take back entries of epoch ${epoch} up to ${log.lastLsn}: refused as stale`,
      );
    }
    if (request.chunkIndex === 0) {
      log.beginInstall(request.snapshotId);
      memory.clear();
      dedup.clear();
      state.confirmedLsn = 0n;
      install = { snapshotId: request.snapshotId, nextChunk: 0 };
      logger.warn('snapshot install', { snapshotId: request.snapshotId, snapshotLsn, epoch });
    }
    if (install === undefined || install.snapshotId !== request.snapshotId || install.nextChunk !== request.chunkIndex || !log.installing) {
      // A chunk out of order (a lost call, a restart here): the primary starts over.
      throw new TallyError(
        ErrorCode.failedPrecondition,
        `snapshot chunk ${request.chunkIndex} of ${request.snapshotId} is not the one expected`,
      );
    }
    log.installChunk(chunk);
    install.nextChunk++;
    if (request.done) {
      log.finishInstall(snapshotLsn, snapshotEpoch);
      const chunks = install.nextChunk;
      install = undefined;
      metrics.lastLsn.set(Number(log.lastLsn));
      // Answered first, rebuilt after: loading millions of keys takes longer
      // than a call may. Until memory holds the snapshot the node is not
      // ready, so nothing reads it or appends to it.
      state.ready = false;
      // A moment later rather than setImmediate: the answer must leave this
      // process before the event loop is held for the rebuild.
      setTimeout(() => {
        const startedMs = monotonicNowMs();
        deps.rebuild();
        state.confirmedLsn = log.lastLsn;
        state.ready = true;
        logger.info('snapshot installed', {
          snapshotId: request.snapshotId,
          snapshotLsn,
          chunks,
          shards: memory.totals.shardCount,
          keys: dedup.size,
          rebuildMs: Math.round(monotonicNowMs() - startedMs),
        });
      }, rebuildDelayMs);
    }
    return position(log, true);
  };
  return installSnapshot;
}

/** ReplicateStream's frames, written together (see the queue below). */
function frameQueueOf(
  deps: FollowerDeps,
  appendEntries: (request: AppendRequest) => shardV1.AppendEntriesResponse__Output,
): (request: AppendRequest) => Promise<shardV1.AppendEntriesResponse__Output> {
  const { state, log, logger } = deps;
  /**
   * Frames waiting to be written together (ReplicateStream): a frame that
   * says more follow waits for them, up to queuedBytesMax or
   * queuedDelayMaxMs; then all are handled in order, exactly as one by one,
   * inside one transaction, and answered once it is committed (fsync'd).
   */
  let queue: {
    request: AppendRequest;
    resolve: (response: shardV1.AppendEntriesResponse__Output) => void;
    reject: (error: unknown) => void;
  }[] = [];
  let queuedBytes = 0;
  let flushTimer: NodeJS.Timeout | undefined;
  const flush = (): void => {
    clearTimeout(flushTimer);
    flushTimer = undefined;
    const batch = queue;
    queue = [];
    queuedBytes = 0;
    const outcomes: ({ response: shardV1.AppendEntriesResponse__Output } | { error: unknown })[] = [];
    try {
      log.batch(() => {
        for (const { request } of batch) {
          try {
            outcomes.push({ response: appendEntries(request) });
          } catch (error) {
            outcomes.push({ error });
          }
        }
      });
    } catch (error) {
      // The commit failed: none of it is on disk, though memory applied some.
      logger.error('replicated frames could not be committed', { error: (error as Error).message, frames: batch.length });
      deps.rebuild();
      state.confirmedLsn = log.lastLsn;
      for (const { reject } of batch) reject(error);
      return;
    }
    batch.forEach(({ resolve, reject }, index) => {
      const outcome = outcomes[index]!;
      if ('response' in outcome) resolve(outcome.response);
      else reject(outcome.error);
    });
  };

  /** A ReplicateStream frame: answered once it is written (with the frames it was committed with). */
  const appendQueued = (request: AppendRequest): Promise<shardV1.AppendEntriesResponse__Output> =>
    new Promise((resolve, reject) => {
      queue.push({ request, resolve, reject });
      queuedBytes += request.records?.length ?? 0;
      if (request.moreFollows !== true || queuedBytes >= queuedBytesMax) flush();
      else flushTimer ??= setTimeout(flush, queuedDelayMaxMs);
    });
  return appendQueued;
}

/** Where this follower's log ends, and whether the call was taken. */
function position(log: ShardLog, ok: boolean): shardV1.AppendEntriesResponse__Output {
  return {
    ok,
    lastLsn: log.lastLsn.toString(),
    lastEpoch: log.lastEpoch.toString(),
    nodeId: log.nodeId,
    checkpointLsn: log.checkpointLsn.toString(),
    protocol: { current: shardProtocol.current, oldest: shardProtocol.oldest },
  };
}

/** Only the primary of our current epoch may write here. */
function checkPrimary(state: NodeState, epoch: bigint): void {
  if (epoch < state.role.epoch) {
    throw new TallyError(ErrorCode.failedPrecondition, `stale epoch ${epoch}: this node is ${state.role.role} at ${state.role.epoch}`);
  }
  if (state.role.role !== 'follower' || epoch !== state.role.epoch) {
    // Not (yet) told by the router that this primary is ours: try again later.
    throw new TallyError(ErrorCode.unavailable, `not a follower at epoch ${epoch} (node is ${state.role.role} at ${state.role.epoch})`);
  }
}

/** Writes a checked run of records and rows as they came, then applies them: one transaction, one fsync. */
function appendWire(deps: FollowerDeps, wire: CommitWire): void {
  const { log, memory, dedup, metrics, logger } = deps;
  if (wire.entryCount === 0) return;
  const rowEntries: LogEntry[] = [];
  for (const piece of wire.pieces) if (piece.entry !== undefined) rowEntries.push(piece.entry);
  // Nothing is written that memory could not apply: the logs would have diverged.
  const problem = rowEntries.length > 0 ? memory.flipProblem(rowEntries) : undefined;
  if (problem !== undefined) {
    logger.error('refused replicated entries that do not follow this log', { problem, fromLsn: log.lastLsn + 1n });
    throw new TallyError(ErrorCode.internal, `refusing entries from lsn ${log.lastLsn + 1n}: ${problem}`);
  }
  const startedNs = process.hrtime.bigint();
  log.appendWire(wire);
  for (const piece of wire.pieces) {
    const entry = piece.entry;
    if (entry !== undefined) {
      memory.apply(entry, entry.atMs);
      if (entry.idempotencyKey.length > 0) dedup.add(entry.shardId, entry.idempotencyKey, entry.lsn, entry.atMs, entry.fenceShardCount);
      continue;
    }
    const atMs = Number(piece.record[3]);
    // One scratch entry for the whole record: a plain increment is a shard and an amount.
    visitRecord(
      piece.record,
      (shardId, amount) => {
        plainScratch.shardId = shardId;
        plainScratch.amount = amount;
        memory.apply(plainScratch, atMs);
      },
      false,
    );
  }
  metrics.commitBatchRows.observe(wire.entryCount);
  metrics.commitSeconds.observe(Number(process.hrtime.bigint() - startedNs) / 1e9);
  metrics.lastLsn.set(Number(log.lastLsn));
}
