// The write path: picks a shard per increment and sends each node its items
// as one atomic group through that node's coalescing sender. Unkeyed items go
// to a uniformly random shard (never chosen by writer, G6); keyed items to the
// shard their key hashes to, so a retry lands where its first attempt did.
import { status } from '@grpc/grpc-js';
import { ErrorCode, TallyError, errorCodeOfGrpcStatus, type ApplyItemMsg } from '../common/index.ts';
import type { Directory, CounterInfo, ShardInfo } from './directory.ts';
import type { NodePool } from './node-pool.ts';
import { NotAppliedError } from './node-sender.ts';

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
    private readonly random: () => number = Math.random,
  ) {}

  private chooseShard(counter: CounterInfo, key: Buffer, avoid: ReadonlySet<string>): ShardInfo | undefined {
    const shards = counter.shards;
    if (key.length > 0) {
      // A keyed increment has exactly one home; it waits for failover rather than moving.
      const home = shards[hashKey(key) % shards.length]!;
      return avoid.has(this.primaryOf(home)) ? undefined : home;
    }
    // Increments commute: skip shards whose node failed this call or is
    // known to be down (the call would not even be sent), unless all are.
    const usable = shards.filter((shard) => !avoid.has(this.primaryOf(shard)));
    if (usable.length === 0) return undefined;
    const live = usable.filter((shard) => !this.pool.isKnownDown(this.primaryOf(shard)));
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
    let pending = items.map((_, index) => index);
    for (let attempt = 0; pending.length > 0; attempt++) {
      const byNode = new Map<string, { indexes: number[]; shardIndexes: number[]; items: ApplyItemMsg[] }>();
      for (const index of pending) {
        const item = items[index]!;
        const counter = this.directory.getOrCreate(item.counter);
        const shard = this.chooseShard(counter, item.idempotencyKey, avoid);
        if (shard === undefined) throw new TallyError(ErrorCode.unavailable, `no live shard of ${item.counter} can take the increment now`);
        const address = this.primaryOf(shard);
        let group = byNode.get(address);
        if (group === undefined) byNode.set(address, (group = { indexes: [], shardIndexes: [], items: [] }));
        group.indexes.push(index);
        group.shardIndexes.push(shard.shardIndex);
        group.items.push({ shardId: String(shard.shardId), amount: item.amount.toString(), idempotencyKey: item.idempotencyKey });
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
            const retryable = error instanceof NotAppliedError && attempt < retryAttemptsMax && group.items.every((item) => item.idempotencyKey.length === 0);
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

/** Other nodes an unkeyed group may try after a certain non-application. */
const retryAttemptsMax = 2;
