// Distinct counts: the router hashes members (XXH64) into HyperLogLog
// register changes and sends them to one random shard of the counter; a
// count merges every shard's sketch by register maximum, so a member seen by
// two shards is still counted once. Adding is idempotent, so any retry is safe.
import { status } from '@grpc/grpc-js';
import { ErrorCode, TallyError, errorCodeOfGrpcStatus, type shardV1 } from '../common/index.ts';
import { HllSketch, hllStandardError, packRegisterChanges, type MemberHasher } from '../sketch/index.ts';
import type { Directory, ShardInfo } from './directory.ts';
import type { NodePool } from './node-pool.ts';
import { NotAppliedError } from './node-sender.ts';
import { readPairWithFallback } from './exact-reader.ts';

export interface DistinctAdd {
  registersChanged: number;
  shardIndex: number;
}

export interface DistinctCount {
  estimate: number;
  standardError: number;
  shardCount: number;
}

const emptyKey = Buffer.alloc(0);

export class DistinctPath {
  constructor(
    private readonly directory: Directory,
    private readonly pool: NodePool,
    private readonly hasher: MemberHasher,
    private readonly readTimeoutMs: number,
    private readonly random: () => number = Math.random,
  ) {}

  async add(name: string, members: readonly Buffer[]): Promise<DistinctAdd> {
    const counter = this.directory.getOrCreate(name, 'distinct');
    // One rank per register, the highest: the node raises each at most once.
    const highest = new Map<number, number>();
    for (const member of members) {
      const { index, rank } = this.hasher.registerOf(member);
      if (rank > (highest.get(index) ?? 0)) highest.set(index, rank);
    }
    const registers = packRegisterChanges([...highest].sort((a, b) => a[0] - b[0]));
    const tried = new Set<number>();
    // Bounded: each attempt tries a shard not tried before.
    for (let attempt = 0; attempt <= counter.shards.length; attempt++) {
      const shard = this.pickShard(counter.shards, tried);
      if (shard === undefined) break;
      tried.add(shard.shardIndex);
      const address = this.directory.pair(shard.pairIndex).primary;
      try {
        const result = await this.pool
          .get(address)
          .sender.send([{ shardId: String(shard.shardId), amount: '0', idempotencyKey: emptyKey, op: 'DISTINCT', registers }]);
        if (result.code !== status.OK) throw new TallyError(errorCodeOfGrpcStatus(result.code), result.message);
        return { registersChanged: Number(result.changed?.[0] ?? 0), shardIndex: shard.shardIndex };
      } catch (error) {
        // Raising registers twice changes nothing, but a shard whose node is down would only fail again.
        if (!(error instanceof NotAppliedError)) throw error;
      }
    }
    throw new TallyError(ErrorCode.unavailable, `no live shard of ${name} can take the members now`);
  }

  private pickShard(shards: readonly ShardInfo[], tried: ReadonlySet<number>): ShardInfo | undefined {
    const untried = shards.filter((shard) => !tried.has(shard.shardIndex));
    const live = untried.filter((shard) => !this.pool.isKnownDown(this.directory.pair(shard.pairIndex).primary));
    const candidates = live.length > 0 ? live : untried;
    return candidates.length === 0 ? undefined : candidates[Math.floor(this.random() * candidates.length)];
  }

  /** The estimated cardinality of the union of the named counters (never written: empty). */
  async count(names: readonly string[]): Promise<DistinctCount> {
    const byPair = new Map<number, number[]>();
    let shardCount = 0;
    for (const name of new Set(names)) {
      const counter = this.directory.get(name);
      if (counter === undefined) continue;
      if (counter.kind !== 'distinct')
        throw new TallyError(ErrorCode.failedPrecondition, `counter "${name}" is a ${counter.kind} counter, not a distinct counter`);
      for (const shard of counter.shards) {
        let shardIds = byPair.get(shard.pairIndex);
        if (shardIds === undefined) byPair.set(shard.pairIndex, (shardIds = []));
        shardIds.push(shard.shardId);
        shardCount++;
      }
    }
    const union = new HllSketch();
    const responses = await Promise.all(
      [...byPair].map(([pairIndex, shardIds]) =>
        readPairWithFallback(this.directory.pair(pairIndex), (address) =>
          // Merged on the node: one sketch per pair, however many shards.
          this.pool.read<shardV1.ReadSketchesRequest, shardV1.ReadSketchesResponse__Output>(
            address,
            'ReadSketches',
            { shardIds: shardIds.map(String), merge: true },
            this.readTimeoutMs,
          ),
        ),
      ),
    );
    for (const { response } of responses) {
      for (const sketch of response.sketches) {
        if (sketch.length === 0) continue;
        try {
          union.mergeFrom(HllSketch.deserialize(sketch));
        } catch (error) {
          throw new TallyError(ErrorCode.internal, `a node sent a malformed sketch: ${(error as Error).message}`);
        }
      }
    }
    return { estimate: union.estimate(), standardError: hllStandardError, shardCount };
  }
}
