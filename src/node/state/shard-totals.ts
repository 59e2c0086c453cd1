// In-memory shard totals: the node's answer to reads. Only ever changed after
// the log has committed the change (or while replaying it).
import assert from 'node:assert/strict';
import { isInt64 } from '../../common/index.ts';

export class ShardTotals {
  // A cold shard costs one Map entry: a small integer key and a bigint.
  private readonly totals = new Map<number, bigint>();

  get(shardId: number): bigint {
    return this.totals.get(shardId) ?? 0n;
  }

  add(shardId: number, amount: bigint): void {
    const next = this.get(shardId) + amount;
    assert.ok(isInt64(next), `shard ${shardId} total left int64`);
    this.totals.set(shardId, next);
  }

  /** Frees one shard's total (a dropped shard reads 0, like one never written). */
  delete(shardId: number): void {
    this.totals.delete(shardId);
  }

  /** Forgets everything: before a replay that rebuilds memory from the log. */
  clear(): void {
    this.totals.clear();
  }

  /** Every shard id held, for reconciliation. */
  shardIds(): number[] {
    return [...this.totals.keys()];
  }

  get shardCount(): number {
    return this.totals.size;
  }
}
