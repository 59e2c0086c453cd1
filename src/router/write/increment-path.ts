// The write path: picks a shard per increment and sends each node its items
// as one atomic group through that node's coalescing sender. Unkeyed items go
// to a uniformly random shard (never chosen by writer, G6) and are summed per
// shard within the group; keyed items to the shard their key hashes to, so a
// retry lands where its first attempt did. Routing reads the directory's
// columns by counter slot: no promise, closure, handle or shard object per
// item (a keyed item alone becomes an ApplyItem, which the wire carries).
import { status } from '@grpc/grpc-js';
import {
  ErrorCode,
  ErrorReason,
  TallyError,
  errorCodeOfGrpcStatus,
  unavailableRetryDelayMs,
  withReason,
  INT64_MAX,
  INT64_MIN,
  steadyWallClock,
  type WindowSetting,
  type shardV1,
} from '../../common/index.ts';
import type { CounterColumns, IncrementDirectory } from '../directory/index.ts';
import { type NodePool, NotAppliedError, itemsWireBytes, type ApplyItem, type OutgoingGroup } from '../nodes/index.ts';

export interface ValidIncrement {
  counter: string;
  /** int64: a number when exact as one (|amount| < 2^53), else a bigint. */
  amount: number | bigint;
  idempotencyKey: Buffer;
}

/** One increment's answer, in the shape of the wire's IncrementResponse. */
export interface IncrementOutcome {
  applied: boolean;
  /** The index of the shard it went to. */
  shard: number;
}

/** FNV-1a, 32 bits: stable across processes and versions, cheap. */
export function hashKey(key: Buffer): number {
  let hash = 0x811c9dc5;
  for (let index = 0; index < key.length; index++) {
    hash ^= key[index]!;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}

const safeIntegerMax = BigInt(Number.MAX_SAFE_INTEGER);

/** a + b as an int64 (a number when exact), or undefined beyond int64. */
export function addInt64(a: number | bigint, b: number | bigint): number | bigint | undefined {
  if (typeof a === 'number' && typeof b === 'number') {
    // Both below 2^53 in size: a safe result is the exact sum, an unsafe one may be rounded.
    const sum = a + b;
    if (Number.isSafeInteger(sum)) return sum;
  }
  const sum = BigInt(a) + BigInt(b);
  if (sum > INT64_MAX || sum < INT64_MIN) return undefined;
  return sum <= safeIntegerMax && sum >= -safeIntegerMax ? Number(sum) : sum;
}

/** The plain increments a group carries to one shard, summed. */
interface ShardSum {
  shardId: number;
  amount: number | bigint;
  window: WindowSetting;
  /** The counter's generation when routed (shard.proto, PackedIncrements.generation). */
  generation: number;
  /** Increments summed. */
  count: number;
}

const twoTo32 = 2 ** 32;

/**
 * What one call sends one node: one atomic group. Plain (unkeyed) increments
 * to one shard are summed into one packed record; keyed increments stay one
 * item each (the node records each key). Only this call's increments are
 * summed: the node answers per group, and a group must fail alone (an
 * overflow, say) whatever else the node call carries.
 */
export class NodeGroup {
  /** Call item indexes (and their shard indexes) of the plain increments. */
  readonly plainIndexes: number[] = [];
  readonly plainShardIndexes: number[] = [];
  /** Call item indexes (and shard indexes) of the keyed items, in the order of `items`. */
  readonly keyedIndexes: number[] = [];
  readonly keyedShardIndexes: number[] = [];
  readonly items: ApplyItem[] = [];
  private readonly sums = new Map<number, ShardSum>();
  /** Sums closed because adding more would have left int64 (never in practice). */
  private readonly fullSums: ShardSum[] = [];

  addPlain(index: number, shardIndex: number, shardId: number, amount: number | bigint, window: WindowSetting, generation = 0): void {
    this.plainIndexes.push(index);
    this.plainShardIndexes.push(shardIndex);
    const sum = this.sums.get(shardId);
    if (sum === undefined) {
      this.sums.set(shardId, { shardId, amount, window, generation, count: 1 });
      return;
    }
    const next = addInt64(sum.amount, amount);
    if (next !== undefined) {
      sum.amount = next;
      sum.count++;
      return;
    }
    // The node checks the total after each record: two records reach the same total as one would.
    this.fullSums.push(sum);
    this.sums.set(shardId, { shardId, amount, window, generation, count: 1 });
  }

  addKeyed(index: number, shardIndex: number, item: ApplyItem): void {
    this.keyedIndexes.push(index);
    this.keyedShardIndexes.push(shardIndex);
    this.items.push(item);
  }

  /** The group as the wire carries it: one run of packed records per window setting and generation. */
  encode(): OutgoingGroup {
    const runs: Run[] = [];
    let records = 0;
    for (const sum of this.fullSums) records += collect(runs, sum);
    for (const sum of this.sums.values()) records += collect(runs, sum);
    const increments: shardV1.PackedIncrements[] = new Array(runs.length);
    for (let runIndex = 0; runIndex < runs.length; runIndex++) {
      const { window, generation, sums } = runs[runIndex]!;
      const buffer = Buffer.allocUnsafe(sums.length * 16);
      let incrementCount = 0;
      for (let index = 0; index < sums.length; index++) {
        const { shardId, amount, count } = sums[index]!;
        const offset = index * 16;
        incrementCount += count;
        buffer.writeUInt32LE(shardId % twoTo32, offset);
        buffer.writeUInt32LE(Math.floor(shardId / twoTo32), offset + 4);
        if (typeof amount === 'number') {
          const high = Math.floor(amount / twoTo32);
          buffer.writeUInt32LE(amount - high * twoTo32, offset + 8);
          buffer.writeInt32LE(high, offset + 12);
        } else {
          buffer.writeBigInt64LE(amount, offset + 8);
        }
      }
      const packed: shardV1.PackedIncrements = { records: buffer, incrementCount };
      // Absent means none (0, 0) and costs nothing on the wire.
      if (window.bucketMs > 0) {
        packed.windowBucketMs = window.bucketMs;
        packed.windowRetentionMs = window.retentionMs;
      }
      if (generation > 0) packed.generation = generation;
      increments[runIndex] = packed;
    }
    return {
      items: this.items,
      increments,
      itemCount: records + this.items.length,
      incrementCount: this.plainIndexes.length + this.items.length,
      sizeBytes: records * 16 + itemsWireBytes(this.items),
    };
  }
}

/** Sums sharing one window setting and generation (the same counter's, or equal ones): one PackedIncrements. */
interface Run {
  window: WindowSetting;
  generation: number;
  sums: ShardSum[];
}

/** Adds a sum to the run of its window setting; returns the records it adds (0: it cancelled out, nothing to send). */
function collect(runs: Run[], sum: ShardSum): number {
  if (sum.amount === 0 || sum.amount === 0n) return 0;
  // A call names few counters: a scan beats a map.
  for (const run of runs) {
    if (
      run.window.bucketMs === sum.window.bucketMs &&
      run.window.retentionMs === sum.window.retentionMs &&
      run.generation === sum.generation
    ) {
      run.sums.push(sum);
      return 1;
    }
  }
  runs.push({ window: sum.window, generation: sum.generation, sums: [sum] });
  return 1;
}

/** What one round's sends report back to apply(). */
interface RoundState {
  outcomes: IncrementOutcome[];
  /** Items of groups certainly not applied, to send again. */
  retry: number[];
  failures: TallyError[];
  round: number;
  waitUntilMs: number;
  /** Nodes that refused this call: not chosen again in it. */
  avoid: Set<string>;
  /** Set once any group of the call was applied or may have been: the call's failure is then OUTCOME_UNKNOWN. */
  progress: { mayHaveApplied: boolean };
}

/** Per counter and round: the shard indexes an unkeyed increment may go to, and each one's primary. */
interface Route {
  shardIndexes: number[];
  addresses: string[];
}

/** A call's counters: each item's slot in the directory's columns, and the shard count it routes keyed items by. */
interface Resolved {
  slots: Int32Array;
  routedShardCounts: Int32Array;
}

export class IncrementPath {
  constructor(
    private readonly directory: IncrementDirectory,
    private readonly pool: NodePool,
    /** Must equal the nodes' dedup window: growths younger than this are consulted. */
    private readonly dedupWindowMs: number,
    /**
     * How long an increment with no shard to go to (its node down, nothing
     * sent) waits for a failover before failing UNAVAILABLE: a dead
     * primary's follower takes over within this.
     */
    private readonly failoverWaitMs: number = 0,
    private readonly random: () => number = Math.random,
    /** Wall-clock times that are stored or shown and compared later: steady, so a step while running changes no decision. */
    private readonly now: () => number = steadyWallClock(),
  ) {}

  /**
   * Shards an earlier attempt of this key may have gone to: where the shard
   * counts before each growth younger than the dedup window sent it.
   */
  private earlierHomes(slot: number, key: Buffer, routedShardCount: number): number[] {
    const nowMs = this.now();
    const hash = hashKey(key);
    const home = hash % routedShardCount;
    const homes = new Set<number>();
    for (const growth of this.columns.growthsOf(slot)) {
      if (nowMs - growth.grownMs >= this.dedupWindowMs || growth.previousShardCount >= routedShardCount) continue;
      const earlier = hash % growth.previousShardCount;
      if (earlier !== home) homes.add(earlier);
    }
    return [...homes];
  }

  private get columns(): CounterColumns {
    return this.directory.counterColumns;
  }

  /** True when some keyed item's counter grew within the dedup window: only then are there earlier homes to fence. */
  private needsFences(items: readonly ValidIncrement[], slots: Int32Array): boolean {
    const nowMs = this.now();
    for (let index = 0; index < items.length; index++) {
      if (items[index]!.idempotencyKey.length === 0) continue;
      const growths = this.columns.growthsOf(slots[index]!);
      if (growths.length > 0 && nowMs - growths[growths.length - 1]!.grownMs < this.dedupWindowMs) return true;
    }
    return false;
  }

  /**
   * Keyed items of counters that grew within the window first fence their
   * earlier homes: each records the key there, or reports it was already
   * there (the increment is a duplicate). Whichever of an old attempt and
   * its retry reaches the old home first wins, so they never both apply.
   * Returns, per item index, the shard of the original when it is a duplicate.
   */
  private async fenceEarlierHomes(items: readonly ValidIncrement[], { slots, routedShardCounts }: Resolved): Promise<Map<number, number>> {
    const duplicates = new Map<number, number>();
    const byNode = new Map<string, { itemIndexes: number[]; shardIndexes: number[]; items: ApplyItem[] }>();
    for (let index = 0; index < items.length; index++) {
      const item = items[index]!;
      if (item.idempotencyKey.length === 0) continue;
      const routedShardCount = routedShardCounts[index]!;
      const slot = slots[index]!;
      for (const earlier of this.earlierHomes(slot, item.idempotencyKey, routedShardCount)) {
        const address = this.primaryOf(slot, earlier);
        let group = byNode.get(address);
        if (group === undefined) byNode.set(address, (group = { itemIndexes: [], shardIndexes: [], items: [] }));
        group.itemIndexes.push(index);
        group.shardIndexes.push(earlier);
        group.items.push({
          shardId: this.columns.shardIdOf(slot, earlier),
          amount: 0,
          idempotencyKey: item.idempotencyKey,
          fence: true,
          routedShardCount,
        });
      }
    }
    await Promise.all(
      [...byNode].map(async ([address, group]) => {
        let result;
        try {
          result = await this.pool.get(address).sender.send(group.items);
        } catch (error) {
          // Without the fence, applying at the new home could count the key twice.
          throw new TallyError(ErrorCode.unavailable, `cannot check an earlier home of a keyed increment: ${(error as Error).message}`);
        }
        if (result.code !== status.OK) throw new TallyError(errorCodeOfGrpcStatus(result.code), result.message);
        group.itemIndexes.forEach((itemIndex, position) => {
          if (result.applied[position] === false) duplicates.set(itemIndex, group.shardIndexes[position]!);
        });
      }),
    );
    return duplicates;
  }

  /**
   * Where this round may send the counter's unkeyed increments. Increments
   * commute: skip shards whose node failed this call or is known to be down
   * (the call would not even be sent), unless all are. Asked once per
   * counter per round and once per node, not once per item.
   */
  private routeOf(slot: number, avoid: ReadonlySet<string>, downByAddress: Map<string, boolean>): Route {
    const usable: Route = { shardIndexes: [], addresses: [] };
    const live: Route = { shardIndexes: [], addresses: [] };
    // Announced shards (a growth not yet seen by every router) are read, not written.
    const writableShardCount = this.columns.writableShardCountOf(slot);
    for (let shardIndex = 0; shardIndex < writableShardCount; shardIndex++) {
      const address = this.primaryOf(slot, shardIndex);
      if (avoid.has(address)) continue;
      usable.shardIndexes.push(shardIndex);
      usable.addresses.push(address);
      let down = downByAddress.get(address);
      if (down === undefined) downByAddress.set(address, (down = this.pool.isKnownDown(address)));
      if (down) continue;
      live.shardIndexes.push(shardIndex);
      live.addresses.push(address);
    }
    return live.shardIndexes.length > 0 ? live : usable;
  }

  private primaryOf(slot: number, shardIndex: number): string {
    return this.directory.pair(this.columns.pairIndexOf(slot, shardIndex)).primary;
  }

  /**
   * The call's counters, looked up once per distinct name (a Zipf batch
   * names its hot counters many times; each lookup in a directory of
   * millions is a few cache misses). Bad input changes nothing: a batch
   * naming a counter of another kind, or more new counters than a cap
   * allows, fails before any counter is created; the batch's new counters
   * are created together, in one directory transaction, before anything is
   * sent. Routing is decided here, once per call: a growth during the call
   * must not move a keyed item past the homes it fenced.
   */
  private async countersOf(items: readonly ValidIncrement[]): Promise<Resolved> {
    const count = items.length;
    const { names, slots: places } = distinctNames(items);
    const distinct = new Int32Array(names.length);
    await this.directory.resolveSlots(names, 'total', distinct);
    const slots = new Int32Array(count);
    const routedShardCounts = new Int32Array(count);
    for (let index = 0; index < count; index++) {
      const slot = distinct[places === undefined ? 0 : places[index]!]!;
      slots[index] = slot;
      routedShardCounts[index] = this.columns.writableShardCountOf(slot);
    }
    return { slots, routedShardCounts };
  }

  /**
   * Applies items durably. Items bound for one node travel as one atomic
   * group. Resolves only when every group has committed; if any group fails
   * the call fails (groups on other nodes may have committed: the caller sees
   * an unknown outcome, which an idempotency key makes safe to retry). A
   * group a node certainly did not apply (never sent, or refused for a stale
   * epoch) is tried again on another node's shards when it has no keys.
   */
  async apply(items: readonly ValidIncrement[], call: { readonly cancelled: boolean } = { cancelled: false }): Promise<IncrementOutcome[]> {
    const progress = { mayHaveApplied: false };
    try {
      return await this.applyRounds(items, call, progress);
    } catch (error) {
      throw failureOf(error, progress.mayHaveApplied);
    }
  }

  private async applyRounds(
    items: readonly ValidIncrement[],
    call: { readonly cancelled: boolean },
    progress: { mayHaveApplied: boolean },
  ): Promise<IncrementOutcome[]> {
    const outcomes: IncrementOutcome[] = new Array(items.length);
    const avoid = new Set<string>();
    const downByAddress = new Map<string, boolean>();
    const resolved = await this.countersOf(items);
    let pending: number[] | undefined;
    if (this.needsFences(items, resolved.slots)) {
      const duplicates = await this.fenceEarlierHomes(items, resolved);
      for (const [itemIndex, shardIndex] of duplicates) outcomes[itemIndex] = { applied: false, shard: shardIndex };
      if (duplicates.size > 0) pending = [];
      for (let index = 0; index < items.length && pending !== undefined; index++) if (outcomes[index] === undefined) pending.push(index);
    }
    const waitUntilMs = this.now() + this.failoverWaitMs;
    // Bounded: every round either sends (and a node that refused is avoided
    // next) or waits a step; both end at waitUntilMs.
    for (let round = 0; pending === undefined || pending.length > 0; round++) {
      const byNode = this.route(items, resolved, pending, avoid, downByAddress);
      if (typeof byNode === 'number') {
        // Nothing of this call was sent where it failed: wait for the failover, then try the new primaries.
        if (this.now() >= waitUntilMs)
          throw new TallyError(ErrorCode.unavailable, `no live shard of ${items[byNode]!.counter} can take the increment now`);
        await new Promise((resolve) => setTimeout(resolve, failoverWaitStepMs));
        // The caller is gone (or past the server's deadline ceiling): what was not sent is not sent now.
        if (call.cancelled) throw new TallyError(ErrorCode.deadlineExceeded, 'the call ended while it waited for a failover');
        avoid.clear();
        downByAddress.clear();
        continue;
      }
      const state: RoundState = { outcomes, retry: [], failures: [], round, waitUntilMs, avoid, progress };
      if (byNode.size === 1) {
        const [address, group] = byNode.entries().next().value!;
        await this.settle(address, group, state);
      } else {
        await Promise.all(Array.from(byNode, ([address, group]) => this.settle(address, group, state)));
      }
      const { failures, retry } = state;
      if (failures.length > 0) {
        const failure = failures[0]!;
        // A refusal that applied nothing is, to the caller, plain unavailability.
        throw failure instanceof NotAppliedError ? new TallyError(ErrorCode.unavailable, failure.message) : failure;
      }
      pending = retry;
    }
    return outcomes;
  }

  /** Sends one group and records its items' outcomes, or what the round must do about its failure. */
  private async settle(address: string, group: NodeGroup, state: RoundState): Promise<void> {
    try {
      const encoded = group.encode();
      const result = await this.pool.get(address).sender.sendGroup(encoded);
      // A group is all or nothing on its node: one that failed applied nothing.
      if (result.code !== status.OK)
        throw new TallyError(errorCodeOfGrpcStatus(result.code), result.message, undefined, { reason: ErrorReason.notApplied });
      const packedRecords = encoded.itemCount - encoded.items.length;
      if (result.packedRecordsApplied !== packedRecords) {
        state.progress.mayHaveApplied = true;
        // Its keyed items may have applied (a retry with the key is safe); its unkeyed ones did not.
        throw new TallyError(
          ErrorCode.failedPrecondition,
          `node ${address} applied ${result.packedRecordsApplied} of ${packedRecords} packed increments: it predates packed increments; upgrade every node before the router`,
        );
      }
      state.progress.mayHaveApplied = true;
      const { outcomes } = state;
      const { plainIndexes, plainShardIndexes, keyedIndexes, keyedShardIndexes } = group;
      for (let position = 0; position < plainIndexes.length; position++)
        outcomes[plainIndexes[position]!] = appliedOutcome(plainShardIndexes[position]!);
      for (let position = 0; position < keyedIndexes.length; position++)
        outcomes[keyedIndexes[position]!] = { applied: result.applied[position] ?? true, shard: keyedShardIndexes[position]! };
    } catch (error) {
      if (!(error instanceof TallyError && error.certainlyNotApplied)) state.progress.mayHaveApplied = true;
      // Certainly not applied: safe to send again, elsewhere (unkeyed) or to the key's home after failover.
      const retryable = error instanceof NotAppliedError && (state.round < retryAttemptsMax || this.now() < state.waitUntilMs);
      if (!retryable) {
        state.failures.push(error instanceof TallyError ? error : new TallyError(ErrorCode.internal, String(error)));
        return;
      }
      state.avoid.add(address);
      state.retry.push(...group.plainIndexes, ...group.keyedIndexes);
    }
  }

  /**
   * One round's groups, by node: each pending item (all items when pending
   * is undefined) gets a shard — unkeyed a uniformly random usable one (G6),
   * keyed its home — or, when some item has none, that item's index.
   */
  private route(
    items: readonly ValidIncrement[],
    { slots, routedShardCounts }: Resolved,
    pending: readonly number[] | undefined,
    avoid: ReadonlySet<string>,
    downByAddress: Map<string, boolean>,
  ): Map<string, NodeGroup> | number {
    const columns = this.columns;
    const byNode = new Map<string, NodeGroup>();
    const routes = new Map<number, Route>();
    let lastAddress = '';
    let lastGroup: NodeGroup | undefined;
    const count = pending === undefined ? items.length : pending.length;
    for (let position = 0; position < count; position++) {
      const index = pending === undefined ? position : pending[position]!;
      const item = items[index]!;
      const slot = slots[index]!;
      let shardIndex: number;
      let address: string;
      if (item.idempotencyKey.length > 0) {
        // A keyed increment has exactly one home; it waits for failover rather than moving.
        shardIndex = hashKey(item.idempotencyKey) % routedShardCounts[index]!;
        address = this.primaryOf(slot, shardIndex);
        if (avoid.has(address)) return index;
      } else if (columns.writableShardCountOf(slot) === 1) {
        // One shard to write (most counters): no choice to make, nothing to cache per counter.
        shardIndex = 0;
        address = this.primaryOf(slot, 0);
        if (avoid.has(address)) return index;
      } else {
        let route = routes.get(slot);
        if (route === undefined) routes.set(slot, (route = this.routeOf(slot, avoid, downByAddress)));
        if (route.shardIndexes.length === 0) return index;
        const choice = Math.floor(this.random() * route.shardIndexes.length);
        shardIndex = route.shardIndexes[choice]!;
        address = route.addresses[choice]!;
      }
      const shardId = columns.shardIdOf(slot, shardIndex);
      const window = columns.windowOf(slot);
      const generation = columns.generationOf(slot);
      let group = address === lastAddress ? lastGroup : byNode.get(address);
      if (group === undefined) byNode.set(address, (group = new NodeGroup()));
      lastAddress = address;
      lastGroup = group;
      if (item.idempotencyKey.length === 0) {
        group.addPlain(index, shardIndex, shardId, item.amount, window, generation);
        continue;
      }
      const applyItem: ApplyItem = {
        shardId,
        // A number when exact: protobufjs then skips parsing a decimal string.
        amount: typeof item.amount === 'number' ? item.amount : item.amount.toString(),
        idempotencyKey: item.idempotencyKey,
        routedShardCount: routedShardCounts[index]!,
      };
      // Every increment carries its counter's window setting; absent means
      // none (0, 0), and costs nothing on the wire. The node logs a setting
      // only when it differs from the shard's.
      if (window.bucketMs > 0) {
        applyItem.windowBucketMs = window.bucketMs;
        applyItem.windowRetentionMs = window.retentionMs;
      }
      // As the window: absent until the counter's first clear. Read when routed: a resend after a clear belongs after it.
      if (generation > 0) applyItem.generation = generation;
      group.addKeyed(index, shardIndex, applyItem);
    }
    return byNode;
  }
}

/**
 * The distinct counter names of a call, in order of first appearance (the
 * order new counters are created in), and each item's place among them
 * (undefined: every item names the first). A run of one name costs one
 * comparison; a name met again later, one lookup in a map of the call's
 * names, not in the directory.
 */
export function distinctNames(items: readonly { counter: string }[]): { names: string[]; slots: number[] | undefined } {
  const first = items[0]!.counter;
  let index = 1;
  while (index < items.length && items[index]!.counter === first) index++;
  if (index === items.length) return { names: [first], slots: undefined };
  const names = [first];
  const slots: number[] = new Array(items.length).fill(0, 0, index);
  const slotOf = new Map<string, number>([[first, 0]]);
  let previous = first;
  let previousSlot = 0;
  for (; index < items.length; index++) {
    const name = items[index]!.counter;
    if (name !== previous) {
      let slot = slotOf.get(name);
      if (slot === undefined) {
        slot = names.length;
        names.push(name);
        slotOf.set(name, slot);
      }
      previous = name;
      previousSlot = slot;
    }
    slots[index] = previousSlot;
  }
  return { names, slots };
}

/**
 * Applied outcomes, one per shard index, shared by every call: an applied
 * unkeyed increment's answer is the same object each time, not a new one
 * per item (they are only read, by the response encoder).
 */
const appliedOutcomes: Readonly<IncrementOutcome>[] = [];
function appliedOutcome(shardIndex: number): IncrementOutcome {
  let outcome = appliedOutcomes[shardIndex];
  if (outcome === undefined) appliedOutcomes[shardIndex] = outcome = Object.freeze({ applied: true, shard: shardIndex });
  return outcome;
}

/** Rounds a group certainly not applied may be sent again even past failoverWaitMs. */
const retryAttemptsMax = 2;
const failoverWaitStepMs = 50;

/**
 * What a failed apply() answers: the first failure, with the reason that
 * says whether any group of the call was (or may have been) applied. Nothing
 * sent, or every group refused whole: NOT_APPLIED, and an UNAVAILABLE gets a
 * retry delay of about a failover. A fence only records a key (it never
 * counts), so a failed fence leaves the call NOT_APPLIED.
 */
function failureOf(error: unknown, mayHaveApplied: boolean): TallyError {
  const failure = error instanceof TallyError ? error : new TallyError(ErrorCode.internal, String(error));
  if (mayHaveApplied) return withReason(failure, ErrorReason.outcomeUnknown, undefined);
  const retryAfterMs = failure.retryAfterMs ?? (failure.code === ErrorCode.unavailable ? unavailableRetryDelayMs : undefined);
  return withReason(failure, ErrorReason.notApplied, retryAfterMs);
}
