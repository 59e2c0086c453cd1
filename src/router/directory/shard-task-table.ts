// The drops and clears nodes still owe, as both directory stores hold them
// in memory: one task per shard, counts by kind kept as tasks come and go
// (not by a walk: a down pair may owe millions), and a retry round's share.
import type { ShardTask } from './contract.ts';

export class ShardTaskTable {
  private readonly tasks = new Map<number, ShardTask>();
  private readonly counts: Record<ShardTask['kind'], number> = { drop: 0, clear: 0 };

  get(shardId: number): ShardTask | undefined {
    return this.tasks.get(shardId);
  }

  /** The one task owed for its shard from now on (a drop replaces a clear, a newer clear an older one). */
  set(task: ShardTask): void {
    const replaced = this.tasks.get(task.shardId);
    if (replaced !== undefined) this.counts[replaced.kind]--;
    this.tasks.set(task.shardId, task);
    this.counts[task.kind]++;
  }

  delete(shardId: number): void {
    const owed = this.tasks.get(shardId);
    if (owed === undefined) return;
    this.tasks.delete(shardId);
    this.counts[owed.kind]--;
  }

  /** True when `task` is the one owed, as it was sent (kind and generation). */
  isOwedAsSent(task: ShardTask): boolean {
    const owed = this.tasks.get(task.shardId);
    return owed !== undefined && owed.kind === task.kind && owed.generation === task.generation;
  }

  all(): ShardTask[] {
    return [...this.tasks.values()];
  }

  shardIds(): IterableIterator<number> {
    return this.tasks.keys();
  }

  get size(): number {
    return this.tasks.size;
  }

  get countsByKind(): Readonly<Record<ShardTask['kind'], number>> {
    return this.counts;
  }

  /**
   * One retry round's tasks: at most perPairMax per pair, none of the pairs
   * `skipPair` names (a pair whose primary is known down would only fail
   * them again). Stops once every one of pairCount pairs has its share, so
   * a down pair owing millions costs a round nothing.
   */
  forRound(perPairMax: number, skipPair: (pairIndex: number) => boolean, pairCount: number): ShardTask[] {
    const taken = new Map<number, number>();
    const round: ShardTask[] = [];
    let pairsFull = 0;
    for (const task of this.tasks.values()) {
      const count = taken.get(task.pairIndex) ?? 0;
      if (count >= perPairMax) continue;
      if (count === 0 && skipPair(task.pairIndex)) {
        taken.set(task.pairIndex, perPairMax);
        if (++pairsFull === pairCount) break;
        continue;
      }
      round.push(task);
      taken.set(task.pairIndex, count + 1);
      if (count + 1 === perPairMax && ++pairsFull === pairCount) break;
    }
    return round;
  }
}
