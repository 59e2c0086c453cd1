// The write path: picks a shard per increment and sends each node its items
// as one atomic group through that node's coalescing sender. Unkeyed items go
// to a uniformly random shard (never chosen by writer, G6); keyed items to the
// shard their key hashes to, so a retry lands where its first attempt did.
import { status } from '@grpc/grpc-js';
import { ErrorCode, TallyError, errorCodeOfGrpcStatus, toWireInt64 } from '../common/index.ts';
import type { Directory, CounterInfo, ShardInfo } from './directory.ts';
import type { NodePool } from './node-pool.ts';
import { NotAppliedError, type ApplyItem } from './node-sender.ts';

export interface ValidIncrement {
  counter: string;
  amount: bigint;
  idempotencyKey: Buffer;
}

export interface IncrementOutcome {
  applied: boolean;
  shardIndex: number;
}

/** FNV-1a, 32 bits: stable across processes and versions, cheap. */
export function hashKey(key: Buffer): number {
  let hash = 0x811c9dc5;
  for (const byte of key) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}

export class IncrementPath {
  constructor(
    private readonly directory: Directory,
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
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Shards an earlier attempt of this key may have gone to: where the shard
   * counts before each growth younger than the dedup window sent it.
   */
  private earlierHomes(counter: CounterInfo, key: Buffer, routedShardCount: number): ShardInfo[] {
    const nowMs = this.now();
    const hash = hashKey(key);
    const home = counter.shards[hash % routedShardCount]!;
    const homes = new Map<number, ShardInfo>();
    for (const growth of counter.growths) {
      if (nowMs - growth.grownMs >= this.dedupWindowMs || growth.previousShardCount >= routedShardCount) continue;
      const earlier = counter.shards[hash % growth.previousShardCount]!;
      if (earlier.shardIndex !== home.shardIndex) homes.set(earlier.shardIndex, earlier);
    }
    return [...homes.values()];
  }

  /**
   * Keyed items of counters that grew within the window first fence their
   * earlier homes: each records the key there, or reports it was already
   * there (the increment is a duplicate). Whichever of an old attempt and
   * its retry reaches the old home first wins, so they never both apply.
   * Returns, per item index, the shard of the original when it is a duplicate.
   */
  private async fenceEarlierHomes(
    items: readonly ValidIncrement[],
    indexes: readonly number[],
    routedShardCounts: readonly number[],
  ): Promise<Map<number, number>> {
    const duplicates = new Map<number, number>();
    const byNode = new Map<string, { itemIndexes: number[]; shardIndexes: number[]; items: ApplyItem[] }>();
    for (const index of indexes) {
      const item = items[index]!;
      if (item.idempotencyKey.length === 0) continue;
      const counter = this.directory.getOrCreate(item.counter);
      const routedShardCount = routedShardCounts[index]!;
      for (const earlier of this.earlierHomes(counter, item.idempotencyKey, routedShardCount)) {
        const address = this.primaryOf(earlier);
        let group = byNode.get(address);
        if (group === undefined) byNode.set(address, (group = { itemIndexes: [], shardIndexes: [], items: [] }));
        group.itemIndexes.push(index);
        group.shardIndexes.push(earlier.shardIndex);
        group.items.push({
          shardId: String(earlier.shardId),
          amount: '0',
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

  private chooseShard(
    counter: CounterInfo,
    key: Buffer,
    routedShardCount: number,
    avoid: ReadonlySet<string>,
    downByAddress: Map<string, boolean>,
  ): ShardInfo | undefined {
    const shards = counter.shards;
    if (key.length > 0) {
      // A keyed increment has exactly one home; it waits for failover rather than moving.
      const home = shards[hashKey(key) % routedShardCount]!;
      return avoid.has(this.primaryOf(home)) ? undefined : home;
    }
    // Increments commute: skip shards whose node failed this call or is
    // known to be down (the call would not even be sent), unless all are.
    const usable = shards.filter((shard) => !avoid.has(this.primaryOf(shard)));
    if (usable.length === 0) return undefined;
    // Asked once per node per call, not once per shard per item.
    const isDown = (address: string): boolean => {
      let down = downByAddress.get(address);
      if (down === undefined) downByAddress.set(address, (down = this.pool.isKnownDown(address)));
      return down;
    };
    const live = usable.filter((shard) => !isDown(this.primaryOf(shard)));
    const candidates = live.length > 0 ? live : usable;
    return candidates[Math.floor(this.random() * candidates.length)]!;
  }

  private primaryOf(shard: ShardInfo): string {
    return this.directory.pair(shard.pairIndex).primary;
  }

  /**
   * Applies items durably. Items bound for one node travel as one atomic
   * group. Resolves only when every group has committed; if any group fails
   * the call fails (groups on other nodes may have committed: the caller sees
   * an unknown outcome, which an idempotency key makes safe to retry). A
   * group a node certainly did not apply (never sent, or refused for a stale
   * epoch) is tried again on another node's shards when it has no keys.
   */
  async apply(items: readonly ValidIncrement[]): Promise<IncrementOutcome[]> {
    const outcomes: IncrementOutcome[] = new Array(items.length);
    const avoid = new Set<string>();
    const downByAddress = new Map<string, boolean>();
    let pending = items.map((_, index) => index);
    // Bad input changes nothing: a batch naming a counter of another kind
    // fails before any new counter of the batch is created.
    for (const item of items) {
      const kind = this.directory.get(item.counter)?.kind;
      if (kind !== undefined && kind !== 'total')
        throw new TallyError(ErrorCode.failedPrecondition, `counter "${item.counter}" is a ${kind} counter, not a total counter`);
    }
    // Routing is decided once per call: a growth during the call must not
    // move a keyed item past the homes it fenced.
    const routedShardCounts = items.map((item) => this.directory.getOrCreate(item.counter).shards.length);
    for (const [itemIndex, shardIndex] of await this.fenceEarlierHomes(items, pending, routedShardCounts))
      outcomes[itemIndex] = { applied: false, shardIndex };
    pending = pending.filter((index) => outcomes[index] === undefined);
    const waitUntilMs = this.now() + this.failoverWaitMs;
    // Bounded: every round either sends (and a node that refused is avoided
    // next) or waits a step; both end at waitUntilMs.
    for (let round = 0; pending.length > 0; round++) {
      const byNode = new Map<string, { indexes: number[]; shardIndexes: number[]; items: ApplyItem[] }>();
      const blocked = pending.find(
        (index) =>
          this.chooseShard(
            this.directory.getOrCreate(items[index]!.counter),
            items[index]!.idempotencyKey,
            routedShardCounts[index]!,
            avoid,
            downByAddress,
          ) === undefined,
      );
      if (blocked !== undefined) {
        // Nothing of this call was sent where it failed: wait for the failover, then try the new primaries.
        if (this.now() >= waitUntilMs)
          throw new TallyError(ErrorCode.unavailable, `no live shard of ${items[blocked]!.counter} can take the increment now`);
        await new Promise((resolve) => setTimeout(resolve, failoverWaitStepMs));
        avoid.clear();
        downByAddress.clear();
        continue;
      }
      for (const index of pending) {
        const item = items[index]!;
        const counter = this.directory.getOrCreate(item.counter);
        const shard = this.chooseShard(counter, item.idempotencyKey, routedShardCounts[index]!, avoid, downByAddress)!;
        const address = this.primaryOf(shard);
        let group = byNode.get(address);
        if (group === undefined) byNode.set(address, (group = { indexes: [], shardIndexes: [], items: [] }));
        group.indexes.push(index);
        group.shardIndexes.push(shard.shardIndex);
        const applyItem: ApplyItem = {
          shardId: shard.shardId,
          amount: toWireInt64(item.amount),
          idempotencyKey: item.idempotencyKey,
          routedShardCount: routedShardCounts[index]!,
        };
        // Every increment carries its counter's window setting; absent means
        // none (0, 0), and costs nothing on the wire. The node logs a setting
        // only when it differs from the shard's.
        if (counter.window.bucketMs > 0) {
          applyItem.windowBucketMs = String(counter.window.bucketMs);
          applyItem.windowRetentionMs = String(counter.window.retentionMs);
        }
        group.items.push(applyItem);
      }
      const retry: number[] = [];
      const failures: TallyError[] = [];
      await Promise.all(
        [...byNode].map(async ([address, group]) => {
          try {
            const result = await this.pool.get(address).sender.send(group.items);
            if (result.code !== status.OK) throw new TallyError(errorCodeOfGrpcStatus(result.code), result.message);
            group.indexes.forEach((itemIndex, position) => {
              outcomes[itemIndex] = { applied: result.applied[position] ?? true, shardIndex: group.shardIndexes[position]! };
            });
          } catch (error) {
            // Certainly not applied: safe to send again, elsewhere (unkeyed) or to the key's home after failover.
            const retryable = error instanceof NotAppliedError && (round < retryAttemptsMax || this.now() < waitUntilMs);
            if (!retryable) {
              failures.push(error instanceof TallyError ? error : new TallyError(ErrorCode.internal, String(error)));
              return;
            }
            avoid.add(address);
            retry.push(...group.indexes);
          }
        }),
      );
      if (failures.length > 0) {
        const failure = failures[0]!;
        // A refusal that applied nothing is, to the caller, plain unavailability.
        throw failure instanceof NotAppliedError ? new TallyError(ErrorCode.unavailable, failure.message) : failure;
      }
      pending = retry;
    }
    return outcomes;
  }
}

/** Rounds a group certainly not applied may be sent again even past failoverWaitMs. */
const retryAttemptsMax = 2;
const failoverWaitStepMs = 50;
