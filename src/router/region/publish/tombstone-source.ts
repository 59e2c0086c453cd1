// The publisher's deleted names: each tombstone of this region's directory
// becomes a component (no total, marked as a tombstone, at the tombstone's
// incarnation) in the published table, so every link ships it until its peer
// acknowledges it, and a new term ships it again. It also says at which
// incarnation a counter's total was taken. It never writes.
import { regionFullSweepRounds } from '../../../common/index.ts';
import { incarnationOf, type ComponentVersion, type RegionComponent } from '../../../wire/internal/index.ts';
import type { CounterInfo, Tombstone } from '../../directory/index.ts';

export interface TombstoneDirectory {
  get(name: string): CounterInfo | undefined;
  tombstone(name: string): Tombstone | undefined;
  tombstones(): IterableIterator<Tombstone>;
}

export class TombstoneSource {
  /** Names deleted through this router since the last round: shipped next round rather than at the next sweep. */
  private marked = new Set<string>();

  constructor(
    private readonly region: string,
    private readonly directory: TombstoneDirectory,
  ) {}

  /** A DeleteCounter through this router recorded the name's tombstone. */
  mark(name: string): void {
    this.marked.add(name);
  }

  /**
   * The incarnation of the live counter `name` (the directory's tombstone:
   * a counter is created after its name's newest delete), or undefined when
   * `source`, the counter a read resolved, is no longer the live one (deleted
   * since: that total is a pre-delete part and is not published).
   */
  incarnationOf(name: string, source?: CounterInfo): number | undefined {
    const live = this.directory.get(name);
    if (live === undefined) return undefined;
    if (source !== undefined && source.shards[0]?.shardId !== live.shards[0]?.shardId) return undefined;
    return this.directory.tombstone(name)?.incarnation ?? 0;
  }

  /**
   * One round: the tombstones the table does not yet hold at their
   * incarnation become components at `version` (their names pushed to
   * `changed`). Names marked since the last round every round; every
   * tombstone on the first round of a term and each regionFullSweepRounds-th
   * (a delete through another router). So the table never keeps a
   * pre-delete component of a name: a counter created again under it
   * replaces the tombstone with its own components (of that incarnation)
   * once its total is taken.
   */
  collect(table: Map<string, RegionComponent>, version: ComponentVersion, asOfUnixMs: number, changed: string[]): void {
    const marked = this.marked;
    this.marked = new Set();
    const sweep = version.round % BigInt(regionFullSweepRounds) === 1n;
    const take = (tombstone: Tombstone): void => {
      const held = table.get(tombstone.name);
      if (held !== undefined && incarnationOf(held) >= tombstone.incarnation) return;
      table.set(tombstone.name, {
        origin: this.region,
        version,
        total: 0n,
        asOfUnixMs,
        generation: 0,
        incarnation: tombstone.incarnation,
        tombstone: true,
      });
      changed.push(tombstone.name);
    };
    if (sweep) for (const tombstone of this.directory.tombstones()) take(tombstone);
    else
      for (const name of marked) {
        const tombstone = this.directory.tombstone(name);
        if (tombstone !== undefined) take(tombstone);
      }
  }
}
