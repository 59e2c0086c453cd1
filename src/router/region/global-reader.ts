// SCOPE_GLOBAL reads: this region's own total (exact or cached, as asked)
// plus every peer's component held here, each part listed with its age. A
// per-counter floor keeps a peer's part from going backwards through this
// router when a later read meets an older copy (bounded: least recently
// read counters are forgotten). It never writes.
import { ErrorCode, TallyError } from '../../wire/index.ts';
import { LruMap, regionFloorCountersMax } from '../../common/index.ts';
import { compareVersions, incarnationOf, mergeComponent, type RegionComponent } from '../../wire/internal/index.ts';
import type { CounterInfo, Tombstone } from '../directory/index.ts';
import type { TotalRead } from '../read/index.ts';
import type { ComponentStore } from './component-store.ts';
import type { OriginProgress } from './region-receiver.ts';

export interface RegionPartRead {
  region: string;
  total: bigint;
  asOfUnixMs: number;
  stalenessMs: number;
  home: boolean;
}

export interface GlobalRead extends TotalRead {
  regions: RegionPartRead[];
}

export interface GlobalReadPaths {
  readExact(names: readonly string[]): Promise<TotalRead[]>;
  readCached(names: readonly string[]): Promise<TotalRead[]>;
}

export interface GlobalReadDirectory {
  get(name: string): CounterInfo | undefined;
  readBarrier(names: readonly string[]): Promise<void>;
  /** The name's tombstone: the live counter's incarnation (none: 0). */
  tombstone(name: string): Tombstone | undefined;
}

/** FAILED_PRECONDITION for a counter whose kind or window keeps it in its region. */
export function refuseGlobalRead(counter: CounterInfo | undefined): void {
  if (counter === undefined) return;
  if (counter.kind === 'membership' || counter.window.bucketMs > 0)
    throw new TallyError(
      ErrorCode.failedPrecondition,
      `counter "${counter.name}" is a ${counter.kind === 'membership' ? 'membership' : 'windowed'} counter: windows and membership counters are region-local, read them with SCOPE_REGION`,
    );
  if (counter.kind !== 'total')
    throw new TallyError(
      ErrorCode.failedPrecondition,
      `counter "${counter.name}" is a ${counter.kind} counter: only totals are read with SCOPE_GLOBAL (a distinct counter with CountDistinct, scope SCOPE_GLOBAL)`,
    );
}

export class GlobalReader {
  /** Per counter (and the first shard it had, so a counter deleted and created again starts afresh): the newest part seen per origin. */
  private readonly floors: LruMap<string, { shardId: number; parts: Map<string, RegionComponent> }>;

  constructor(
    private readonly region: string,
    private readonly directory: GlobalReadDirectory,
    private readonly reads: GlobalReadPaths,
    private readonly store: Pick<ComponentStore, 'read'>,
    private readonly progressOf: (origin: string) => OriginProgress | undefined,
    private readonly wallNowMs: () => number,
    floorCountersMax = regionFloorCountersMax,
  ) {
    this.floors = new LruMap(floorCountersMax);
  }

  async read(names: readonly string[], consistency: 'EXACT' | 'CACHED'): Promise<GlobalRead[]> {
    await this.directory.readBarrier(names);
    for (const name of names) refuseGlobalRead(this.directory.get(name));
    const home = consistency === 'CACHED' ? await this.reads.readCached(names) : await this.reads.readExact(names);
    const counters = home.map((read) => read.source ?? this.directory.get(read.counter));
    const held = await this.store.read(counters);
    const nowMs = this.wallNowMs();
    return home.map((read, index) => {
      const parts = [...this.withFloor(read.counter, counters[index], held[index]!).values()].sort((a, b) =>
        a.origin < b.origin ? -1 : 1,
      );
      // A part taken before the newest delete any region has made of the name is a pre-delete part (its
      // region deletes it when it learns of the delete): it counts 0. So does, within the newest incarnation,
      // a part taken before the newest clear any region has made of the counter (its region clears it when
      // it learns of the clear).
      const homeIncarnation = this.directory.tombstone(read.counter)?.incarnation ?? 0;
      const newestIncarnation = parts.reduce((newest, part) => Math.max(newest, incarnationOf(part)), homeIncarnation);
      const current = (part: { incarnation?: number }): boolean => (part.incarnation ?? 0) === newestIncarnation;
      const newestGeneration = parts.reduce(
        (newest, part) => (current(part) ? Math.max(newest, part.generation) : newest),
        homeIncarnation === newestIncarnation ? read.generation : 0,
      );
      const homeTotal = homeIncarnation < newestIncarnation || read.generation < newestGeneration ? 0n : read.total;
      const regions: RegionPartRead[] = [
        { region: this.region, total: homeTotal, asOfUnixMs: read.asOfMs, stalenessMs: read.stalenessMs, home: true },
      ];
      let total = homeTotal;
      let asOfMs = read.asOfMs;
      let stalenessMs = read.stalenessMs;
      for (const component of parts) {
        const partAsOfMs = this.asOfOf(component);
        const partStalenessMs = Math.max(0, nowMs - partAsOfMs);
        const partTotal = !current(component) || component.generation < newestGeneration ? 0n : component.total;
        regions.push({ region: component.origin, total: partTotal, asOfUnixMs: partAsOfMs, stalenessMs: partStalenessMs, home: false });
        total += partTotal;
        asOfMs = Math.min(asOfMs, partAsOfMs);
        stalenessMs = Math.max(stalenessMs, partStalenessMs);
      }
      return { ...read, total, exact: false, asOfMs, stalenessMs, regions };
    });
  }

  /**
   * When the component was last known to be its origin's total: its own
   * read time, or later when the origin has since confirmed a whole round
   * at or past its version through this router's stream.
   */
  private asOfOf(component: RegionComponent): number {
    const fresh = this.progressOf(component.origin)?.fresh;
    if (fresh !== undefined && compareVersions(component.version, fresh.version) <= 0)
      return Math.max(component.asOfUnixMs, fresh.asOfUnixMs);
    return component.asOfUnixMs;
  }

  private withFloor(name: string, counter: CounterInfo | undefined, held: Map<string, RegionComponent>): Map<string, RegionComponent> {
    const shardId = counter?.shards[0]?.shardId;
    if (shardId === undefined) return held;
    let floor = this.floors.get(name);
    if (floor === undefined || floor.shardId !== shardId) {
      floor = { shardId, parts: new Map() };
      this.floors.set(name, floor);
    }
    for (const component of held.values()) floor.parts.set(component.origin, mergeComponent(floor.parts.get(component.origin), component));
    return new Map(floor.parts);
  }
}
