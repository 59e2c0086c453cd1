// A counter as callers see it (CounterInfo): a handle on its slot in the
// CounterTable that reads the columns live, so a caller holding it across an
// await sees a clear or a growth made meanwhile, as it did with an object.
// It never writes: changes go through DirectoryModel.
import { ErrorCode, TallyError, type WindowSetting } from '../../wire/index.ts';
import type { CounterInfo, CounterKind, Growth, ShardInfo } from './contract.ts';
import type { CounterTable } from './counter-table.ts';

export class CounterView implements CounterInfo {
  /** A one-shard counter's shards, made once per handle (ES private: not part of a handle's equality). */
  #singleShard: ShardInfo[] | undefined;

  constructor(
    private readonly table: CounterTable,
    private slotHeld: number,
    private incarnation: number,
    private nameHeld: string,
  ) {}

  get slot(): number {
    return this.slotHeld;
  }

  get name(): string {
    return this.nameHeld;
  }

  /** Points this handle at another counter: only for the one handle a reused walk (liveCounters) hands out. */
  repoint(slot: number, incarnation: number, name: string): void {
    this.slotHeld = slot;
    this.incarnation = incarnation;
    this.nameHeld = name;
    this.#singleShard = undefined;
  }

  /**
   * The slot, while it still holds this counter's facts: a deleted counter's
   * stay readable until its slot is reused (slotReuseDelayMs, longer than any
   * call), and a handle held past that fails rather than read another's.
   */
  private live(): number {
    if (this.table.incarnationOf(this.slot) !== this.incarnation)
      throw new TallyError(ErrorCode.notFound, `counter "${this.name}" was deleted while a call still used it`);
    return this.slot;
  }

  /** Same counter (not deleted and created again) as `other`. */
  isSame(other: CounterInfo): boolean {
    return other instanceof CounterView && other.slot === this.slot && other.incarnation === this.incarnation && other.table === this.table;
  }

  get kind(): CounterKind {
    return this.table.kindOf(this.live());
  }

  get window(): WindowSetting {
    return this.table.windowOf(this.live());
  }

  get shards(): readonly ShardInfo[] {
    const slot = this.live();
    if (this.table.shardCountOf(slot) === 1) return (this.#singleShard ??= this.table.shardsOf(slot));
    return this.table.shardsOf(slot);
  }

  get shardCount(): number {
    return this.table.shardCountOf(this.live());
  }

  shardIdAt(shardIndex: number): number {
    return this.table.shardIdOf(this.live(), shardIndex);
  }

  pairIndexAt(shardIndex: number): number {
    return this.table.pairIndexOf(this.live(), shardIndex);
  }

  get writableShardCount(): number {
    return this.table.writableShardCountOf(this.live());
  }

  get createdMs(): number {
    return this.table.createdMsOf(this.live());
  }

  get growths(): readonly Growth[] {
    return this.table.growthsOf(this.live());
  }

  get autoscale(): boolean {
    return this.table.autoscaleOf(this.live());
  }

  get generation(): number {
    return this.table.generationOf(this.live());
  }

  get ttlMs(): number | null {
    return this.table.ttlMsOf(this.live());
  }

  get lastWriteMonotonicMs(): number {
    return this.table.lastWriteMonotonicMsOf(this.live());
  }
}

/**
 * True when both name one counter, not one deleted and created again under
 * its name: handles are made per lookup, so compare them with this, not ===.
 */
export function sameCounter(a: CounterInfo | undefined, b: CounterInfo | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return a instanceof CounterView ? a.isSame(b) : a === b;
}

/** A counter's facts as a plain object, copied now (a deleted counter's, snapshots and tests). */
export function plainCounter(counter: CounterInfo): CounterInfo {
  return {
    name: counter.name,
    kind: counter.kind,
    window: counter.window,
    shards: counter.shards.map((shard) => ({ ...shard })),
    writableShardCount: counter.writableShardCount,
    createdMs: counter.createdMs,
    growths: counter.growths.map((growth) => ({ ...growth })),
    autoscale: counter.autoscale,
    generation: counter.generation,
    ttlMs: counter.ttlMs,
    lastWriteMonotonicMs: counter.lastWriteMonotonicMs,
  };
}
