// The log's keyed rows as the dedup index reads them: one key's newest row
// within the window, and the newest rows of the window for rebuilding the
// index's memory. Reads only; every row read back is checked.
import assert from 'node:assert/strict';
import type { prepareLogStatements } from './log-statements.ts';
import type { KeyRecord } from './log-types.ts';
import { ShardLogError } from './records/log-entry.ts';

/** Told of each keyed row replayed, in lsn order. */
export type KeyVisitor = (lsn: bigint, shardId: number, key: Buffer, atMs: number, fenceShardCount: number) => void;

export class KeyRows {
  constructor(
    private readonly statements: ReturnType<typeof prepareLogStatements>,
    /** Runs read; damage is told to the log's onDamage first. */
    private readonly checkedRead: <T>(read: () => T) => T,
  ) {}

  /**
   * The newest row of `key` at `shardId` committed at or after sinceMs, or
   * undefined: the key's state within the window, read from disk. Rows are
   * kept for the window even after the checkpoint folds them.
   */
  findKey(shardId: number, key: Buffer, sinceMs: number): KeyRecord | undefined {
    return this.checkedRead(() => {
      const row = this.statements.selectKey.get(shardId, key, sinceMs);
      if (row === undefined) return undefined;
      const [lsn, atMs, fenceShardCount] = row;
      // The paired check: a keyed row read back is what append could have written.
      if (
        lsn <= 0n ||
        atMs < BigInt(sinceMs) ||
        atMs > BigInt(Number.MAX_SAFE_INTEGER) ||
        (fenceShardCount ?? 0n) < 0n ||
        (fenceShardCount ?? 0n) > BigInt(Number.MAX_SAFE_INTEGER)
      ) {
        throw new ShardLogError(`log entry ${lsn} is invalid (shard ${shardId}): bad key row (at ${atMs}, fence ${fenceShardCount})`);
      }
      return { lsn, atMs: Number(atMs), fenceShardCount: Number(fenceShardCount ?? 0n) };
    });
  }

  /**
   * The newest keyed rows written since sinceMs, at most rowsMax of them,
   * folded or not, in lsn order: what the dedup index's memory is rebuilt
   * from. Returns the commit time of the newest row in the window it left
   * out (undefined when it left none out): keys up to then are on disk only.
   * Reads about 2 x rowsMax rows whatever the window holds.
   */
  replayKeys(sinceMs: number, rowsMax: number, onKey: KeyVisitor): number | undefined {
    assert.ok(Number.isSafeInteger(rowsMax) && rowsMax >= 0, 'rowsMax must be a count');
    const leftOut = this.statements.selectKeyLeftOut.get(sinceMs, rowsMax);
    const rows = this.statements.selectKeysAfter.iterate(leftOut?.[0] ?? 0n, sinceMs);
    for (const [lsn, shardId, key, atMs, fenceShardCount] of rows)
      onKey(lsn, Number(shardId), key, Number(atMs), Number(fenceShardCount ?? 0n));
    if (leftOut === undefined) return undefined;
    // Commit times follow lsns only as far as the primaries' clocks agree (a
    // failover between two machines): the newest of all rows left out, not
    // the time of the last one, says until when the disk alone holds keys.
    const newestAtMs = this.statements.selectKeysNewestAtMs.get(sinceMs, leftOut[0]);
    return Number(newestAtMs ?? leftOut[1]);
  }
}
