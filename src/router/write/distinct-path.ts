// Distinct counts: the router hashes members (XXH64) into HyperLogLog
// register changes and sends them to one random shard of the counter; a
// count merges every shard's sketch by register maximum, so a member seen by
// two shards is still counted once. Adding is idempotent, so any retry is safe.
import { status } from '@grpc/grpc-js';
import { ErrorCode, TallyError, errorCodeOfGrpcStatus } from '../../wire/index.ts';
import { type shardV1 } from '../../common/index.ts';
import { HllSketch, hllStandardError, packRegisterChanges, type MemberHasher } from '../../sketch/index.ts';
import type { CounterInfo, ShardInfo, KindPathDirectory } from '../directory/index.ts';
import { sameCounter } from '../directory/index.ts';
import { type NodePool, NotAppliedError } from '../nodes/index.ts';
import { overtakenCounters, readPairWithFallback, rereadOvertaken } from '../read/index.ts';

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
    private readonly directory: KindPathDirectory,
    private readonly pool: NodePool,
    private readonly hasher: MemberHasher,
    private readonly readTimeoutMs: number,
    private readonly random: () => number = Math.random,
  ) {}

  async add(name: string, members: readonly Buffer[]): Promise<DistinctAdd> {
    const counter = await this.directory.getOrCreate(name, 'distinct');
    // One rank per register, the highest: the node raises each at most once.
    const highest = new Map<number, number>();
    for (const member of members) {
      const { index, rank } = this.hasher.registerOf(member);
      if (rank > (highest.get(index) ?? 0)) highest.set(index, rank);
    }
    const registers = packRegisterChanges([...highest].sort((a, b) => a[0] - b[0]));
    const tried = new Set<number>();
    // Bounded: each attempt tries a shard not tried before.
    // Announced shards (a growth not every router has seen yet) are read, not written.
    const writable = counter.shards.slice(0, counter.writableShardCount);
    for (let attempt = 0; attempt <= writable.length; attempt++) {
      const shard = this.pickShard(writable, tried);
      if (shard === undefined) break;
      tried.add(shard.shardIndex);
      const address = this.directory.pair(shard.pairIndex).primary;
      try {
        const result = await this.pool.get(address).sender.send([
          {
            shardId: String(shard.shardId),
            amount: '0',
            idempotencyKey: emptyKey,
            op: 'DISTINCT',
            registers,
            // Read now, not when the call began: an attempt sent after a clear belongs after it.
            ...(counter.generation > 0 ? { generation: counter.generation } : {}),
          },
        ]);
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
    const { union, shardCount } = await this.union(names);
    return { estimate: union.estimate(), standardError: hllStandardError, shardCount };
  }

  /** The union of the named counters' sketches in this region (never written: empty), and how many shard sketches it merged. */
  async union(names: readonly string[]): Promise<{ union: HllSketch; shardCount: number }> {
    const distinctNames = [...new Set(names)];
    await this.directory.readBarrier(distinctNames);
    for (const name of distinctNames) {
      const counter = this.directory.get(name);
      if (counter !== undefined && counter.kind !== 'distinct')
        throw new TallyError(ErrorCode.failedPrecondition, `counter "${name}" is a ${counter.kind} counter, not a distinct counter`);
    }
    // A pair's shards merge into one sketch, whatever counter they belong to: a
    // clear overtaking any of them makes the whole union be read again (rare).
    return rereadOvertaken(
      distinctNames,
      () => this.readUnion(distinctNames),
      (into, again) => Object.assign(into, again),
    );
  }

  /** The union of the counters' sketches: one ReadSketches call per node pair, merged on the node. */
  private async readUnion(names: readonly string[]): Promise<{ result: { union: HllSketch; shardCount: number }; overtaken: Set<string> }> {
    const byPair = new Map<number, { shardIds: number[]; generations: number[]; counterOf: string[]; cleared: boolean }>();
    let shardCount = 0;
    const sources = new Map<string, CounterInfo>();
    for (const name of names) {
      const counter = this.directory.get(name);
      if (counter === undefined) continue;
      sources.set(name, counter);
      for (const shard of counter.shards) {
        let plan = byPair.get(shard.pairIndex);
        if (plan === undefined) byPair.set(shard.pairIndex, (plan = { shardIds: [], generations: [], counterOf: [], cleared: false }));
        plan.shardIds.push(shard.shardId);
        plan.generations.push(counter.generation);
        plan.counterOf.push(name);
        if (counter.generation > 0) plan.cleared = true;
        shardCount++;
      }
    }
    const union = new HllSketch();
    const responses = await Promise.all(
      [...byPair].map(async ([pairIndex, plan]) => ({
        plan,
        ...(await readPairWithFallback(this.directory.pair(pairIndex), (address) =>
          // Merged on the node: one sketch per pair, however many shards.
          this.pool.read<shardV1.ReadSketchesRequest, shardV1.ReadSketchesResponse__Output>(
            address,
            'ReadSketches',
            { shardIds: plan.shardIds.map(String), merge: true, generations: plan.cleared ? plan.generations.map(String) : [] },
            this.readTimeoutMs,
          ),
        )),
      })),
    );
    const overtaken = new Set<string>();
    // A counter deleted while the read was out may have lost some shards to drops and not others: read the union again without it.
    for (const [name, counter] of sources)
      if (!sameCounter(this.directory.get(name), counter)) for (const each of names) overtaken.add(each);
    for (const { plan, response } of responses) {
      if (overtakenCounters(plan.counterOf, response.newerGenerationIndexes ?? []).size > 0) for (const name of names) overtaken.add(name);
      for (const sketch of response.sketches) {
        if (sketch.length === 0) continue;
        try {
          union.mergeFrom(HllSketch.deserialize(sketch));
        } catch (error) {
          throw new TallyError(ErrorCode.internal, `a node sent a malformed sketch: ${(error as Error).message}`);
        }
      }
    }
    return { result: { union, shardCount }, overtaken };
  }
}
