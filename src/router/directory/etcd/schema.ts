// The etcd directory's schema: its keys, and what they hold (the JSON of a
// counter, a pair and a shard task, each checked before it is written and
// again when it is read back), with the codecs between memory's shapes and
// those values. Pure: no etcd here.
//   counters/<name>          JSON StoredCounter (shards, growths, settings, recent clear keys)
//   pairs/<index>            JSON StoredPair (bigints as decimal strings)
//   shard-id-next            the next shard id never reserved, decimal: a router reserves a block of
//                            ids in one conditioned transaction and hands them out from memory
//   shard-tasks/<shardId>    JSON StoredTask: a drop or clear a node still owes
//   routers/<routerId>       presence, bound to the router's lease: JSON { seenRevision }
// Other keys under the prefix (the supervisor election's) are not the directory's.
//
import { ErrorCode, TallyError, shardsPerCounterMax } from '../../../wire/index.ts';
import {
  advertisedProblem,
  counterKinds,
  type AdvertisedNode,
  type CounterInfo,
  type CounterKind,
  type PairInfo,
  type ShardTask,
} from '../contract.ts';
import { pairInfoOf, snapshotPairOf, type CounterRecord } from '../snapshot.ts';

export const counterKeyPrefix = 'counters/';
export const pairKeyPrefix = 'pairs/';
export const taskKeyPrefix = 'shard-tasks/';
export const tombstoneKeyPrefix = 'tombstones/';
export const routerKeyPrefix = 'routers/';
export const shardIdNextKey = 'shard-id-next';

/** The first key after every key that starts with `prefix` (etcd's prefix range end). */
export function prefixEnd(prefix: Buffer): Buffer {
  const end = Buffer.from(prefix);
  for (let index = end.length - 1; index >= 0; index--) {
    if (end[index]! < 0xff) {
      end[index]!++;
      return end.subarray(0, index + 1);
    }
  }
  // All 0xff: to the end of the keyspace.
  return Buffer.from([0]);
}

/** A counter's value in etcd: the exported record and its recent keyed clears. */
export interface StoredCounter extends CounterRecord {
  /** Recent keyed clears: [base64 key, generation, clearedMs], oldest first. */
  clearKeys: [string, number, number][];
}

export interface StoredPair {
  primary: string;
  follower: string;
  epoch: string;
  inSync: boolean;
  primaryId: string;
  followerId: string;
  ackedLsn: string;
  legacy: boolean;
  replaced: boolean;
  /** Absent in values written before pairs could be added or drained: false. */
  addedOnline?: boolean;
  draining?: boolean;
  /** Decimal; absent in values written before configuration versions: 0. */
  configVersion?: string;
  /** Absent in values written before zones, and when no member advertised anything: {}. */
  advertised?: Record<string, AdvertisedNode>;
}

export interface StoredTask {
  pairIndex: number;
  kind: ShardTask['kind'];
  generation: number;
  createdMs: number;
}

export const isCount = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) >= 0;
export const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

export function invalid(what: string, why: string): never {
  throw new TallyError(ErrorCode.internal, `directory: ${what} in etcd is not valid: ${why}`);
}

/** A counter's value: checked before it is written and again when it is read back (so are the others). */
export function checkCounter(name: string, value: unknown): StoredCounter {
  const what = `counter ${name}`;
  if (!isObject(value)) invalid(what, 'not an object');
  const { kind, window, createdMs, autoscale, generation, ttlMs, shards, writableShardCount, growths, clearKeys } = value;
  if (!counterKinds.includes(kind as CounterKind)) invalid(what, `unknown kind ${String(kind)}`);
  if (!isObject(window) || !isCount(window.bucketMs) || !isCount(window.retentionMs)) invalid(what, 'window');
  if (!isCount(createdMs) || typeof autoscale !== 'boolean' || !isCount(generation)) invalid(what, 'createdMs, autoscale or generation');
  if (ttlMs !== null && !isCount(ttlMs)) invalid(what, 'ttlMs');
  if (!Array.isArray(shards) || shards.length < 1 || shards.length > shardsPerCounterMax) invalid(what, 'shard count');
  for (const shard of shards as unknown[]) {
    if (!Array.isArray(shard) || shard.length !== 2 || !isCount(shard[0]) || shard[0] < 1 || !isCount(shard[1])) invalid(what, 'a shard');
  }
  if (!Number.isInteger(writableShardCount) || (writableShardCount as number) < 1 || (writableShardCount as number) > shards.length)
    invalid(what, 'writableShardCount');
  if (!Array.isArray(growths)) invalid(what, 'growths');
  for (const growth of growths as unknown[]) {
    if (!isObject(growth) || !isCount(growth.previousShardCount) || growth.previousShardCount < 1 || !isCount(growth.grownMs))
      invalid(what, 'a growth');
  }
  if (!Array.isArray(clearKeys)) invalid(what, 'clearKeys');
  for (const entry of clearKeys as unknown[]) {
    if (!Array.isArray(entry) || entry.length !== 3 || typeof entry[0] !== 'string' || !isCount(entry[1]) || !isCount(entry[2]))
      invalid(what, 'a clear key');
  }
  return value as unknown as StoredCounter;
}

export function checkPair(pairIndex: number, value: unknown): StoredPair {
  const what = `pair ${pairIndex}`;
  if (!isObject(value)) invalid(what, 'not an object');
  for (const field of ['primary', 'follower', 'primaryId', 'followerId'] as const)
    if (typeof value[field] !== 'string') invalid(what, field);
  for (const field of ['epoch', 'ackedLsn'] as const)
    if (typeof value[field] !== 'string' || !/^\d{1,19}$/.test(value[field])) invalid(what, field);
  for (const field of ['inSync', 'legacy', 'replaced'] as const) if (typeof value[field] !== 'boolean') invalid(what, field);
  for (const field of ['addedOnline', 'draining'] as const)
    if (value[field] !== undefined && typeof value[field] !== 'boolean') invalid(what, field);
  if (value.configVersion !== undefined && (typeof value.configVersion !== 'string' || !/^\d{1,19}$/.test(value.configVersion)))
    invalid(what, 'configVersion');
  if (value.primary === value.follower) invalid(what, 'primary and follower are the same');
  if (value.advertised !== undefined) {
    const problem = advertisedProblem(value.advertised, [value.primary as string, value.follower as string]);
    if (problem !== undefined) invalid(what, problem);
  }
  return value as unknown as StoredPair;
}

export function checkTask(shardId: number, value: unknown): StoredTask {
  const what = `shard task ${shardId}`;
  if (!isObject(value)) invalid(what, 'not an object');
  if (value.kind !== 'drop' && value.kind !== 'clear') invalid(what, `kind ${String(value.kind)}`);
  if (!isCount(value.pairIndex) || !isCount(value.generation) || !isCount(value.createdMs)) invalid(what, 'fields');
  return value as unknown as StoredTask;
}

/** A tombstone's value: {incarnation, deletedMs}. */
export function checkTombstone(name: string, value: unknown): { incarnation: number; deletedMs: number } {
  const what = `tombstone ${name}`;
  if (!isObject(value)) invalid(what, 'not an object');
  if (!isCount(value.incarnation) || value.incarnation < 1 || !isCount(value.deletedMs)) invalid(what, 'fields');
  return { incarnation: value.incarnation, deletedMs: value.deletedMs };
}

export function encodeTombstone(incarnation: number, deletedMs: number): Buffer {
  return Buffer.from(JSON.stringify({ incarnation, deletedMs }));
}

export function parseJson(what: string, bytes: Buffer): unknown {
  try {
    return JSON.parse(bytes.toString('utf8'));
  } catch {
    return invalid(what, 'not JSON');
  }
}

/** A positive integer key part written as String(n), or undefined. */
export function parseId(text: string): number | undefined {
  const id = Number(text);
  return Number.isSafeInteger(id) && id >= 0 && String(id) === text ? id : undefined;
}

// ---- Codecs: memory's shapes <-> the stored values ------------------------------

/**
 * A pair's value: the export's JSON shape (snapshot.ts) without its index,
 * `advertised` left out when empty (a pair whose nodes advertise nothing is
 * stored as a pair without zones is).
 */
export function storedPairOf(pair: PairInfo): StoredPair {
  const { pairIndex: _pairIndex, advertised, ...stored } = snapshotPairOf(pair);
  return advertised === undefined || Object.keys(advertised).length === 0 ? stored : { ...stored, advertised };
}

/** A stored pair in memory; values from before drains and versions lacked read as their defaults. */
export function pairOfStored(pairIndex: number, stored: StoredPair): PairInfo {
  return pairInfoOf({ ...stored, pairIndex, addedOnline: stored.addedOnline ?? false, draining: stored.draining ?? false });
}

/** A pair's value, checked. */
export function encodePair(pair: PairInfo): Buffer {
  return Buffer.from(JSON.stringify(checkPair(pair.pairIndex, storedPairOf(pair))));
}

/** A counter's value as memory holds it, with the clear keys memory keeps beside it. */
export function storedCounterOf(counter: CounterInfo, clearKeys: readonly [string, number, number][]): StoredCounter {
  return {
    kind: counter.kind,
    window: { bucketMs: counter.window.bucketMs, retentionMs: counter.window.retentionMs },
    createdMs: counter.createdMs,
    autoscale: counter.autoscale,
    generation: counter.generation,
    ttlMs: counter.ttlMs,
    shards: counter.shards.map((shard): [number, number] => [shard.shardId, shard.pairIndex]),
    writableShardCount: counter.writableShardCount,
    growths: counter.growths.map((growth) => ({ previousShardCount: growth.previousShardCount, grownMs: growth.grownMs })),
    clearKeys: clearKeys.map((entry): [string, number, number] => [...entry]),
  };
}

export function encodeCounter(name: string, stored: StoredCounter): Buffer {
  return Buffer.from(JSON.stringify(checkCounter(name, stored)));
}

export function encodeTask(task: ShardTask): Buffer {
  const stored: StoredTask = { pairIndex: task.pairIndex, kind: task.kind, generation: task.generation, createdMs: task.createdMs };
  return Buffer.from(JSON.stringify(checkTask(task.shardId, stored)));
}

/** True when `stored` is `counter` with more of the same: its shards and growths extended, never changed. */
export function extendsCounter(counter: CounterInfo, stored: StoredCounter): boolean {
  if (stored.kind !== counter.kind || stored.createdMs !== counter.createdMs) return false;
  if (stored.shards.length < counter.shards.length || stored.growths.length < counter.growths.length) return false;
  for (let index = 0; index < counter.shards.length; index++) {
    const shard = counter.shards[index]!;
    const [shardId, pairIndex] = stored.shards[index]!;
    if (shard.shardId !== shardId || shard.pairIndex !== pairIndex) return false;
  }
  return true;
}

/** Two pairs alike in every stored field (a transaction retried by the client may have found its own first attempt). */
export function samePair(left: PairInfo, right: PairInfo): boolean {
  const leftStored = storedPairOf(left);
  const rightStored = storedPairOf(right);
  const fields = new Set([...Object.keys(leftStored), ...Object.keys(rightStored)]) as Set<keyof StoredPair>;
  // advertised is an object: compared by its JSON (both built in member order by advertisedOfMembers).
  return [...fields].every((field) => JSON.stringify(leftStored[field]) === JSON.stringify(rightStored[field]));
}
