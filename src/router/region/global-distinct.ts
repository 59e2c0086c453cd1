// CountDistinct with SCOPE_GLOBAL: the union of this region's sketches of
// the named counters and every peer's last received sketch of them, by
// register maximum. A union is idempotent, so a member added in several
// regions counts once, and a duplicated or late component changes nothing.
// It never writes.
import { ErrorCode, TallyError } from '../../wire/index.ts';
import { incarnationOf, type RegionComponent } from '../../wire/internal/index.ts';
import { HllSketch, hllStandardError } from '../../sketch/index.ts';
import type { CounterInfo, Tombstone } from '../directory/index.ts';
import type { ComponentStore } from './component-store.ts';
import type { SketchReads } from './publish/index.ts';

export interface GlobalDistinctCount {
  estimate: number;
  standardError: number;
  /** Sketches merged: this region's shards plus the peers' components. */
  shardCount: number;
}

export interface GlobalDistinctDirectory {
  get(name: string): CounterInfo | undefined;
  readBarrier(names: readonly string[]): Promise<void>;
  /** The name's tombstone (the live counter's incarnation); without it every incarnation is 0. */
  tombstone?(name: string): Tombstone | undefined;
}

/** Merges a component's sketch into `into`; INTERNAL when a node kept bytes no sketch has. */
function mergeSketch(into: HllSketch, component: RegionComponent): void {
  try {
    into.mergeFrom(HllSketch.deserialize(component.sketch!));
  } catch (error) {
    throw new TallyError(ErrorCode.internal, `a node sent a malformed region sketch: ${(error as Error).message}`);
  }
}

export class GlobalDistinctReader {
  constructor(
    private readonly directory: GlobalDistinctDirectory,
    private readonly sketches: SketchReads,
    private readonly store: Pick<ComponentStore, 'read'>,
  ) {}

  async count(names: readonly string[]): Promise<GlobalDistinctCount> {
    const distinctNames = [...new Set(names)];
    await this.directory.readBarrier(distinctNames);
    const counters = distinctNames.map((name) => this.directory.get(name));
    for (const counter of counters)
      if (counter !== undefined && (counter.kind !== 'distinct' || counter.window.bucketMs > 0))
        throw new TallyError(
          ErrorCode.failedPrecondition,
          `counter "${counter.name}" is a ${counter.kind} counter, not a distinct counter`,
        );
    const held = await this.store.read(counters);
    // Per counter, a part taken before the newest delete or, within its incarnation, the newest clear any
    // region made of it is deleted or cleared away (as for totals): it counts empty.
    const union = new HllSketch();
    let shardCount = 0;
    const homeNames: string[] = [];
    counters.forEach((counter, index) => {
      if (counter === undefined) return;
      const homeIncarnation = this.directory.tombstone?.(counter.name)?.incarnation ?? 0;
      const all = [...held[index]!.values()].filter((part) => part.sketch !== undefined);
      const newestIncarnation = all.reduce((newest, part) => Math.max(newest, incarnationOf(part)), homeIncarnation);
      const parts = all.filter((part) => incarnationOf(part) === newestIncarnation);
      const homeGeneration = homeIncarnation === newestIncarnation ? counter.generation : -1;
      const newestGeneration = parts.reduce((newest, part) => Math.max(newest, part.generation), homeGeneration);
      if (homeGeneration === newestGeneration) homeNames.push(counter.name);
      for (const part of parts)
        if (part.generation === newestGeneration) {
          mergeSketch(union, part);
          shardCount++;
        }
    });
    if (homeNames.length > 0) {
      const home = await this.sketches.union(homeNames);
      union.mergeFrom(home.union);
      shardCount += home.shardCount;
    }
    return { estimate: union.estimate(), standardError: hllStandardError, shardCount };
  }
}
