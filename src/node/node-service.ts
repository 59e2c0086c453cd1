// The ShardNode gRPC service: decodes and checks router calls, hands increments
// to group commit, answers reads from memory. It never acknowledges an
// increment before its log commit.
import { status } from '@grpc/grpc-js';
import { ErrorCode, TallyError, INT64_MAX, INT64_MIN, unary, type ApplyRequestMsg, type ApplyResponseMsg, type ReadShardsRequestMsg, type ReadShardsResponseMsg, type StatusResponseMsg, idempotencyKeyBytesMax, applyItemsPerCallMax } from '../common/index.ts';
import type { GroupCommitter, GroupOutcome } from './group-commit.ts';
import type { ShardLog, LogEntry } from './shard-log.ts';
import type { ShardTotals } from './shard-totals.ts';
import type { NodeMetrics } from './node-metrics.ts';

export interface NodeState {
  ready: boolean;
  role: 'primary' | 'follower';
  epoch: bigint;
}

function parseShardId(value: string): number {
  const id = Number(value);
  if (!Number.isSafeInteger(id) || id <= 0) throw new TallyError(ErrorCode.invalidArgument, `shard id ${value} is invalid`);
  return id;
}

function decodeGroup(items: ApplyRequestMsg['groups'][number]['items']): LogEntry[] | GroupOutcome {
  const entries: LogEntry[] = [];
  for (const item of items) {
    const id = Number(item.shardId);
    const amount = BigInt(item.amount);
    if (!Number.isSafeInteger(id) || id <= 0 || amount === 0n || amount > INT64_MAX || amount < INT64_MIN || item.idempotencyKey.length > idempotencyKeyBytesMax) {
      return { code: status.INVALID_ARGUMENT, message: `bad item (shard ${item.shardId}, amount ${item.amount})`, applied: [] };
    }
    entries.push({ shardId: id, amount, idempotencyKey: item.idempotencyKey });
  }
  return entries;
}

export function createNodeService(deps: {
  state: NodeState;
  log: ShardLog;
  totals: ShardTotals;
  committer: GroupCommitter;
  metrics: NodeMetrics;
}) {
  const { state, log, totals, committer, metrics } = deps;
  const requireReady = (): void => {
    if (!state.ready) throw new TallyError(ErrorCode.unavailable, 'node is not ready (replaying its log or shutting down)');
  };

  return {
    Apply: unary<ApplyRequestMsg, ApplyResponseMsg>(async (request) => {
      requireReady();
      const itemCount = request.groups.reduce((sum, group) => sum + group.items.length, 0);
      if (itemCount > applyItemsPerCallMax) {
        throw new TallyError(ErrorCode.resourceExhausted, `apply of ${itemCount} items exceeds ${applyItemsPerCallMax}`);
      }
      const decoded = request.groups.map((group) => decodeGroup(group.items));
      const valid = decoded.filter((group): group is LogEntry[] => Array.isArray(group));
      const { results, lsn } = valid.length > 0 ? await committer.submit(valid) : { results: [], lsn: log.lastLsn };
      let next = 0;
      const merged = decoded.map((group) => (Array.isArray(group) ? results[next++]! : group));
      for (const [index, outcome] of merged.entries()) {
        if (outcome.code === status.OK) metrics.incrementsApplied.inc(request.groups[index]!.items.length);
        else metrics.incrementsRejected.inc({ reason: outcome.code === status.OUT_OF_RANGE ? 'out_of_range' : 'invalid' });
      }
      return { results: merged, lsn: lsn.toString() };
    }),

    ReadShards: unary<ReadShardsRequestMsg, ReadShardsResponseMsg>((request) => {
      requireReady();
      const ids = request.shardIds.map(parseShardId);
      return { totals: ids.map((id) => totals.get(id).toString()), lsn: log.lastLsn.toString() };
    }),

    Status: unary<unknown, StatusResponseMsg>(() => ({
      role: state.role,
      pid: process.pid,
      lastLsn: log.lastLsn.toString(),
      shardCount: String(totals.shardCount),
      epoch: state.epoch.toString(),
      ready: state.ready,
    })),
  };
}
