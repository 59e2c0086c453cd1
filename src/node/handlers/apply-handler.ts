// Apply (and each ApplyStream frame): the router's increments and other
// writes, checked against the node's role and epoch and the per-call bound,
// decoded, and handed to group commit. It never answers before the commit
// (and the follower's, while in sync), and never writes under a stale epoch.
import { status } from '@grpc/grpc-js';
import { ErrorCode, TallyError } from '../../wire/index.ts';
import { applyItemsPerCallMax, type shardV1 } from '../../common/index.ts';
import {
  decodeGroup,
  packedIncrementCount,
  type ApplyEntry,
  type CommitResult,
  type GroupCommitter,
  type GroupOutcome,
} from '../write/index.ts';
import type { NodeMetrics } from '../node-metrics.ts';
import type { NodeContext } from './node-context.ts';

export interface ApplyDeps {
  context: NodeContext;
  committer: Pick<GroupCommitter, 'submit'>;
  metrics: Pick<NodeMetrics, 'incrementsApplied' | 'incrementsDeduplicated' | 'incrementsRejected'>;
  /** Whether the follower holds packed component entries (Replicator.followerHoldsPackedComponents). */
  followerHoldsPackedComponents: () => boolean;
}

type PackedCounts = ReturnType<typeof packedIncrementCount>;

export function createApplyHandler(deps: ApplyDeps): (request: shardV1.ApplyRequest__Output) => Promise<shardV1.ApplyResponse__Output> {
  const { context, committer, metrics } = deps;
  const { state, log } = context;
  return async (request) => {
    context.requireReady();
    const epoch = BigInt(request.epoch);
    if (state.role.role !== 'primary' || epoch !== state.role.epoch) {
      metrics.incrementsRejected.inc({ reason: 'stale_epoch' });
      throw new TallyError(ErrorCode.failedPrecondition, `stale epoch: request ${epoch}, node ${state.role.role} at ${state.role.epoch}`);
    }
    let itemCount = 0;
    const packedCounts = request.groups.map((group) => {
      const packed = packedIncrementCount(group);
      itemCount += packed.records + group.items.length;
      return packed;
    });
    if (itemCount > applyItemsPerCallMax) {
      throw new TallyError(ErrorCode.resourceExhausted, `apply of ${itemCount} items exceeds ${applyItemsPerCallMax}`);
    }
    const decoded = request.groups.map(decodeGroup).map((group) => refusePackedUnheld(group, deps.followerHoldsPackedComponents));
    const valid = decoded.filter((group): group is ApplyEntry[] => Array.isArray(group));
    const { results, lsn } = valid.length > 0 ? await committer.submit(valid, epoch) : { results: [], lsn: log.lastLsn };
    const merged = itemOutcomes(decoded, results, packedCounts);
    countOutcomes(metrics, request, merged, packedCounts);
    return { results: merged, lsn: lsn.toString() };
  };
}

/**
 * A group with a packed component entry, refused while the follower has not
 * said it can hold one (it is one release older, or has not answered yet):
 * logged, the entry would stall replication. The router then stores the
 * group's components one entry each.
 */
function refusePackedUnheld(group: ApplyEntry[] | GroupOutcome, followerHolds: () => boolean): ApplyEntry[] | GroupOutcome {
  if (!Array.isArray(group) || !group.some((entry) => entry.packed !== undefined) || followerHolds()) return group;
  return {
    code: status.FAILED_PRECONDITION,
    message: "packed region components refused: this pair's follower has not said it holds them (an older release, or not answering)",
    applied: [],
    changed: [],
  };
}

/**
 * Each group's answer: its decoding error, or its commit outcome with the
 * packed increments taken off the front (entries are the packed increments,
 * then the items: the answer speaks of the items only).
 */
function itemOutcomes(
  decoded: readonly (ApplyEntry[] | GroupOutcome)[],
  results: CommitResult['results'],
  packedCounts: readonly PackedCounts[],
): shardV1.GroupResult__Output[] {
  let next = 0;
  return decoded.map((group, index): shardV1.GroupResult__Output => {
    if (!Array.isArray(group)) return { ...group, packedRecordsApplied: 0 };
    const outcome = results[next++]!;
    if (outcome.code !== status.OK) return { ...outcome, packedRecordsApplied: 0 };
    const packedCount = packedCounts[index]!.records;
    if (packedCount === 0) return { ...outcome, packedRecordsApplied: 0 };
    return {
      ...outcome,
      applied: outcome.applied.slice(packedCount),
      changed: outcome.changed.slice(packedCount),
      packedRecordsApplied: packedCount,
    };
  });
}

function countOutcomes(
  metrics: ApplyDeps['metrics'],
  request: shardV1.ApplyRequest__Output,
  merged: readonly shardV1.GroupResult__Output[],
  packedCounts: readonly PackedCounts[],
): void {
  for (const [index, outcome] of merged.entries()) {
    if (outcome.code === status.OK) {
      // Increments only: a member set that changes nothing is not a duplicate.
      const items = request.groups[index]!.items;
      let appliedCount = packedCounts[index]!.increments;
      let duplicateCount = 0;
      items.forEach((item, position) => {
        if ((item.op ?? 'INCREMENT') !== 'INCREMENT') return;
        if (outcome.applied[position]) appliedCount++;
        else duplicateCount++;
      });
      metrics.incrementsApplied.inc(appliedCount);
      metrics.incrementsDeduplicated.inc(duplicateCount);
    } else
      metrics.incrementsRejected.inc({
        reason: outcome.code === status.OUT_OF_RANGE ? 'out_of_range' : outcome.code === status.NOT_FOUND ? 'dropped' : 'invalid',
      });
  }
}
