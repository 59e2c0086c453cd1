// The write path: picks a shard per increment and sends each node its items
// as one atomic group through that node's coalescing sender. Unkeyed items go
// to a uniformly random shard (never chosen by writer, G6); keyed items to the
// shard their key hashes to, so a retry lands where its first attempt did.
import { status } from '@grpc/grpc-js';
import { ErrorCode, TallyError, errorCodeOfGrpcStatus, type ApplyItemMsg } from '../common/index.ts';
import type { Directory, CounterInfo, ShardInfo } from './directory.ts';
import type { NodePool } from './node-pool.ts';

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

  private chooseShard(counter: CounterInfo, key: Buffer): ShardInfo {
    const shards = counter.shards;
    if (key.length > 0) return shards[hashKey(key) % shards.length]!;
    if (shards.length === 1) return shards[0]!;
    // Increments commute: skip shards whose node is known to be down (the call
    // would not even be sent), unless every shard's node is.
    const live = shards.filter((shard) => !this.pool.isKnownDown(this.directory.pair(shard.pairIndex).primary));
    const candidates = live.length > 0 ? live : shards;
    return candidates[Math.floor(this.random() * candidates.length)]!;
  }

  /**
   * Applies items durably. Items bound for one node travel as one atomic
   * group. Resolves only when every group has committed; if any group fails
   * the call fails (groups on other nodes may have committed: the caller sees
   * an unknown outcome, which an idempotency key makes safe to retry).
   */
  async apply(items: readonly ValidIncrement[]): Promise<IncrementOutcome[]> {
    const byNode = new Map<string, { indexes: number[]; items: ApplyItemMsg[] }>();
    const shardIndexes: number[] = [];
    items.forEach((item, index) => {
      const counter = this.directory.getOrCreate(item.counter);
      const shard = this.chooseShard(counter, item.idempotencyKey);
      shardIndexes.push(shard.shardIndex);
      const address = this.directory.pair(shard.pairIndex).primary;
      let group = byNode.get(address);
      if (group === undefined) byNode.set(address, (group = { indexes: [], items: [] }));
      group.indexes.push(index);
      group.items.push({ shardId: String(shard.shardId), amount: item.amount.toString(), idempotencyKey: item.idempotencyKey });
    });

    const outcomes: IncrementOutcome[] = new Array(items.length);
    await Promise.all(
      [...byNode].map(async ([address, group]) => {
        const result = await this.pool.get(address).sender.send(group.items);
        if (result.code !== status.OK) throw new TallyError(errorCodeOfGrpcStatus(result.code), result.message);
        group.indexes.forEach((itemIndex, position) => {
          outcomes[itemIndex] = { applied: result.applied[position] ?? true, shardIndex: shardIndexes[itemIndex]! };
        });
      }),
    );
    for (const outcome of outcomes) if (outcome === undefined) throw new TallyError(ErrorCode.internal, 'an increment was left without an outcome');
    return outcomes;
  }
}
