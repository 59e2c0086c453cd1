// What both stores answer from memory alike: every synchronous read of the
// Directory contract, served by the DirectoryModel the store applies its
// committed changes to. A store extends it and adds its changes.
import type { CounterInfo, Directory, PairInfo, ShardTask, Tombstone } from './contract.ts';
import type { DirectoryModel } from './model.ts';
import type { CounterColumns } from './contract.ts';

export abstract class ModelBackedDirectory implements Pick<
  Directory,
  | 'get'
  | 'removedCount'
  | 'liveCounters'
  | 'pendingShardTasks'
  | 'shardTasksForRound'
  | 'shardTask'
  | 'pendingShardTaskCount'
  | 'pendingShardTaskCounts'
  | 'pair'
  | 'pairOf'
  | 'allPairs'
  | 'shardCountOfPair'
  | 'zoneWarning'
  | 'counterCount'
  | 'shardCount'
  | 'counterColumns'
  | 'tombstone'
  | 'tombstones'
> {
  /** Tombstones by name, as committed (the store loads and changes them). */
  protected readonly tombstoneTable = new Map<string, Tombstone>();

  /** Things an operator should hear about at start (logged by main). */
  readonly warnings: string[] = [];

  protected constructor(protected readonly model: DirectoryModel) {}

  get(name: string): CounterInfo | undefined {
    return this.model.get(name);
  }

  tombstone(name: string): Tombstone | undefined {
    return this.tombstoneTable.get(name);
  }

  tombstones(): IterableIterator<Tombstone> {
    return this.tombstoneTable.values();
  }

  /** The tombstones a delete records, one incarnation past each name's current one. */
  protected nextTombstones(names: readonly string[], deletedMs: number): Tombstone[] {
    return names.map((name) => ({ name, incarnation: (this.tombstoneTable.get(name)?.incarnation ?? 0) + 1, deletedMs }));
  }

  /** Tombstones pruneTombstones may forget: recorded at or before beforeMs, of names with no counter. */
  protected prunable(beforeMs: number): Tombstone[] {
    return [...this.tombstoneTable.values()].filter((tombstone) => tombstone.deletedMs <= beforeMs && !this.model.has(tombstone.name));
  }

  /** See Directory.removedCount. */
  get removedCount(): number {
    return this.model.removedCount;
  }

  liveCounters(options?: { reuseHandle?: boolean }): IterableIterator<CounterInfo> {
    return this.model.liveCounters(options?.reuseHandle === true);
  }

  pendingShardTasks(): ShardTask[] {
    return this.model.shardTasks.all();
  }

  /** See ShardTaskTable.forRound. */
  shardTasksForRound(perPairMax: number, skipPair: (pairIndex: number) => boolean): ShardTask[] {
    return this.model.shardTasks.forRound(perPairMax, skipPair, this.model.allPairs().length);
  }

  shardTask(shardId: number): ShardTask | undefined {
    return this.model.shardTasks.get(shardId);
  }

  get pendingShardTaskCount(): number {
    return this.model.shardTasks.size;
  }

  get pendingShardTaskCounts(): Readonly<Record<ShardTask['kind'], number>> {
    return this.model.shardTasks.countsByKind;
  }

  pair(pairIndex: number): PairInfo {
    return this.model.pair(pairIndex);
  }

  pairOf(address: string): PairInfo | undefined {
    return this.model.pairOf(address);
  }

  allPairs(): readonly PairInfo[] {
    return this.model.allPairs();
  }

  shardCountOfPair(pairIndex: number): number {
    return this.model.shardCountOfPair(pairIndex);
  }

  zoneWarning(pairIndex: number): string {
    return this.model.zoneWarning(pairIndex);
  }

  get counterColumns(): CounterColumns {
    return this.model.columns;
  }

  get counterCount(): number {
    return this.model.counterCount;
  }

  /** Shards over all counters. */
  get shardCount(): number {
    return this.model.shardCount;
  }
}
