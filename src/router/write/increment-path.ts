// The write path: picks a shard per increment and sends each node its items
// as one atomic group through that node's coalescing sender. Unkeyed items go
// to a uniformly random shard (never chosen by writer, G6) and are summed per
// shard within the group; keyed items to the shard their key hashes to, so a
// retry lands where its first attempt did. A call arrives as columns
// (IncrementColumns: a name, an amount and a key per item) and routing reads
// the directory's columns by counter slot: no object per item from the
// decoder to the node frame (a keyed item alone becomes an ApplyItem, which
// the wire carries).
import { status } from '@grpc/grpc-js';
import {
  ErrorCode,
  ErrorReason,
  TallyError,
  errorCodeOfGrpcStatus,
  withReason,
  steadyWallClock,
  type IncrementColumns,
} from '../../wire/index.ts';
import { unavailableRetryDelayMs } from '../../common/index.ts';
import type { CounterColumns, IncrementDirectory } from '../directory/index.ts';
import { NodeGroup, hashKey } from './node-group.ts';
import { type NodePool, NotAppliedError, type ApplyItem } from '../nodes/index.ts';

export interface ValidIncrement {
  counter: string;
  /** int64: a number when exact as one (|amount| < 2^53), else a bigint. */
  amount: number | bigint;
  idempotencyKey: Buffer;
}

/** Increments given one object each (a unary call, tests) as the columns the path routes. */
export function columnsOf(items: readonly ValidIncrement[]): IncrementColumns {
  const columns: IncrementColumns = { counters: [], amounts: [], keys: [], returnTotals: undefined, sequence: 0 };
  for (const item of items) {
    columns.counters.push(item.counter);
    columns.amounts.push(item.amount);
    columns.keys.push(item.idempotencyKey);
  }
  return columns;
}

/** What a call applied: each item's outcome, and its counters (for heat: once per counter, not per item). */
export interface AppliedBatch {
  outcomes: IncrementOutcome[];
  /** The call's distinct counter names, in order of first appearance. */
  names: readonly string[];
  /** Each item's place in names; undefined when every item names names[0]. */
  places: readonly number[] | undefined;
}

/** One increment's answer, in the shape of the wire's IncrementResponse. */
export interface IncrementOutcome {
  applied: boolean;
  /** The index of the shard it went to. */
  shard: number;
}

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
  names: string[];
  places: number[] | undefined;
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
  private needsFences({ keys }: IncrementColumns, slots: Int32Array): boolean {
    const nowMs = this.now();
    for (let index = 0; index < keys.length; index++) {
      if (keys[index]!.length === 0) continue;
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
  private async fenceEarlierHomes({ keys }: IncrementColumns, { slots, routedShardCounts }: Resolved): Promise<Map<number, number>> {
    const duplicates = new Map<number, number>();
    const byNode = new Map<string, { itemIndexes: number[]; shardIndexes: number[]; items: ApplyItem[] }>();
    for (let index = 0; index < keys.length; index++) {
      const key = keys[index]!;
      if (key.length === 0) continue;
      const routedShardCount = routedShardCounts[index]!;
      const slot = slots[index]!;
      for (const earlier of this.earlierHomes(slot, key, routedShardCount)) {
        const address = this.primaryOf(slot, earlier);
        let group = byNode.get(address);
        if (group === undefined) byNode.set(address, (group = { itemIndexes: [], shardIndexes: [], items: [] }));
        group.itemIndexes.push(index);
        group.shardIndexes.push(earlier);
        group.items.push({
          shardId: this.columns.shardIdOf(slot, earlier),
          amount: 0,
          idempotencyKey: key,
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
  private async countersOf(batch: IncrementColumns): Promise<Resolved> {
    const count = batch.counters.length;
    const { names, slots: places } = distinctNamesOf(batch.counters);
    const distinct = new Int32Array(names.length);
    await this.directory.resolveSlots(names, 'total', distinct);
    const slots = new Int32Array(count);
    const routedShardCounts = new Int32Array(count);
    for (let index = 0; index < count; index++) {
      const slot = distinct[places === undefined ? 0 : places[index]!]!;
      slots[index] = slot;
      routedShardCounts[index] = this.columns.writableShardCountOf(slot);
    }
    return { slots, routedShardCounts, names, places };
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
    return (await this.applyColumns(columnsOf(items), call)).outcomes;
  }

  /** apply() for a call decoded into columns (IncrementBatch, IncrementStream); the batch is not changed. */
  async applyColumns(batch: IncrementColumns, call: { readonly cancelled: boolean } = { cancelled: false }): Promise<AppliedBatch> {
    const progress = { mayHaveApplied: false };
    try {
      return await this.applyRounds(batch, call, progress);
    } catch (error) {
      throw failureOf(error, progress.mayHaveApplied);
    }
  }

  private async applyRounds(
    batch: IncrementColumns,
    call: { readonly cancelled: boolean },
    progress: { mayHaveApplied: boolean },
  ): Promise<AppliedBatch> {
    const count = batch.counters.length;
    const outcomes: IncrementOutcome[] = new Array(count);
    const avoid = new Set<string>();
    const downByAddress = new Map<string, boolean>();
    const resolved = await this.countersOf(batch);
    let pending: number[] | undefined;
    if (this.needsFences(batch, resolved.slots)) {
      const duplicates = await this.fenceEarlierHomes(batch, resolved);
      for (const [itemIndex, shardIndex] of duplicates) outcomes[itemIndex] = { applied: false, shard: shardIndex };
      if (duplicates.size > 0) pending = [];
      for (let index = 0; index < count && pending !== undefined; index++) if (outcomes[index] === undefined) pending.push(index);
    }
    const waitUntilMs = this.now() + this.failoverWaitMs;
    // Bounded: every round either sends (and a node that refused is avoided
    // next) or waits a step; both end at waitUntilMs.
    for (let round = 0; pending === undefined || pending.length > 0; round++) {
      const byNode = this.route(batch, resolved, pending, avoid, downByAddress);
      if (typeof byNode === 'number') {
        // Nothing of this call was sent where it failed: wait for the failover, then try the new primaries.
        if (this.now() >= waitUntilMs)
          throw new TallyError(ErrorCode.unavailable, `no live shard of ${batch.counters[byNode]!} can take the increment now`);
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
    return { outcomes, names: resolved.names, places: resolved.places };
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
    { counters, amounts, keys }: IncrementColumns,
    { slots, routedShardCounts, names, places }: Resolved,
    pending: readonly number[] | undefined,
    avoid: ReadonlySet<string>,
    downByAddress: Map<string, boolean>,
  ): Map<string, NodeGroup> | number {
    const columns = this.columns;
    const byNode = new Map<string, NodeGroup>();
    const routes = new Map<number, Route>();
    // One object for the round, its place set per item: not one per increment.
    const openSums = { positions: new Int32Array(names.length).fill(-1), place: 0 };
    let lastAddress = '';
    let lastGroup: NodeGroup | undefined;
    const count = pending === undefined ? counters.length : pending.length;
    for (let position = 0; position < count; position++) {
      const index = pending === undefined ? position : pending[position]!;
      const key = keys[index]!;
      const amount = amounts[index]!;
      const slot = slots[index]!;
      let shardIndex: number;
      let address: string;
      if (key.length > 0) {
        // A keyed increment has exactly one home; it waits for failover rather than moving.
        shardIndex = hashKey(key) % routedShardCounts[index]!;
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
      if (key.length === 0) {
        if (columns.writableShardCountOf(slot) === 1) {
          openSums.place = places === undefined ? 0 : places[index]!;
          group.addPlain(index, shardIndex, shardId, amount, window, generation, openSums);
        } else {
          group.addPlain(index, shardIndex, shardId, amount, window, generation);
        }
        continue;
      }
      const applyItem: ApplyItem = {
        shardId,
        // A number when exact: protobufjs then skips parsing a decimal string.
        amount: typeof amount === 'number' ? amount : amount.toString(),
        idempotencyKey: key,
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
  return distinctNamesOf(items.map((item) => item.counter));
}

/** distinctNames of a column of names. */
export function distinctNamesOf(counters: readonly string[]): { names: string[]; slots: number[] | undefined } {
  const first = counters[0]!;
  let index = 1;
  while (index < counters.length && counters[index] === first) index++;
  if (index === counters.length) return { names: [first], slots: undefined };
  const names = [first];
  const slots: number[] = new Array(counters.length).fill(0, 0, index);
  const slotOf = new Map<string, number>([[first, 0]]);
  let previous = first;
  let previousSlot = 0;
  for (; index < counters.length; index++) {
    const name = counters[index]!;
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
