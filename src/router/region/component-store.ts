// Where a region keeps the components its peers send: a REGION_COMPONENT
// entry on the first shard of the counter in this region's directory, so it
// is logged, replicated, checkpointed and snapshotted like any entry. The
// node keeps a max-register per origin; this module only routes and reads.
// It never decides which component is newer: the node's merge does.
import { status } from '@grpc/grpc-js';
import { ErrorCode, TallyError, errorCodeOfGrpcStatus, validateCounterName } from '../../wire/index.ts';
import { encodeComponent, unpackComponents, type RegionComponent } from '../../wire/internal/index.ts';
import { type shardV1 } from '../../common/index.ts';
import type { CounterInfo, KindPathDirectory } from '../directory/index.ts';
import type { NodePool } from '../nodes/index.ts';
import { readPairWithFallback } from '../read/index.ts';

const emptyKey = Buffer.alloc(0);

/** Why a component cannot be held for a counter of this region: undefined when it can. */
export function componentRefusal(counter: CounterInfo): string | undefined {
  if (counter.kind !== 'total') return `counter "${counter.name}" is a ${counter.kind} counter here: only totals count across regions`;
  return undefined;
}

/** Clears this region's counter until its generation reaches `generation` (a peer region cleared it). */
export type ClearUpTo = (name: string, generation: number) => Promise<void>;

export class ComponentStore {
  constructor(
    private readonly directory: KindPathDirectory,
    private readonly pool: NodePool,
    private readonly readTimeoutMs: number,
    private readonly clearUpTo: ClearUpTo,
  ) {}

  /**
   * Makes the component durable in this region (the counter is created if
   * it is new here). Resolves with true when it moved the held component
   * forward, false when the held one was as new; rejects when it cannot be
   * stored now (the caller keeps it and the link resends it).
   */
  async store(counterName: string, component: RegionComponent): Promise<boolean> {
    validateCounterName(counterName);
    const counter = await this.directory.getOrCreate(counterName);
    const refusal = componentRefusal(counter);
    if (refusal !== undefined) throw new TallyError(ErrorCode.failedPrecondition, refusal);
    // The origin cleared the counter: this region clears its own at its own cut, before it answers.
    if (component.generation > counter.generation) await this.clearUpTo(counterName, component.generation);
    const shard = counter.shards[0]!;
    const address = this.directory.pair(shard.pairIndex).primary;
    const result = await this.pool.get(address).sender.send([
      {
        shardId: String(shard.shardId),
        amount: '0',
        idempotencyKey: emptyKey,
        op: 'REGION_COMPONENT',
        component: encodeComponent(component),
      },
    ]);
    if (result.code !== status.OK) throw new TallyError(errorCodeOfGrpcStatus(result.code), result.message);
    return result.applied?.[0] === true;
  }

  /** The components held for each counter (by origin), as of a read that counts only what a failover keeps. */
  async read(counters: readonly (CounterInfo | undefined)[]): Promise<Map<string, RegionComponent>[]> {
    const held = counters.map(() => new Map<string, RegionComponent>());
    const byPair = new Map<number, { shardIds: string[]; indexes: number[] }>();
    counters.forEach((counter, index) => {
      if (counter === undefined || counter.shards.length === 0) return;
      const shard = counter.shards[0]!;
      let plan = byPair.get(shard.pairIndex);
      if (plan === undefined) byPair.set(shard.pairIndex, (plan = { shardIds: [], indexes: [] }));
      plan.shardIds.push(String(shard.shardId));
      plan.indexes.push(index);
    });
    await Promise.all(
      [...byPair].map(async ([pairIndex, plan]) => {
        const { response } = await readPairWithFallback(this.directory.pair(pairIndex), (address) =>
          this.pool.read<shardV1.ReadShardsRequest, shardV1.ReadComponentsResponse__Output>(
            address,
            'ReadComponents',
            { shardIds: plan.shardIds },
            this.readTimeoutMs,
          ),
        );
        plan.indexes.forEach((counterIndex, position) => {
          let components: RegionComponent[];
          try {
            components = unpackComponents(response.components[position] ?? emptyKey);
          } catch (error) {
            throw new TallyError(ErrorCode.internal, `a node sent malformed region components: ${(error as Error).message}`);
          }
          for (const component of components) held[counterIndex]!.set(component.origin, component);
        });
      }),
    );
    return held;
  }
}
