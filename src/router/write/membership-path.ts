// Membership counters: a member always lives in the partition (shard) its
// id hashes to, so a flip is decided where the member's bit is — one node,
// serially, in its group commit — and the count is the sum of the partition
// totals. Rebuild compares each partition's bitmap with its stored count;
// it repairs only when asked, through the log like any change.
import { status } from '@grpc/grpc-js';
import { ErrorCode, TallyError, errorCodeOfGrpcStatus } from '../../wire/index.ts';
import { type shardV1 } from '../../common/index.ts';
import { partitionOf } from '../../membership/index.ts';
import type { CounterInfo, ShardInfo, KindPathDirectory } from '../directory/index.ts';
import { sameCounter } from '../directory/index.ts';
import { type NodePool, NotAppliedError, type ApplyItem } from '../nodes/index.ts';
import { overtakenCounters, readPairWithFallback, readExact, rereadOvertaken } from '../read/index.ts';

export interface MemberSetResult {
  changed: boolean;
  /** The partition (shard index) the member lives in. */
  partition: number;
  /** Undefined when the count could not be read after the flip. */
  count: bigint | undefined;
}

export interface PartitionCheck {
  partition: number;
  shardId: number;
  pairIndex: number;
  members: bigint;
  storedCount: bigint;
  drift: bigint;
  repaired: bigint;
  /** Undefined when the follower could not be read. */
  followerDrift: bigint | undefined;
}

export interface RebuildResult {
  counter: string;
  members: bigint;
  storedCount: bigint;
  drift: bigint;
  repaired: boolean;
  partitions: PartitionCheck[];
}

const emptyKey = Buffer.alloc(0);

export class MembershipPath {
  constructor(
    private readonly directory: KindPathDirectory,
    private readonly pool: NodePool,
    private readonly settings: { defaultPartitions: number; readTimeoutMs: number },
  ) {}

  private membershipCounter(name: string): CounterInfo | undefined {
    const counter = this.directory.get(name);
    if (counter !== undefined && counter.kind !== 'membership') {
      throw new TallyError(ErrorCode.failedPrecondition, `counter "${name}" is a ${counter.kind} counter, not a membership counter`);
    }
    return counter;
  }

  private async send(shard: ShardInfo, item: ApplyItem): Promise<{ applied: boolean; changed: string }> {
    const address = this.directory.pair(shard.pairIndex).primary;
    try {
      const result = await this.pool.get(address).sender.send([item]);
      if (result.code !== status.OK) throw new TallyError(errorCodeOfGrpcStatus(result.code), result.message);
      return { applied: result.applied[0] ?? false, changed: result.changed?.[0] ?? '0' };
    } catch (error) {
      // A member has one home: it waits for failover rather than moving. Setting it again is safe.
      if (error instanceof NotAppliedError) throw new TallyError(ErrorCode.unavailable, error.message);
      throw error;
    }
  }

  /** Makes member present or absent; the count is read after the flip is durable. */
  async set(name: string, member: bigint, present: boolean): Promise<MemberSetResult> {
    const counter = await this.directory.getOrCreate(name, 'membership', this.settings.defaultPartitions);
    const shard = counter.shards[partitionOf(member, counter.shards.length)]!;
    const { applied } = await this.send(shard, {
      shardId: String(shard.shardId),
      amount: '0',
      idempotencyKey: emptyKey,
      op: 'MEMBER_SET',
      member: member.toString(),
      present,
      ...(counter.generation > 0 ? { generation: counter.generation } : {}),
    });
    try {
      const { totals } = await readExact([name], this.directory, this.pool, this.settings.readTimeoutMs);
      return { changed: applied, count: totals.get(name)!.total, partition: shard.shardIndex };
    } catch {
      // The flip is done: its caller must learn that, even when another
      // partition's pair cannot be read for the count right now.
      return { changed: applied, count: undefined, partition: shard.shardIndex };
    }
  }

  /** Whether each member is present (a counter never written has none). */
  async check(name: string, members: readonly bigint[]): Promise<boolean[]> {
    await this.directory.readBarrier([name]);
    if (this.membershipCounter(name) === undefined) return members.map(() => false);
    return rereadOvertaken(
      [name],
      () => this.checkOnce(name, members),
      (into, again) => into.splice(0, into.length, ...again),
    );
  }

  /** One look at every member's partition, at the counter's generation now. */
  private async checkOnce(name: string, members: readonly bigint[]): Promise<{ result: boolean[]; overtaken: Set<string> }> {
    const counter = this.membershipCounter(name);
    const present = members.map(() => false);
    // Deleted meanwhile: no member is present.
    if (counter === undefined) return { result: present, overtaken: new Set() };
    const generation = String(counter.generation);
    const byPair = new Map<number, { indexes: number[]; request: shardV1.CheckMembersRequest }>();
    members.forEach((member, index) => {
      const shard = counter.shards[partitionOf(member, counter.shards.length)]!;
      let plan = byPair.get(shard.pairIndex);
      if (plan === undefined)
        byPair.set(shard.pairIndex, (plan = { indexes: [], request: { shardIds: [], members: [], generations: [] } }));
      plan.indexes.push(index);
      plan.request.shardIds!.push(String(shard.shardId));
      plan.request.members!.push(member.toString());
      if (counter.generation > 0) plan.request.generations!.push(generation);
    });
    let overtaken = new Set<string>();
    await Promise.all(
      [...byPair].map(async ([pairIndex, plan]) => {
        const { response } = await readPairWithFallback(this.directory.pair(pairIndex), (address) =>
          this.pool.read<shardV1.CheckMembersRequest, shardV1.CheckMembersResponse__Output>(
            address,
            'CheckMembers',
            plan.request,
            this.settings.readTimeoutMs,
          ),
        );
        if (response.present.length !== plan.indexes.length)
          throw new TallyError(
            ErrorCode.internal,
            `pair ${pairIndex} answered ${response.present.length} of ${plan.indexes.length} members`,
          );
        if (
          overtakenCounters(
            plan.indexes.map(() => name),
            response.newerGenerationIndexes ?? [],
          ).size > 0
        )
          overtaken = new Set([name]);
        plan.indexes.forEach((index, position) => (present[index] = response.present[position]!));
      }),
    );
    // Deleted while the read was out (some partitions may have been dropped first): read again, it has no members.
    if (!sameCounter(this.directory.get(name), counter)) overtaken = new Set([name]);
    return { result: present, overtaken };
  }

  /**
   * Recomputes each partition's count from its bitmap on the pair's primary
   * and compares it with the stored count; the follower's drift is read too.
   * With repair, a drifting partition gets a correction entry (computed by
   * the node at commit time, so flips racing the repair are not undone) —
   * only when the follower shows the same drift, since the entry replays
   * there as it is.
   */
  async rebuild(name: string, repair: boolean): Promise<RebuildResult> {
    const counter = this.membershipCounter(name);
    if (counter === undefined) throw new TallyError(ErrorCode.notFound, `counter "${name}" does not exist`);
    const byPair = new Map<number, ShardInfo[]>();
    for (const shard of counter.shards) {
      let shards = byPair.get(shard.pairIndex);
      if (shards === undefined) byPair.set(shard.pairIndex, (shards = []));
      shards.push(shard);
    }
    const checks: PartitionCheck[] = [];
    const countsOf = async (address: string, shards: ShardInfo[]): Promise<{ members: bigint; storedCount: bigint }[]> => {
      const response = await this.pool.read<shardV1.ReadShardsRequest, shardV1.MemberCountsResponse__Output>(
        address,
        'MemberCounts',
        { shardIds: shards.map((shard) => String(shard.shardId)) },
        this.settings.readTimeoutMs,
      );
      if (response.memberCounts.length !== shards.length || response.totals.length !== shards.length) {
        throw new TallyError(ErrorCode.internal, `node ${address} answered ${response.memberCounts.length} of ${shards.length} partitions`);
      }
      return shards.map((_, position) => ({
        members: BigInt(response.memberCounts[position]!),
        storedCount: BigInt(response.totals[position]!),
      }));
    };
    await Promise.all(
      [...byPair].map(async ([pairIndex, shards]) => {
        const pair = this.directory.pair(pairIndex);
        const [primary, follower] = await Promise.all([
          countsOf(pair.primary, shards),
          countsOf(pair.follower, shards).catch(() => undefined),
        ]);
        shards.forEach((shard, position) => {
          const { members, storedCount } = primary[position]!;
          const theirs = follower?.[position];
          checks.push({
            partition: shard.shardIndex,
            shardId: shard.shardId,
            pairIndex,
            members,
            storedCount,
            drift: storedCount - members,
            repaired: 0n,
            followerDrift: theirs === undefined ? undefined : theirs.storedCount - theirs.members,
          });
        });
      }),
    );
    checks.sort((a, b) => a.partition - b.partition);
    const drifting = checks.filter((check) => check.drift !== 0n || (check.followerDrift ?? 0n) !== 0n);
    if (repair && drifting.length > 0) {
      const unsafe = drifting.filter((check) => check.followerDrift !== check.drift);
      if (unsafe.length > 0) {
        const where = unsafe
          .map((check) => `partition ${check.partition}: primary ${check.drift}, follower ${check.followerDrift ?? 'unreadable'}`)
          .join('; ');
        throw new TallyError(
          ErrorCode.failedPrecondition,
          `not repairing ${name}: the replicas do not show the same drift (${where}); a repair would move the follower wrongly. Reconcile the pair first`,
        );
      }
      await Promise.all(
        drifting.map(async (check) => {
          const shard = counter.shards[check.partition]!;
          const { changed } = await this.send(shard, {
            shardId: String(shard.shardId),
            amount: '0',
            idempotencyKey: emptyKey,
            op: 'MEMBER_REPAIR',
          });
          check.repaired = BigInt(changed);
        }),
      );
    }
    const sum = (pick: (check: PartitionCheck) => bigint) => checks.reduce((total, check) => total + pick(check), 0n);
    return {
      counter: name,
      members: sum((check) => check.members),
      storedCount: sum((check) => check.storedCount),
      drift: sum((check) => check.drift),
      repaired: repair && drifting.length > 0,
      partitions: checks,
    };
  }
}
