// A whole directory as one JSON document, to move it between stores
// (`tally directory export|import`: embedded SQLite <-> etcd) with every
// router stopped. It carries what the nodes' data depends on: pairs with
// their epochs and identities, every counter with its shard ids, growths
// and generation, the drops and clears still owed, and the next shard id
// (an id is never given out twice, not even after a move). Recent clear
// keys are left behind: a keyed clear retried across a move clears again.
import { ErrorCode, TallyError } from '../../wire/index.ts';
import {
  advertisedOfMembers,
  advertisedProblem,
  counterKinds,
  type CounterInfo,
  type PairInfo,
  type DirectorySnapshot,
  type SnapshotCounter,
  type SnapshotPair,
  snapshotFormat,
  snapshotVersion,
} from './contract.ts';

export {
  snapshotFormat,
  snapshotVersion,
  type CounterRecord,
  type DirectorySnapshot,
  type SnapshotCounter,
  type SnapshotPair,
} from './contract.ts';

export function snapshotPairOf(pair: PairInfo): SnapshotPair {
  return {
    pairIndex: pair.pairIndex,
    primary: pair.primary,
    follower: pair.follower,
    epoch: pair.epoch.toString(),
    inSync: pair.inSync,
    primaryId: pair.primaryId,
    followerId: pair.followerId,
    ackedLsn: pair.ackedLsn.toString(),
    legacy: pair.legacy,
    replaced: pair.replaced,
    addedOnline: pair.addedOnline,
    draining: pair.draining,
    configVersion: pair.configVersion.toString(),
    advertised: advertisedOfMembers(pair.advertised, [pair.primary, pair.follower]),
  };
}

export function snapshotCounterOf(counter: CounterInfo): SnapshotCounter {
  return {
    name: counter.name,
    kind: counter.kind,
    window: { ...counter.window },
    createdMs: counter.createdMs,
    autoscale: counter.autoscale,
    generation: counter.generation,
    ttlMs: counter.ttlMs,
    shards: counter.shards.map((shard): [number, number] => [shard.shardId, shard.pairIndex]),
    writableShardCount: counter.writableShardCount,
    growths: counter.growths.map((growth) => ({ ...growth })),
  };
}

export function pairInfoOf(pair: SnapshotPair): PairInfo {
  return {
    ...pair,
    epoch: BigInt(pair.epoch),
    ackedLsn: BigInt(pair.ackedLsn),
    configVersion: BigInt(pair.configVersion ?? '0'),
    advertised: advertisedOfMembers(pair.advertised ?? {}, [pair.primary, pair.follower]),
  };
}

function fail(what: string): never {
  throw new TallyError(ErrorCode.invalidArgument, `not a directory export: ${what}`);
}

const isCount = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) >= 0;
const isDecimal = (value: unknown): value is string => typeof value === 'string' && /^\d{1,19}$/.test(value);

/**
 * Checks a parsed export before any store is touched: its shape, and that
 * it is consistent (pairs numbered 0.., every shard on a known pair, no
 * shard id twice and every one below shardIdNext, names unique).
 */
export function validateSnapshot(value: unknown): DirectorySnapshot {
  if (typeof value !== 'object' || value === null) fail('not a JSON object');
  const snapshot = value as Partial<DirectorySnapshot>;
  if (snapshot.format !== snapshotFormat) fail(`format is ${String(snapshot.format)}, expected ${snapshotFormat}`);
  if (snapshot.version !== snapshotVersion) fail(`version ${String(snapshot.version)} is not ${snapshotVersion}`);
  if (!isCount(snapshot.shardIdNext) || snapshot.shardIdNext < 1) fail('shardIdNext');
  if (!Array.isArray(snapshot.pairs) || !Array.isArray(snapshot.counters) || !Array.isArray(snapshot.shardTasks))
    fail('pairs, counters and shardTasks must be arrays');
  snapshot.pairs.forEach((pair, index) => {
    if (pair?.pairIndex !== index) fail(`pair ${index} is numbered ${String(pair?.pairIndex)}`);
    if (typeof pair.primary !== 'string' || typeof pair.follower !== 'string' || pair.primary === pair.follower)
      fail(`pair ${index} addresses`);
    if (!isDecimal(pair.epoch) || !isDecimal(pair.ackedLsn)) fail(`pair ${index} epoch or ackedLsn`);
    if (pair.configVersion !== undefined && !isDecimal(pair.configVersion)) fail(`pair ${index} configVersion`);
    if (pair.advertised !== undefined) {
      const problem = advertisedProblem(pair.advertised, [pair.primary, pair.follower]);
      if (problem !== undefined) fail(`pair ${index}: ${problem}`);
    }
  });
  const seenIds = new Set<number>();
  const seenNames = new Set<string>();
  for (const counter of snapshot.counters) {
    const name = counter?.name;
    if (typeof name !== 'string' || name.length === 0 || seenNames.has(name)) fail(`counter name ${String(name)}`);
    seenNames.add(name);
    if (!counterKinds.includes(counter.kind)) fail(`counter ${name} kind ${String(counter.kind)}`);
    if (!Array.isArray(counter.shards) || counter.shards.length === 0) fail(`counter ${name} has no shards`);
    for (const [shardId, pairIndex] of counter.shards) {
      if (!isCount(shardId) || shardId >= snapshot.shardIdNext || seenIds.has(shardId)) fail(`counter ${name} shard id ${shardId}`);
      if (!isCount(pairIndex) || pairIndex >= snapshot.pairs.length) fail(`counter ${name} shard on pair ${pairIndex}`);
      seenIds.add(shardId);
    }
    if (!isCount(counter.writableShardCount) || counter.writableShardCount > counter.shards.length)
      fail(`counter ${name} writableShardCount`);
    if (!isCount(counter.generation) || !isCount(counter.createdMs)) fail(`counter ${name} generation or createdMs`);
    if (counter.ttlMs !== null && !isCount(counter.ttlMs)) fail(`counter ${name} ttlMs`);
    if (!isCount(counter.window?.bucketMs) || !isCount(counter.window?.retentionMs)) fail(`counter ${name} window`);
    if (!Array.isArray(counter.growths)) fail(`counter ${name} growths`);
  }
  for (const task of snapshot.shardTasks) {
    if (!isCount(task?.shardId) || task.shardId >= snapshot.shardIdNext) fail(`shard task of shard ${String(task?.shardId)}`);
    if (task.kind !== 'drop' && task.kind !== 'clear') fail(`shard task kind ${String(task.kind)}`);
    if (!isCount(task.pairIndex) || task.pairIndex >= snapshot.pairs.length) fail(`shard task on pair ${task.pairIndex}`);
  }
  return snapshot as DirectorySnapshot;
}
