// Where a region keeps the components its peers send: a REGION_COMPONENT
// entry on the first shard of the counter in this region's directory, so it
// is logged, replicated, checkpointed and snapshotted like any entry. The
// node keeps a max-register per origin; this module only routes and reads.
// It never decides which component is newer: the node's merge does.
import { status } from '@grpc/grpc-js';
import { ErrorCode, TallyError, errorCodeOfGrpcStatus, validateCounterName } from '../../wire/index.ts';
import { encodeComponent, encodePackedComponents, unpackComponents, type RegionComponent } from '../../wire/internal/index.ts';
import type { shardV1 } from '../../common/index.ts';
import type { CounterInfo, Directory, KindPathDirectory } from '../directory/index.ts';
import type { ApplyItem, NodePool } from '../nodes/index.ts';
import { readPairWithFallback } from '../read/index.ts';

const emptyKey = Buffer.alloc(0);

/** Why a component cannot be held for a counter of this region: undefined when it can. */
export function componentRefusal(counter: CounterInfo, component?: RegionComponent): string | undefined {
  const kind = component?.sketch === undefined ? 'total' : 'distinct';
  if (counter.kind !== kind || counter.window.bucketMs > 0)
    return `counter "${counter.name}" is a ${counter.window.bucketMs > 0 ? 'windowed' : counter.kind} counter here, the peer's a ${kind} counter: only totals and distinct counters count across regions, each as its own kind`;
  return undefined;
}

/** Clears this region's counter until its generation reaches `generation` (a peer region cleared it). */
export type ClearUpTo = (name: string, generation: number) => Promise<void>;

export class ComponentStore {
  constructor(
    private readonly directory: KindPathDirectory & Pick<Directory, 'getOrCreateMany'>,
    private readonly pool: NodePool,
    private readonly readTimeoutMs: number,
    private readonly clearUpTo: ClearUpTo,
  ) {}

  /**
   * Creates, in one directory transaction, the counters of a batch that are
   * new here (one fsync for the batch rather than one per counter). Best
   * effort: a name it cannot create is left to store(), which says why.
   */
  async prepare(counterNames: readonly string[]): Promise<void> {
    const missing = [...new Set(counterNames)].filter((name) => this.directory.get(name) === undefined);
    if (missing.length === 0) return;
    try {
      for (const name of missing) validateCounterName(name);
      await this.directory.getOrCreateMany(missing);
    } catch {
      // store() creates them one at a time and refuses the ones it must.
    }
  }

  /**
   * Makes the component durable in this region (the counter is created if
   * it is new here). Resolves with true when it moved the held component
   * forward, false when the held one was as new; rejects when it cannot be
   * stored now (the caller keeps it and the link resends it).
   */
  async store(counterName: string, component: RegionComponent): Promise<boolean> {
    const { address, item } = await this.itemFor(counterName, component);
    const result = await this.pool.get(address).sender.send([item]);
    if (result.code !== status.OK) throw new TallyError(errorCodeOfGrpcStatus(result.code), result.message);
    return result.applied?.[0] === true;
  }

  /**
   * store() for many components (one per counter), as one node group per
   * pair rather than one per component. A group its node refuses is stored
   * again one component at a time, so a refusal is only its own component's.
   * Settles per component as store() would.
   */
  async storeMany(components: readonly { counter: string; component: RegionComponent }[]): Promise<PromiseSettledResult<boolean>[]> {
    const items = await Promise.allSettled(components.map(({ counter, component }) => this.itemFor(counter, component)));
    const outcomes: PromiseSettledResult<boolean>[] = items.map((item) =>
      item.status === 'rejected' ? item : { status: 'fulfilled', value: false },
    );
    const byAddress = new Map<string, number[]>();
    items.forEach((item, index) => {
      if (item.status !== 'fulfilled') return;
      let indexes = byAddress.get(item.value.address);
      if (indexes === undefined) byAddress.set(item.value.address, (indexes = []));
      indexes.push(index);
    });
    await Promise.all(
      [...byAddress].map(async ([address, indexes]) => {
        const group = indexes.map((index) => (items[index] as PromiseFulfilledResult<{ item: ApplyItem }>).value.item);
        const result = await this.pool
          .get(address)
          .sender.send(group)
          .catch((error: unknown) => ({ code: -1, message: (error as Error).message, applied: [] as boolean[], error }));
        if (result.code === status.OK) {
          indexes.forEach((index, position) => (outcomes[index] = { status: 'fulfilled', value: result.applied?.[position] === true }));
          return;
        }
        const settled = await Promise.allSettled(
          indexes.map((index) => this.store(components[index]!.counter, components[index]!.component)),
        );
        indexes.forEach((index, position) => (outcomes[index] = settled[position]!));
      }),
    );
    return outcomes;
  }

  /**
   * storeMany() as one packed entry per primary (REGION_COMPONENTS: one log
   * row, written and replicated once, for all of a pair's totals; sketches
   * stay one REGION_COMPONENT item each, in the same group). A group its
   * node refuses (a counter deleted meanwhile, a node that does not know the
   * packed op) is stored again one component at a time. Settles per
   * component (fulfilled: durable here); `applied` counts the components
   * that moved a held one forward.
   */
  async storePacked(
    components: readonly { counter: string; component: RegionComponent }[],
  ): Promise<{ settled: PromiseSettledResult<void>[]; applied: number }> {
    const items = await Promise.allSettled(components.map(({ counter, component }) => this.itemFor(counter, component)));
    const settled: PromiseSettledResult<void>[] = items.map((item) =>
      item.status === 'rejected' ? item : { status: 'fulfilled', value: undefined },
    );
    let applied = 0;
    const byAddress = new Map<string, number[]>();
    items.forEach((item, index) => {
      if (item.status !== 'fulfilled') return;
      let indexes = byAddress.get(item.value.address);
      if (indexes === undefined) byAddress.set(item.value.address, (indexes = []));
      indexes.push(index);
    });
    await Promise.all(
      [...byAddress].map(async ([address, indexes]) => {
        const group: ApplyItem[] = [];
        const rows: { shardId: number; component: RegionComponent }[] = [];
        for (const index of indexes) {
          const { item } = (items[index] as PromiseFulfilledResult<{ item: ApplyItem }>).value;
          const { component } = components[index]!;
          if (component.sketch === undefined) rows.push({ shardId: Number(item.shardId), component });
          else group.push(item);
        }
        if (rows.length > 0)
          group.push({
            shardId: String(rows[0]!.shardId),
            amount: '0',
            idempotencyKey: emptyKey,
            op: 'REGION_COMPONENTS',
            component: encodePackedComponents(rows),
          });
        const result = await this.pool
          .get(address)
          .sender.send(group)
          .catch((error: unknown) => ({
            code: -1,
            message: (error as Error).message,
            applied: [] as boolean[],
            changed: [] as string[],
            error,
          }));
        if (result.code === status.OK) {
          group.forEach((item, position) => {
            if (item.op === 'REGION_COMPONENTS') applied += Number(result.changed?.[position] ?? 0);
            else if (result.applied?.[position] === true) applied++;
          });
          return;
        }
        const one = await Promise.allSettled(indexes.map((index) => this.store(components[index]!.counter, components[index]!.component)));
        indexes.forEach((index, position) => {
          const outcome = one[position]!;
          if (outcome.status === 'rejected') settled[index] = outcome;
          else if (outcome.value) applied++;
        });
      }),
    );
    return { settled, applied };
  }

  /** The node item that stores the component, and the primary it goes to (clearing this region's counter first if the origin cleared it). */
  private async itemFor(counterName: string, component: RegionComponent): Promise<{ address: string; item: ApplyItem }> {
    validateCounterName(counterName);
    const counter = await this.directory.getOrCreate(counterName, component.sketch === undefined ? 'total' : 'distinct');
    const refusal = componentRefusal(counter, component);
    if (refusal !== undefined) throw new TallyError(ErrorCode.failedPrecondition, refusal);
    // The origin cleared the counter: this region clears its own at its own cut, before it answers.
    if (component.generation > counter.generation) await this.clearUpTo(counterName, component.generation);
    const shard = counter.shards[0]!;
    return {
      address: this.directory.pair(shard.pairIndex).primary,
      item: {
        shardId: String(shard.shardId),
        amount: '0',
        idempotencyKey: emptyKey,
        op: 'REGION_COMPONENT',
        component: encodeComponent(component),
      },
    };
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
