// Where a region keeps the components its peers send: a REGION_COMPONENT
// entry on the first shard of the counter in this region's directory, so it
// is logged, replicated, checkpointed and snapshotted like any entry. The
// node keeps a max-register per origin; this module only routes and reads.
// It never decides which component is newer within an incarnation (the
// node's merge does); across incarnations it deletes this region's counter
// when a peer deleted it (a component of a higher incarnation) and refuses a
// pre-delete part (a lower one).
import { status } from '@grpc/grpc-js';
import { ErrorCode, TallyError, errorCodeOfGrpcStatus, validateCounterName } from '../../wire/index.ts';
import {
  encodeComponent,
  encodePackedComponents,
  incarnationOf,
  unpackComponents,
  type RegionComponent,
} from '../../wire/internal/index.ts';
import type { shardV1 } from '../../common/index.ts';
import type { CounterInfo, Directory, KindPathDirectory, Tombstone } from '../directory/index.ts';
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
/** Deletes this region's counter `name` and raises its tombstone, unless its incarnation is already at least `incarnation`; true when it did. */
export type DeleteUpTo = (name: string, incarnation: number) => Promise<boolean>;

/** A component refused for being of a lower incarnation than this region's: its counter was deleted since it was taken. */
export function incarnationRefusal(name: string, component: RegionComponent, ownIncarnation: number): string | undefined {
  if (incarnationOf(component) >= ownIncarnation) return undefined;
  return `the component of "${name}" is of incarnation ${incarnationOf(component)}, this region's is ${ownIncarnation}: it was taken before a delete of the name, and counts as nothing`;
}

/** Stored: the component goes to a node; a tombstone: applied in the directory alone (applied: it deleted up to its incarnation). */
type Placement = { address: string; shardId: number } | { tombstone: true; applied: boolean };

export class ComponentStore {
  constructor(
    private readonly directory: KindPathDirectory & Pick<Directory, 'getOrCreateMany' | 'tombstone'>,
    private readonly pool: NodePool,
    private readonly readTimeoutMs: number,
    private readonly clearUpTo: ClearUpTo,
    private readonly deleteUpTo: DeleteUpTo,
  ) {}

  /** This region's incarnation of a name: how many deletes of it it applied (its tombstone's). */
  incarnation(name: string): number {
    return incarnationOfTombstone(this.directory.tombstone(name));
  }

  /**
   * Creates, in one directory transaction, the counters of a batch that are
   * new here (one fsync for the batch rather than one per counter). Best
   * effort: a name it cannot create is left to store(), which says why. Only
   * totals (a distinct counter's component is created as one by store()) of
   * this region's incarnation of the name: a tombstone never creates a
   * counter, and one of another incarnation is deleted for or refused
   * first (store()).
   */
  async prepare(components: readonly { counter: string; component: RegionComponent }[]): Promise<void> {
    const creatable = components.filter(
      ({ counter, component }) =>
        component.tombstone !== true && component.sketch === undefined && incarnationOf(component) === this.incarnation(counter),
    );
    const missing = [...new Set(creatable.map(({ counter }) => counter))].filter((name) => this.directory.get(name) === undefined);
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
    const placement = await this.itemFor(counterName, component);
    if ('tombstone' in placement) return placement.applied;
    const { address, shardId } = placement;
    const result = await this.pool.get(address).sender.send([componentItem(shardId, component)]);
    if (result.code !== status.OK) throw new TallyError(errorCodeOfGrpcStatus(result.code), result.message);
    return result.applied?.[0] === true;
  }

  /**
   * store() for many components (one per counter), as one packed entry per primary (REGION_COMPONENTS: one log
   * row, written and replicated once, for all of a pair's totals; sketches
   * stay one REGION_COMPONENT item each, in the same group). A group its
   * node refuses (a counter deleted meanwhile, a node that does not know the
   * packed op) is stored again one component at a time. Settles per
   * component (fulfilled: durable here); `applied` counts the components
   * that moved a held one forward (a tombstone: that deleted).
   */
  async storePacked(
    components: readonly { counter: string; component: RegionComponent }[],
  ): Promise<{ settled: PromiseSettledResult<void>[]; applied: number; unpacked: number }> {
    const items = await Promise.allSettled(components.map(({ counter, component }) => this.itemFor(counter, component)));
    const settled: PromiseSettledResult<void>[] = items.map((item) =>
      item.status === 'rejected' ? item : { status: 'fulfilled', value: undefined },
    );
    let applied = 0;
    let unpacked = 0;
    const byAddress = new Map<string, number[]>();
    items.forEach((item, index) => {
      if (item.status !== 'fulfilled') return;
      // A tombstone is done in the directory: nothing goes to a node.
      if ('tombstone' in item.value) {
        if (item.value.applied) applied++;
        return;
      }
      let indexes = byAddress.get(item.value.address);
      if (indexes === undefined) byAddress.set(item.value.address, (indexes = []));
      indexes.push(index);
    });
    await Promise.all(
      [...byAddress].map(async ([address, indexes]) => {
        const group: ApplyItem[] = [];
        const rows: { shardId: number; component: RegionComponent }[] = [];
        for (const index of indexes) {
          const { shardId } = (items[index] as PromiseFulfilledResult<{ shardId: number }>).value;
          const { component } = components[index]!;
          if (component.sketch === undefined) rows.push({ shardId, component });
          else group.push(componentItem(shardId, component));
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
        unpacked += indexes.length;
        const one = await Promise.allSettled(indexes.map((index) => this.store(components[index]!.counter, components[index]!.component)));
        indexes.forEach((index, position) => {
          const outcome = one[position]!;
          if (outcome.status === 'rejected') settled[index] = outcome;
          else if (outcome.value) applied++;
        });
      }),
    );
    return { settled, applied, unpacked };
  }

  /**
   * The node item that stores the component, and the primary it goes to:
   * this region's counter deleted first if the origin deleted it (a higher
   * incarnation: a tombstone is then done), cleared first if the origin
   * cleared it. A component of a lower incarnation is refused.
   */
  private async itemFor(counterName: string, component: RegionComponent): Promise<Placement> {
    validateCounterName(counterName);
    const incarnation = incarnationOf(component);
    const deleted = incarnation > this.incarnation(counterName) && (await this.deleteUpTo(counterName, incarnation));
    const tooOld = incarnationRefusal(counterName, component, this.incarnation(counterName));
    if (tooOld !== undefined) throw new TallyError(ErrorCode.failedPrecondition, tooOld);
    if (component.tombstone === true) return { tombstone: true, applied: deleted };
    const counter = await this.directory.getOrCreate(counterName, component.sketch === undefined ? 'total' : 'distinct');
    // Deleted again meanwhile (another origin's tombstone): this part precedes that delete.
    const deletedSince = incarnationRefusal(counterName, component, this.incarnation(counterName));
    if (deletedSince !== undefined) throw new TallyError(ErrorCode.failedPrecondition, deletedSince);
    const refusal = componentRefusal(counter, component);
    if (refusal !== undefined) throw new TallyError(ErrorCode.failedPrecondition, refusal);
    // The origin cleared the counter: this region clears its own at its own cut, before it answers.
    if (component.generation > counter.generation) await this.clearUpTo(counterName, component.generation);
    const shard = counter.shards[0]!;
    return { address: this.directory.pair(shard.pairIndex).primary, shardId: shard.shardId };
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

function incarnationOfTombstone(tombstone: Tombstone | undefined): number {
  return tombstone?.incarnation ?? 0;
}

/** The node item that stores one component on its shard (REGION_COMPONENT: one log entry). */
function componentItem(shardId: number, component: RegionComponent): ApplyItem {
  return { shardId: String(shardId), amount: '0', idempotencyKey: emptyKey, op: 'REGION_COMPONENT', component: encodeComponent(component) };
}
