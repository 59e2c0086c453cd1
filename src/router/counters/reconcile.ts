// Reconciliation (G8): each node recomputes its shards from its log and
// reports them beside its memory; the follower's log is compared with the
// primary's log at the follower's lsn. Drift is reported and exported as a
// metric — never repaired here.
import { ErrorCode, TallyError } from '../../wire/index.ts';
import { type counterV1, type shardV1 } from '../../common/index.ts';
import type { PairInfo, ReconcileDirectory } from '../directory/index.ts';
import type { NodePool } from '../nodes/index.ts';
import type { RouterMetrics } from '../metrics/index.ts';

/** What a long handler needs of its call: whether the caller is still waiting (grpc-js ServerUnaryCall has it). */
export interface CallProgress {
  readonly cancelled: boolean;
  /** The caller's deadline (a Date, or ms since the epoch; Infinity without one). */
  getDeadline(): Date | number;
}

/** What is left of the caller's deadline, capped by timeoutMs, for one node call. */
function remainingMs(call: CallProgress, timeoutMs: number): number {
  const deadline = call.getDeadline();
  const deadlineMs = deadline instanceof Date ? deadline.getTime() : deadline;
  // eslint-disable-next-line no-restricted-properties -- a call's deadline is a wall-clock time (gRPC API): what is left of it, at once
  return Math.max(1, Math.min(timeoutMs, deadlineMs - Date.now()));
}

function abs(value: bigint): bigint {
  return value < 0n ? -value : value;
}

export async function reconcile(
  directory: ReconcileDirectory,
  pool: NodePool,
  metrics: RouterMetrics,
  timeoutMs: number,
  counterName: string | undefined,
  call: CallProgress,
): Promise<counterV1.ReconcileResponse__Output> {
  // Which shards, on which pairs (all of a pair's shards when no counter is named).
  const shardsByPair = new Map<number, { ids: string[]; counterOf: Map<string, string> }>();
  if (counterName !== undefined) {
    const counter = directory.get(counterName);
    if (counter === undefined) throw new TallyError(ErrorCode.notFound, `counter "${counterName}" does not exist`);
    for (const shard of counter.shards) {
      let entry = shardsByPair.get(shard.pairIndex);
      if (entry === undefined) shardsByPair.set(shard.pairIndex, (entry = { ids: [], counterOf: new Map() }));
      entry.ids.push(String(shard.shardId));
      entry.counterOf.set(String(shard.shardId), counterName);
    }
  } else {
    for (const pair of directory.allPairs()) shardsByPair.set(pair.pairIndex, { ids: [], counterOf: new Map() });
  }

  const pairs: counterV1.PairReconcile__Output[] = [];
  const shards: counterV1.ShardDrift__Output[] = [];
  let checked = 0n;
  let drifting = 0n;
  for (const [pairIndex, wanted] of shardsByPair) {
    // A pair's logs may take seconds to recompute: a caller gone (or past the server's ceiling) gets no more of them.
    if (call.cancelled) throw new TallyError(ErrorCode.deadlineExceeded, `reconcile stopped after ${pairs.length} pairs: the call ended`);
    const pair: PairInfo = directory.pair(pairIndex);
    // Follower first: the primary then recomputes its log at the follower's lsn too.
    let follower: shardV1.ReconcileResponse__Output | undefined;
    let note = '';
    try {
      follower = await pool.reconcile(pair.follower, { shardIds: wanted.ids, compareAtLsn: '0' }, remainingMs(call, timeoutMs));
    } catch (error) {
      note = `follower not checked: ${(error as Error).message}`;
    }
    const primary = await pool.reconcile(
      pair.primary,
      { shardIds: wanted.ids, compareAtLsn: follower?.lastLsn ?? '0' },
      remainingMs(call, timeoutMs),
    );
    if (follower !== undefined && BigInt(follower.lastLsn) > BigInt(primary.lastLsn)) {
      note = `follower at lsn ${follower.lastLsn} is ahead of its primary at ${primary.lastLsn}`;
      follower = undefined;
    } else if (follower !== undefined && !primary.compareAvailable) {
      note = `follower at lsn ${follower.lastLsn} is behind the primary's checkpoint at ${primary.checkpointLsn}`;
      follower = undefined;
    }
    pairs.push({
      pair: pairIndex,
      primaryLsn: primary.lastLsn,
      followerLsn: follower?.lastLsn ?? '0',
      followerChecked: follower !== undefined,
      note,
    });
    const followerById = new Map((follower?.shards ?? []).map((shard) => [shard.shardId, shard]));
    const ids = new Set([...primary.shards.map((shard) => shard.shardId), ...followerById.keys()]);
    let primaryDriftSum = 0n;
    let followerDriftSum = 0n;
    let replicaDriftSum = 0n;
    const primaryById = new Map(primary.shards.map((shard) => [shard.shardId, shard]));
    for (const id of ids) {
      const p = primaryById.get(id);
      const f = followerById.get(id);
      const primaryMemory = BigInt(p?.memoryTotal ?? '0');
      const primaryLog = BigInt(p?.logTotal ?? '0');
      const followerMemory = BigInt(f?.memoryTotal ?? '0');
      const followerLog = BigInt(f?.logTotal ?? '0');
      const primaryDrift = primaryMemory - primaryLog;
      const followerDrift = follower === undefined ? 0n : followerMemory - followerLog;
      const replicaDrift = follower === undefined ? 0n : BigInt(p?.logTotalAtCompareLsn ?? '0') - followerLog;
      primaryDriftSum += abs(primaryDrift);
      followerDriftSum += abs(followerDrift);
      replicaDriftSum += abs(replicaDrift);
      checked++;
      const drifts = primaryDrift !== 0n || followerDrift !== 0n || replicaDrift !== 0n;
      if (drifts) drifting++;
      if (drifts || counterName !== undefined) {
        shards.push({
          pair: pairIndex,
          shardId: id,
          counter: wanted.counterOf.get(id) ?? '',
          primaryMemory: primaryMemory.toString(),
          primaryLog: primaryLog.toString(),
          followerMemory: followerMemory.toString(),
          followerLog: followerLog.toString(),
          primaryDrift: primaryDrift.toString(),
          followerDrift: followerDrift.toString(),
          replicaDrift: replicaDrift.toString(),
        });
      }
    }
    const label = String(pairIndex);
    metrics.reconcileDrift.set({ pair: label, kind: 'primary_memory_vs_log' }, Number(primaryDriftSum));
    metrics.reconcileDrift.set({ pair: label, kind: 'follower_memory_vs_log' }, Number(followerDriftSum));
    metrics.reconcileDrift.set({ pair: label, kind: 'primary_vs_follower' }, Number(replicaDriftSum));
  }
  return { pairs, shards, shardsChecked: checked.toString(), shardsDrifting: drifting.toString() };
}
