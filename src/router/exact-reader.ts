// EXACT reads: sums every shard of the named counters with one ReadShards
// call per node pair, however many shards and counters. A shard is read from
// its primary, or — only while the pair is in sync — from its follower. A
// shard that can be read from neither fails the whole read: a partial sum is
// never a total (G3).
import { ErrorCode, TallyError, isInt64, type shardV1 } from '../common/index.ts';
import type { CounterInfo, Directory, PairInfo } from './directory.ts';
import type { NodePool } from './node-pool.ts';

/** What every node read answers besides its values: who answered (role, log identity), at which epoch and lsn. */
export type NodeReadMeta = Pick<shardV1.ReadShardsResponse__Output, 'lsn' | 'role' | 'epoch' | 'nodeId'>;

export interface ExactTotal {
  total: bigint;
  shardCount: number;
  /** The directory's counter the shards were taken from (undefined: none, it reads 0). */
  source: CounterInfo | undefined;
}

export interface ExactReadResult {
  totals: Map<string, ExactTotal>;
  nodeCalls: number;
  followerReads: number;
}

interface PairPlan {
  pair: PairInfo;
  shardIds: number[];
  counterOf: string[];
}

/**
 * One read of a pair's shards: from the primary, or — only while the pair is
 * in sync, and only from a node that still answers as its follower at the
 * same epoch — from the follower. Anything else fails UNAVAILABLE.
 */
export async function readPairWithFallback<Response extends NodeReadMeta>(
  pair: PairInfo,
  read: (address: string) => Promise<Response>,
): Promise<{ response: Response; calls: number; fromFollower: boolean }> {
  // Both taken now: a failover during the call must not let us read a follower that was never in sync.
  const epoch = pair.epoch;
  const follower = pair.follower;
  const followerReadable = pair.inSync;
  const primaryId = pair.primaryId;
  const followerId = pair.followerId;
  try {
    const response = await read(pair.primary);
    // Only the recorded primary of this epoch holds the pair's history: a
    // node that came back empty at the same address answers 0 for everything.
    const nodeId = response.nodeId;
    if (
      response.role !== 'primary' ||
      BigInt(response.epoch) !== epoch ||
      (primaryId !== '' && nodeId !== undefined && nodeId !== primaryId)
    ) {
      throw new TallyError(
        ErrorCode.unavailable,
        `node ${pair.primary} is ${response.role} at epoch ${response.epoch}${nodeId ? ` (log ${nodeId})` : ''}, not the primary of pair ${pair.pairIndex} at ${epoch}`,
      );
    }
    return { response, calls: 1, fromFollower: false };
  } catch (primaryError) {
    if (!followerReadable) {
      throw new TallyError(
        ErrorCode.unavailable,
        `shards on pair ${pair.pairIndex} cannot be read: ${(primaryError as Error).message}; its follower is not in sync`,
      );
    }
    let response: Response;
    try {
      response = await read(follower);
    } catch (followerError) {
      throw new TallyError(
        ErrorCode.unavailable,
        `shards on pair ${pair.pairIndex} cannot be read from primary (${(primaryError as Error).message}) or follower (${(followerError as Error).message})`,
      );
    }
    // The follower holds every acknowledged increment only as the in-sync follower of this epoch.
    if (response.role !== 'follower' || BigInt(response.epoch) !== epoch) {
      throw new TallyError(
        ErrorCode.unavailable,
        `shards on pair ${pair.pairIndex}: primary unreachable and follower is ${response.role} at epoch ${response.epoch}, not follower at ${epoch}`,
      );
    }
    // ...and only as the log the directory knew in sync (not a wiped node answering at the same address).
    if (followerId === '' || response.nodeId !== followerId) {
      throw new TallyError(
        ErrorCode.unavailable,
        `shards on pair ${pair.pairIndex}: primary unreachable and the follower answers as log ${response.nodeId || '(unknown)'}, not ${followerId || 'a recorded one'}`,
      );
    }
    return { response, calls: 2, fromFollower: true };
  }
}

function readPair(
  plan: PairPlan,
  pool: NodePool,
  timeoutMs: number,
): Promise<{ response: shardV1.ReadShardsResponse__Output; calls: number; fromFollower: boolean }> {
  return readPairWithFallback(plan.pair, (address) => pool.readShards(address, plan.shardIds, timeoutMs));
}

export async function readExact(
  names: readonly string[],
  directory: Directory,
  pool: NodePool,
  timeoutMs: number,
): Promise<ExactReadResult> {
  const plans = new Map<number, PairPlan>();
  const totals = new Map<string, ExactTotal>();
  for (const name of names) {
    if (totals.has(name)) continue;
    const source = directory.get(name);
    const shards = source?.shards ?? [];
    totals.set(name, { total: 0n, shardCount: shards.length, source });
    for (const shard of shards) {
      let plan = plans.get(shard.pairIndex);
      if (plan === undefined) plans.set(shard.pairIndex, (plan = { pair: directory.pair(shard.pairIndex), shardIds: [], counterOf: [] }));
      plan.shardIds.push(shard.shardId);
      plan.counterOf.push(name);
    }
  }
  const results = await Promise.all([...plans.values()].map(async (plan) => ({ plan, ...(await readPair(plan, pool, timeoutMs)) })));
  let nodeCalls = 0;
  let followerReads = 0;
  for (const { plan, response, calls, fromFollower } of results) {
    nodeCalls += calls;
    if (fromFollower) followerReads++;
    response.totals.forEach((shardTotal, index) => {
      totals.get(plan.counterOf[index]!)!.total += BigInt(shardTotal);
    });
  }
  for (const [name, { total }] of totals) {
    if (!isInt64(total)) throw new TallyError(ErrorCode.outOfRange, `the total of ${name} is beyond int64`);
  }
  return { totals, nodeCalls, followerReads };
}
