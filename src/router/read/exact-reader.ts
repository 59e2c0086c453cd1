// EXACT reads: sums every shard of the named counters with one ReadShards
// call per node pair (one frame on that node's read stream), however many
// shards and counters. A shard is read from
// its primary, or — only while the pair is in sync — from its follower. A
// shard that can be read from neither fails the whole read: a partial sum is
// never a total (G3). Every shard is read at its counter's generation; a
// counter a clear overtook during the read is read again, so a total never
// mixes cleared and uncleared shards.
import { ErrorCode, TallyError, isInt64 } from '../../wire/index.ts';
import { clearOvertakenReadsMax, type shardV1 } from '../../common/index.ts';
import type { CounterInfo, PairInfo, ExactReadDirectory } from '../directory/index.ts';
import { sameCounter } from '../directory/index.ts';
import type { NodePool } from '../nodes/index.ts';

/** What every node read answers besides its values: who answered (role, log identity), at which epoch and lsn. */
export type NodeReadMeta = Pick<shardV1.ReadShardsResponse__Output, 'lsn' | 'role' | 'epoch' | 'nodeId'>;

export interface ExactTotal {
  total: bigint;
  shardCount: number;
  /** The directory's counter the shards were taken from (undefined: none, it reads 0). */
  source: CounterInfo | undefined;
  /** The counter's generation the shards were read at. */
  generation: number;
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
  /** Parallel to shardIds: the total each shard adds to (no lookup by name per shard). */
  entryOf: ExactTotal[];
  /** Parallel to shardIds: each shard's counter generation. */
  generations: number[];
  /** Some shard's counter was cleared: the generations go on the wire (otherwise nothing: all 0). */
  cleared: boolean;
}

/**
 * The counters among `names` whose read a clear overtook: a shard answered
 * at a newer generation than the read named (the request's
 * generations[index] for newerGenerationIndexes[index]).
 */
export function overtakenCounters(counterOf: readonly string[], newerGenerationIndexes: readonly number[]): Set<string> {
  const overtaken = new Set<string>();
  for (const index of newerGenerationIndexes) {
    const name = counterOf[index];
    if (name === undefined) throw new TallyError(ErrorCode.internal, `a node named shard ${index} of ${counterOf.length} read`);
    overtaken.add(name);
  }
  return overtaken;
}

/**
 * Runs read over names, then again over the counters a clear overtook (the
 * next attempt names the directory's generation, which the node has not
 * passed), at most clearOvertakenReadsMax times: a counter cleared on every
 * attempt fails UNAVAILABLE rather than mix cleared and uncleared shards.
 */
export async function rereadOvertaken<Result>(
  names: readonly string[],
  read: (names: readonly string[]) => Promise<{ result: Result; overtaken: Set<string> }>,
  merge: (into: Result, again: Result) => void,
): Promise<Result> {
  const first = await read(names);
  let overtaken = first.overtaken;
  for (let attempt = 0; overtaken.size > 0; attempt++) {
    if (attempt >= clearOvertakenReadsMax)
      throw new TallyError(ErrorCode.unavailable, `${[...overtaken][0]} was cleared or deleted during every attempt to read it: try again`);
    const again = await read([...overtaken]);
    merge(first.result, again.result);
    overtaken = again.overtaken;
  }
  return first.result;
}

/**
 * One read of a pair's shards: from the primary, or — only while the pair is
 * in sync, and only from a node that still answers as its follower at the
 * same epoch — from the follower. Anything else fails UNAVAILABLE (a read
 * during a failover fails and is retried, never served from a node whose
 * history the directory cannot vouch for).
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
    // The follower holds every acknowledged increment only as the in-sync
    // follower of this epoch. Not as a primary of a later one: a node deposed
    // since (a later failover it has not heard of) still answers as that
    // primary, without what its successor acknowledged.
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
  // Strings only when some counter here was cleared (the wire takes uint64 as decimal); otherwise nothing: all 0.
  const generations = plan.cleared ? plan.generations.map(String) : [];
  return readPairWithFallback(plan.pair, (address) => pool.readShards(address, plan.shardIds, timeoutMs, generations));
}

/** What a read of totals refuses: a sketch (distinct counter) has no exact total, its count is an estimate with an error. */
export interface ExactReadOptions {
  refuseDistinct?: boolean;
}

/** FAILED_PRECONDITION for a distinct counter: the service's words for a total read of a sketch. */
export function refuseDistinctRead(name: string, source: CounterInfo | undefined): void {
  if (source?.kind === 'distinct')
    throw new TallyError(ErrorCode.failedPrecondition, `counter "${name}" is a distinct counter: use CountDistinct`);
}

export async function readExact(
  names: readonly string[],
  directory: ExactReadDirectory,
  pool: NodePool,
  timeoutMs: number,
  options: ExactReadOptions = {},
): Promise<ExactReadResult> {
  await directory.readBarrier(names);
  const refuseDistinct = options.refuseDistinct === true;
  return rereadOvertaken(
    names,
    (some) => readExactOnce(some, directory, pool, timeoutMs, refuseDistinct),
    (into, again) => {
      for (const [name, total] of again.totals) into.totals.set(name, total);
      into.nodeCalls += again.nodeCalls;
      into.followerReads += again.followerReads;
    },
  );
}

async function readExactOnce(
  names: readonly string[],
  directory: ExactReadDirectory,
  pool: NodePool,
  timeoutMs: number,
  refuseDistinct: boolean,
): Promise<{ result: ExactReadResult; overtaken: Set<string> }> {
  // By pair index: a cluster has few pairs, a page of cold counters many shards on each.
  const plans: PairPlan[] = [];
  // Before any name is resolved: a deletion after this point changes it.
  const removedCountBefore = directory.removedCount;
  const totals = new Map<string, ExactTotal>();
  for (let nameIndex = 0; nameIndex < names.length; nameIndex++) {
    const name = names[nameIndex]!;
    if (totals.has(name)) continue;
    // The one lookup of this name before the node calls: the kind is checked on what the read then uses.
    const source = directory.get(name);
    if (refuseDistinct) refuseDistinctRead(name, source);
    if (source === undefined) {
      totals.set(name, { total: 0n, shardCount: 0, source, generation: 0 });
      continue;
    }
    const { shards, generation } = source;
    const entry: ExactTotal = { total: 0n, shardCount: shards.length, source, generation };
    totals.set(name, entry);
    for (let shardIndex = 0; shardIndex < shards.length; shardIndex++) {
      const shard = shards[shardIndex]!;
      let plan = plans[shard.pairIndex];
      if (plan === undefined)
        plans[shard.pairIndex] = plan = {
          pair: directory.pair(shard.pairIndex),
          shardIds: [],
          counterOf: [],
          entryOf: [],
          generations: [],
          cleared: false,
        };
      plan.shardIds.push(shard.shardId);
      plan.counterOf.push(name);
      plan.entryOf.push(entry);
      plan.generations.push(generation);
      if (generation > 0) plan.cleared = true;
    }
  }
  const planned = plans.filter((plan) => plan !== undefined);
  const results =
    planned.length === 1
      ? [await readPair(planned[0]!, pool, timeoutMs)]
      : await Promise.all(planned.map((plan) => readPair(plan, pool, timeoutMs)));
  let nodeCalls = 0;
  let followerReads = 0;
  const overtaken = new Set<string>();
  for (let planIndex = 0; planIndex < planned.length; planIndex++) {
    const plan = planned[planIndex]!;
    const { response, calls, fromFollower } = results[planIndex]!;
    nodeCalls += calls;
    if (fromFollower) followerReads++;
    const { entryOf } = plan;
    const shardTotals = response.totals;
    for (let index = 0; index < shardTotals.length; index++) {
      const entry = entryOf[index]!;
      // Most counters have one shard: its total is the one parsed, not 0n plus it.
      const shardTotal = BigInt(shardTotals[index]!);
      entry.total = entry.total === 0n ? shardTotal : entry.total + shardTotal;
    }
    const newer = response.newerGenerationIndexes;
    if (newer !== undefined && newer.length > 0) for (const name of overtakenCounters(plan.counterOf, newer)) overtaken.add(name);
  }
  // A name lookup costs more than anything else the router does per counter
  // of a page (hashing a fresh string, a probe of a table of millions): only
  // when some counter was deleted while the read was out is each looked up again.
  const someDeleted = directory.removedCount !== removedCountBefore;
  for (const [name, entry] of totals) {
    // Deleted while this read was out: some shards may have been dropped
    // (answering 0) before it reached them, others not. Overtaken like a
    // clear: read again, it is a counter never written.
    if (someDeleted && entry.source !== undefined && !sameCounter(directory.get(name), entry.source)) overtaken.add(name);
    if (!overtaken.has(name) && !isInt64(entry.total)) throw new TallyError(ErrorCode.outOfRange, `the total of ${name} is beyond int64`);
  }
  return { result: { totals, nodeCalls, followerReads }, overtaken };
}
