// The counter directory's contract: per counter its shards, each shard's
// node pair, and the pairs themselves with their epoch. Two stores keep it:
// SqliteDirectory (embedded, one router) and EtcdDirectory (several routers
// share it). Reads come from memory, synchronously, on the hot path; every
// change is a Promise that resolves once it is durable in the store and
// visible in this router's memory. A directory never talks to nodes.
import { ErrorCode, TallyError, type WindowSetting } from '../../wire/index.ts';
import { countersMax, isZoneName, parseAddress, shardsTotalMax } from '../../common/index.ts';

export interface PairInfo {
  pairIndex: number;
  primary: string;
  follower: string;
  /** Bumped by every failover (change of roles); nodes refuse calls carrying an older epoch. */
  epoch: bigint;
  /** True only while the primary acknowledges nothing its follower has not committed. */
  inSync: boolean;
  /** The log identity of the node that is primary ('' before any node was made primary). */
  primaryId: string;
  /** The log identity last seen in the follower slot ('' before one answered). */
  followerId: string;
  /** The highest lsn the follower is known to have confirmed: every node made primary must hold at least this much. */
  ackedLsn: bigint;
  /**
   * Recorded before node identities existed: the node that answers as the
   * primary of the current epoch is adopted as the recorded primary.
   */
  legacy: boolean;
  /** An operator moved the follower slot (tally node replace): the directory's addresses win over --pairs. */
  replaced: boolean;
  /** Registered online (tally pair add), not by --pairs: a start whose --pairs lacks it keeps it. */
  addedOnline: boolean;
  /** No new shard is placed on it (tally pair drain); the shards it holds stay and serve. */
  draining: boolean;
  /**
   * Issued by the directory: every change to the pair makes it higher. Every
   * SetRole carries the version of the pair it was derived from, and a node
   * refuses a lower one than it obeyed (node-role.ts refusalOf): an order the
   * directory has superseded is never obeyed, whatever its timing.
   */
  configVersion: bigint;
  /**
   * What each member said of itself, by its address (the supervisor records
   * it from the node's status): its zone and where its partner replicates to.
   * Keyed by address, not slot, so a failover moves nothing; a member that
   * named neither has no entry.
   */
  advertised: Readonly<Record<string, AdvertisedNode>>;
}

/** What a node reports of itself: its failure domain, and the address its partner dials to replicate. */
export interface AdvertisedNode {
  /** '' when the node names no zone (--zone). */
  zone: string;
  /** host:port; '' when it is the address routers dial (--advertise-replication-address). */
  replicationAddress: string;
}

export type PairUpdate = Partial<
  Pick<
    PairInfo,
    'primary' | 'follower' | 'epoch' | 'inSync' | 'primaryId' | 'followerId' | 'ackedLsn' | 'replaced' | 'draining' | 'advertised'
  >
> & {
  /** The version a node reports obeying: the next one issued is above it too (a directory restored from an older copy). */
  configVersionAbove?: bigint;
};

/** The pair after an update, by the rules both stores keep: epoch and acknowledged lsn never go back, the version always goes up. */
export function nextPairState(pair: PairInfo, update: PairUpdate): PairInfo {
  const { configVersionAbove, ...fields } = update;
  const next: PairInfo = { ...pair, ...fields };
  if (next.epoch < pair.epoch) throw new Error(`pair ${pair.pairIndex}: epoch may not go back from ${pair.epoch} to ${next.epoch}`);
  if (next.ackedLsn < pair.ackedLsn)
    throw new Error(`pair ${pair.pairIndex}: acknowledged lsn may not go back from ${pair.ackedLsn} to ${next.ackedLsn}`);
  if (next.primary === next.follower) throw new Error(`pair ${pair.pairIndex}: primary and follower are both ${next.primary}`);
  // Once a primary identity is recorded the pair is no longer legacy: identities decide from here on.
  next.legacy = pair.legacy && next.primaryId === '';
  next.advertised = advertisedOfMembers(next.advertised, [next.primary, next.follower]);
  const floor = configVersionAbove !== undefined && configVersionAbove > pair.configVersion ? configVersionAbove : pair.configVersion;
  next.configVersion = floor + 1n;
  return next;
}

/**
 * Only the members' entries, and only those that say something: a node
 * replaced at another address leaves nothing behind, and a node that names
 * neither a zone nor a replication address has no entry (the pair's value
 * stays the value of a pair without zones).
 */
export function advertisedOfMembers(
  advertised: Readonly<Record<string, AdvertisedNode>>,
  members: readonly string[],
): Record<string, AdvertisedNode> {
  const kept: Record<string, AdvertisedNode> = {};
  for (const address of members) {
    const entry = Object.hasOwn(advertised, address) ? advertised[address] : undefined;
    if (entry !== undefined && (entry.zone !== '' || entry.replicationAddress !== ''))
      kept[address] = { zone: entry.zone, replicationAddress: entry.replicationAddress };
  }
  return kept;
}

/**
 * Why `value` is not a pair's advertised map (an object of member address to
 * { zone, replicationAddress }, members only), or undefined when it is: each
 * store checks what it reads back with it.
 */
export function advertisedProblem(value: unknown, members: readonly string[]): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'advertised is not an object';
  for (const [address, entry] of Object.entries(value as Record<string, unknown>)) {
    if (!members.includes(address)) return `advertised names ${address}, not a member`;
    if (typeof entry !== 'object' || entry === null) return `advertised ${address} is not an object`;
    const { zone, replicationAddress } = entry as Record<string, unknown>;
    if (typeof zone !== 'string' || !isZoneName(zone)) return `advertised ${address} zone`;
    if (typeof replicationAddress !== 'string') return `advertised ${address} replicationAddress`;
    if (replicationAddress !== '') {
      try {
        parseAddress(replicationAddress, 'replicationAddress');
      } catch {
        return `advertised ${address} replicationAddress ${replicationAddress}`;
      }
    }
  }
  return undefined;
}

/** A stored advertised map (JSON text), checked: INTERNAL naming `what` when it is not one. */
export function parseAdvertised(what: string, text: string, primary: string, follower: string): Record<string, AdvertisedNode> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    value = undefined;
  }
  const problem = advertisedProblem(value, [primary, follower]);
  if (problem !== undefined) throw new TallyError(ErrorCode.internal, `directory: ${what} is not valid: ${problem}`);
  return advertisedOfMembers(value as Record<string, AdvertisedNode>, [primary, follower]);
}

/** The zone a member reported ('' when none). */
export function zoneOf(pair: PairInfo, address: string): string {
  return Object.hasOwn(pair.advertised, address) ? pair.advertised[address]!.zone : '';
}

/** Where a member's partner replicates to: the address it advertised, else the one routers dial. */
export function replicationAddressOf(pair: PairInfo, address: string): string {
  const advertised = Object.hasOwn(pair.advertised, address) ? pair.advertised[address]!.replicationAddress : '';
  return advertised === '' ? address : advertised;
}

export interface ShardInfo {
  shardIndex: number;
  /** Cluster-wide id the nodes know the shard by. */
  shardId: number;
  pairIndex: number;
}

export interface Growth {
  previousShardCount: number;
  grownMs: number;
}

/**
 * What a counter counts: a total (Increment, Read, windows), a distinct count
 * (AddDistinct, CountDistinct) or a member count (SetMember, IsMember, Read).
 * Fixed when the counter is created.
 */
export type CounterKind = 'total' | 'distinct' | 'membership';
export const counterKinds: readonly CounterKind[] = ['total', 'distinct', 'membership'];

export interface CounterInfo {
  readonly name: string;
  readonly kind: CounterKind;
  /** Totals only: time buckets every increment also lands in ({0, 0}: none). */
  readonly window: WindowSetting;
  /** Every shard, read by exact and cached reads (the announced ones too). */
  readonly shards: readonly ShardInfo[];
  /**
   * The first shards that take writes (unkeyed picks and keyed homes).
   * Equal to shards.length except while a growth made through another
   * router is announced but not yet seen by every live router: until then
   * its new shards are read (they hold nothing yet) but not written, so no
   * router can send a write where another's read would miss it.
   */
  readonly writableShardCount: number;
  readonly createdMs: number;
  /** Every growth, oldest first: keyed retries consult where earlier shard counts sent a key. */
  readonly growths: readonly Growth[];
  /** False when an operator fixed the shard count: heat never grows it. */
  readonly autoscale: boolean;
  /**
   * How many times the counter was cleared. Every write and read the router
   * sends a shard carries it: a shard at an older generation has not seen
   * the latest clear yet (it reads as empty, and is cleared before a write
   * tagged newer applies); a write tagged older was sent before the clear
   * and is cleared away.
   */
  readonly generation: number;
  /** Its own time to live (Configure): null follows the router default, 0 never expires. */
  readonly ttlMs: number | null;
  /**
   * When a write last resolved the counter (getOrCreate*), or a TTL was set,
   * on this router's monotonic clock (monotonicNowMs): idle time is never
   * read off the wall clock, so NTP stepping it by hours either way neither
   * expires a counter early nor keeps it forever (G11). Memory only: after a
   * restart every counter counts from the load, so a restart can only
   * postpone an expiry, never bring one forward.
   */
  readonly lastWriteMonotonicMs: number;
}

/**
 * Work a node still owes a shard the directory no longer holds as it was:
 * a drop (its counter was deleted) or a clear to a generation (its counter
 * was cleared). Kept in the directory until the shard's primary confirms
 * it, so a router restart goes on sending it. One per shard: a drop
 * replaces a clear, a newer clear an older one.
 */
export interface ShardTask {
  shardId: number;
  pairIndex: number;
  kind: 'drop' | 'clear';
  /** clear: the generation to clear to (0 for a drop). */
  generation: number;
  createdMs: number;
}

/** What clearCounter did. */
export interface ClearOutcome {
  counter: CounterInfo;
  /** The counter's generation from this clear on (the earlier clear's, for a repeated key). */
  generation: number;
  /** False when the key named a clear already made: nothing changed. */
  applied: boolean;
}

export interface PairAddresses {
  primary: string;
  follower: string;
}

/** Caps on what the directory holds; counters and shards that exist are never refused. */
export interface DirectoryLimits {
  /** Counters in all: creating one more is RESOURCE_EXHAUSTED. */
  countersMax: number;
  /** Shards over all counters: creating or growing past it is RESOURCE_EXHAUSTED. */
  shardsTotalMax: number;
}

export const defaultDirectoryLimits: DirectoryLimits = { countersMax, shardsTotalMax };

/** One counter as a listing shows it, read from the directory's rows. */
export interface ListedCounterRow {
  name: string;
  kind: CounterKind;
  shardCount: number;
  /** As CounterInfo.ttlMs. */
  ttlMs: number | null;
}

/** A range of names for scan: after `after` (exclusive), from `from` (inclusive), before `before` (exclusive; undefined: no end). */
export interface NameRange {
  after: string;
  from: string;
  before: string | undefined;
}

/**
 * The directory as every router part sees it, whichever store keeps it.
 * Reads are synchronous (memory). Changes resolve once durable and
 * published in memory; they fail with TallyError (NOT_FOUND,
 * FAILED_PRECONDITION, RESOURCE_EXHAUSTED for caps and a full disk,
 * UNAVAILABLE when the store cannot be reached: nothing changed, or for
 * the store it is as if nothing changed).
 */
export interface Directory {
  /** Things an operator should hear about at start (logged by main). */
  readonly warnings: readonly string[];

  get(name: string): CounterInfo | undefined;
  /**
   * Counters removed from memory since the store opened (deleted through
   * any router), never going back: unchanged across a read means no
   * counter the read resolved was deleted while it was out.
   */
  readonly removedCount: number;
  /**
   * Resolves once memory may be trusted for an exact read of `names`: this
   * router is in touch with the store (UNAVAILABLE when it may have missed
   * changes), and names unknown to memory were looked up in the store, so
   * a counter created through another router is never read as absent.
   * Immediate for the embedded store (it alone changes the directory).
   */
  readBarrier(names: readonly string[]): Promise<void>;
  /**
   * Up to `limit` counters in `range`, in byte order of their UTF-8 names,
   * read from the store (a page costs its rows, not the directory's size).
   */
  scan(range: NameRange, limit: number): Promise<ListedCounterRow[]>;
  /**
   * The counter, created on its first use (see getOrCreateMany). Using a
   * counter as another kind than it was created as is FAILED_PRECONDITION.
   * Every write resolves its counter here or in getOrCreateMany: that is
   * when its last write time is taken (lastWriteMonotonicMs).
   */
  getOrCreate(name: string, kind?: CounterKind, partitions?: number): Promise<CounterInfo>;
  /**
   * The named counters, one per name (names may repeat), each created on
   * its first use: with one shard, or for a membership counter with its
   * fixed partitions (one shard each, never grown: a member must always
   * live in the same partition). Every name is checked before anything is
   * created: a counter of another kind (FAILED_PRECONDITION) or a cap
   * (RESOURCE_EXHAUSTED) creates nothing. All of the call's new counters
   * are created in one store transaction. Concurrent calls naming the same
   * new counter get one counter, through any router.
   */
  getOrCreateMany(names: readonly string[], kind?: CounterKind, partitions?: number): Promise<CounterInfo[]>;
  /**
   * The write path's getOrCreateMany (one-shard counters of `kind`): sets
   * slots[i] to names[i]'s slot in counterColumns, with no handle per
   * counter. A deleted counter's slot keeps its facts for slotReuseDelayMs,
   * longer than any call, so a call holding slots routes as it would have
   * with the counter it resolved.
   */
  resolveSlots(names: readonly string[], kind: CounterKind, slots: Int32Array): Promise<void>;
  /** Routing facts by counter slot (resolveSlots). */
  readonly counterColumns: CounterColumns;
  /** Grows a counter (never shrinks); each growth is recorded for keyed retries. */
  setShards(name: string, shardCount: number): Promise<{ previousShardCount: number; counter: CounterInfo }>;
  /** Sets a total counter's window; nodes learn it with the next increment. */
  setWindow(name: string, window: WindowSetting): Promise<CounterInfo>;
  /**
   * Sets a counter's own time to live: null follows the router default, 0
   * never expires. Restarts its idle clock, as a write does.
   */
  setTtl(name: string, ttlMs: number | null): Promise<CounterInfo>;
  /** Turns heat-driven growth on or off for one counter. */
  setAutoscale(name: string, autoscale: boolean): Promise<CounterInfo>;
  /**
   * Every counter, in creation order, as a live iterator: it survives
   * creations (visited at the end) and deletions (skipped) between steps,
   * so a sweep can walk it a slice at a time. reuseHandle: one handle,
   * pointed at each counter in turn (valid until the next step), for a walk
   * that keeps names, not handles: no allocation per counter.
   */
  liveCounters(options?: { reuseHandle?: boolean }): IterableIterator<CounterInfo>;
  /**
   * Deletes a counter: it leaves the directory and a drop per shard is
   * recorded for the nodes, in one transaction. From then on the name reads
   * as never written and is free; its shard ids are never given out again.
   * NOT_FOUND when there is no such counter.
   */
  deleteCounter(name: string): Promise<CounterInfo>;
  /**
   * Deletes the counters that exist, in one transaction; returns those
   * deleted. With `tombstone: 'next'` (a DeleteCounter in a region that
   * peers) each deleted name's tombstone is raised to its incarnation plus
   * one in the same transaction, so the delete travels to the peer regions.
   */
  deleteCounters(names: readonly string[], options?: DeleteOptions): Promise<CounterInfo[]>;
  /**
   * A peer region deleted `name` up to `incarnation`: when this region's
   * incarnation of the name is lower, its counter (if any) is deleted and
   * the tombstone raised to `incarnation`, in one transaction; otherwise
   * nothing changes (keyed by the incarnation it makes: receivers racing on
   * one name delete once). Returns the counter deleted, if any, and whether
   * the tombstone moved.
   */
  deleteUpTo(name: string, incarnation: number): Promise<{ deleted: CounterInfo | undefined; applied: boolean }>;
  /** The name's tombstone: the newest delete of it this region applied (undefined: none kept). */
  tombstone(name: string): Tombstone | undefined;
  /** Every tombstone kept, for the region publisher. */
  tombstones(): IterableIterator<Tombstone>;
  /**
   * Forgets tombstones recorded `retentionMs` or more ago (the store's
   * clock of stored times) of names with no counter: a live counter keeps
   * its name's tombstone, which is its incarnation. Returns how many went.
   */
  pruneTombstones(retentionMs: number): Promise<number>;
  /**
   * Clears a counter: bumps its generation, the cut, in one transaction
   * with a clear task per shard and, when keyed, the key. A key seen within
   * windowMs answers the clear it made, applied=false, and changes nothing.
   */
  clearCounter(name: string, key: Buffer, windowMs: number): Promise<ClearOutcome>;
  /** Drops and clears nodes still owe, oldest shard first. */
  pendingShardTasks(): ShardTask[];
  /** One retry round's tasks: at most perPairMax per pair, none of the pairs `skipPair` names. */
  shardTasksForRound(perPairMax: number, skipPair: (pairIndex: number) => boolean): ShardTask[];
  shardTask(shardId: number): ShardTask | undefined;
  readonly pendingShardTaskCount: number;
  readonly pendingShardTaskCounts: Readonly<Record<ShardTask['kind'], number>>;
  /** Forgets tasks their node has confirmed, only as they were sent (a newer one recorded meanwhile stays owed). */
  completeShardTasks(confirmed: readonly ShardTask[]): Promise<void>;
  pair(pairIndex: number): PairInfo;
  /**
   * Changes a pair (roles, epoch, sync state, identities): durable, then
   * published. The epoch and the acknowledged lsn never go back. With
   * several routers the change is conditioned on the pair as this router
   * last saw it (and, asSupervisor, on still holding the supervisor
   * lease: the pair supervisor's own role changes): FAILED_PRECONDITION
   * when another change got there first; memory then holds the winner's.
   */
  updatePair(pairIndex: number, update: PairUpdate, options?: { asSupervisor?: boolean }): Promise<PairInfo>;
  /**
   * Registers a new pair (its nodes running and empty; the supervisor
   * assigns their roles): new shards may be placed on it from now on.
   * FAILED_PRECONDITION when either address already belongs to a pair.
   */
  addPair(addresses: PairAddresses): Promise<PairInfo>;
  /** Stops (or resumes) placing new shards on a pair; FAILED_PRECONDITION for the last undrained pair. */
  setPairDraining(pairIndex: number, draining: boolean): Promise<PairInfo>;
  /** Shards placed on a pair, over all counters. */
  shardCountOfPair(pairIndex: number): number;
  /** Why the pair's two nodes share a zone while the cluster has another; '' when they do not. */
  zoneWarning(pairIndex: number): string;
  /** The pair whose primary or follower is at address, or undefined. */
  pairOf(address: string): PairInfo | undefined;
  allPairs(): readonly PairInfo[];
  readonly counterCount: number;
  /** Shards over all counters. */
  readonly shardCount: number;
  /** The whole directory as one document (tally directory export); see directory-snapshot.ts. */
  exportSnapshot(): Promise<DirectorySnapshot>;
  /**
   * False while this router cannot vouch for its copy of the directory: the
   * etcd store when its lease keepalive has not succeeded for half the
   * lease TTL, or its watch is down (its lease may have expired, so another
   * router may have changed what it holds, e.g. activated a growth it has
   * not seen). The router then refuses writes and exact reads (UNAVAILABLE)
   * rather than guess; every change already fails so. The embedded store is
   * always fresh.
   */
  readonly fresh: boolean;
  /** Ids of the live routers sharing this directory (etcd presence keys), for status; empty for the embedded store. */
  liveRouterIds(): readonly string[];
  close(): Promise<void>;
}

/**
 * A deleted name, kept for the regions that peer (docs/regions.md: delete
 * across regions): how many deletes of it this region applied, from any
 * region, and when the newest was recorded (for retention). A counter
 * created under the name starts at this incarnation.
 */
export interface Tombstone {
  name: string;
  incarnation: number;
  deletedMs: number;
}

export interface DeleteOptions {
  /** 'next': record a tombstone one incarnation past the name's current one (a DeleteCounter); absent: none (TTL expiry). */
  tombstone?: 'next';
}

/**
 * Routing facts by counter slot, as columns: what the write path reads per
 * item without a handle per counter (CounterTable holds them).
 */
export interface CounterColumns {
  shardCountOf(slot: number): number;
  writableShardCountOf(slot: number): number;
  shardIdOf(slot: number, shardIndex: number): number;
  pairIndexOf(slot: number, shardIndex: number): number;
  generationOf(slot: number): number;
  windowOf(slot: number): WindowSetting;
  growthsOf(slot: number): readonly Growth[];
}

// The whole directory as one JSON document (tally directory export|import); snapshot.ts reads and checks it.
export const snapshotFormat = 'tally-directory';
export const snapshotVersion = 1;

export interface SnapshotPair {
  pairIndex: number;
  primary: string;
  follower: string;
  /** Decimal: epochs and lsns are int64. */
  epoch: string;
  inSync: boolean;
  primaryId: string;
  followerId: string;
  ackedLsn: string;
  legacy: boolean;
  replaced: boolean;
  addedOnline: boolean;
  draining: boolean;
  /** Decimal; absent in exports from before versions (read as 0). */
  configVersion?: string;
  /** What each member advertised (zone, replication address); absent in exports from before zones ({}). */
  advertised?: Record<string, AdvertisedNode>;
}

/** A counter as the export and the etcd store both write it. */
export interface CounterRecord {
  kind: CounterKind;
  window: WindowSetting;
  createdMs: number;
  autoscale: boolean;
  generation: number;
  ttlMs: number | null;
  /** [shardId, pairIndex] per shard, in shard index order. */
  shards: [number, number][];
  writableShardCount: number;
  growths: Growth[];
}

export interface SnapshotCounter extends CounterRecord {
  name: string;
}

export interface DirectorySnapshot {
  format: typeof snapshotFormat;
  version: typeof snapshotVersion;
  exportedMs: number;
  /** Every shard id below it may have been used: the importing store gives out ids from here. */
  shardIdNext: number;
  pairs: SnapshotPair[];
  counters: SnapshotCounter[];
  shardTasks: ShardTask[];
}
