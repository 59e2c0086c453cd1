// Which shards changed, in apply order, for the region publisher's feed
// (ChangedShards): a bounded ring of shard ids numbered by a sequence that
// only this memory's lifetime knows. It never holds totals (memory does) and
// never decides what a caller may see (the handler confirms the cut).
import { randomUUID } from 'node:crypto';
import assert from 'node:assert/strict';

/** What changed after a position: the ids (first seen order, each once) and the position they cover. */
export interface ChangedSince {
  shardIds: number[];
  /** Every shard changed up to this position is in shardIds. */
  seq: number;
  /** shardIds stopped at the maximum asked for: changes after seq remain. */
  more: boolean;
}

export class ChangeFeed {
  /** A new id per memory lifetime: a position of another feed (a restart, a rebuild, the other node) is unknown here. */
  readonly id = randomUUID();
  private readonly ring: Float64Array;
  /** Changes noted so far: the newest is at seq, the ring holds (seq - ring.length, seq]. */
  private seqNow = 0;

  constructor(ringEntries: number) {
    assert.ok(Number.isSafeInteger(ringEntries) && ringEntries > 0, 'a change ring holds at least one entry');
    this.ring = new Float64Array(ringEntries);
  }

  get seq(): number {
    return this.seqNow;
  }

  /** The shard's total or generation changed (called for every applied entry that can change either). */
  note(shardId: number): void {
    this.ring[this.seqNow % this.ring.length] = shardId;
    this.seqNow++;
  }

  /** True when the changes after `seq` are all still in the ring. */
  knows(seq: number): boolean {
    return Number.isSafeInteger(seq) && seq >= 0 && seq <= this.seqNow && this.seqNow - seq <= this.ring.length;
  }

  /** The shards changed after `seq` (which knows() must accept), at most `shardsMax` of them. */
  changedSince(seq: number, shardsMax: number): ChangedSince {
    assert.ok(this.knows(seq), `position ${seq} is not in the change ring`);
    const seen = new Set<number>();
    const shardIds: number[] = [];
    let position = seq;
    // Bounded by the ring: at most ring.length entries are visited.
    while (position < this.seqNow) {
      const shardId = this.ring[position % this.ring.length]!;
      if (!seen.has(shardId)) {
        if (shardIds.length === shardsMax) return { shardIds, seq: position, more: true };
        seen.add(shardId);
        shardIds.push(shardId);
      }
      position++;
    }
    return { shardIds, seq: position, more: false };
  }
}
