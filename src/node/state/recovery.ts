// Recovery: rebuilds a node's memory (every kind's state and the newest keys)
// from its log, after start and after a truncation or snapshot install. Reads
// the log only: it never writes to it and never serves a call.
import { droppedShardTombstoneMs } from '../../common/index.ts';
import type { DedupIndex } from './dedup-index.ts';
import type { ShardLog } from '../log/index.ts';
import type { NodeMemory } from './node-memory.ts';

/**
 * Rebuilds memory (every kind's state and the newest keys) from the log:
 * after start and after a truncation. Only as many keyed rows as the dedup
 * index holds in memory are read, so a window of many millions of keys does
 * not slow a restart; the older ones are found on disk.
 */
export function rebuildMemory(log: ShardLog, memory: NodeMemory, dedup: DedupIndex, nowMs: number, dedupWindowMs: number): bigint {
  memory.clear();
  dedup.clear();
  // Checkpoint, then the tail after it: the same state as replaying everything.
  // Totals stream row by row (a Map of millions first would be the node's peak memory).
  log.forEachCheckpointTotal((shardId, total) => memory.totals.add(shardId, total));
  memory.load({ totals: new Map(), parts: log.checkpointParts() });
  const lastLsn = log.replay((entry) => memory.apply(entry, entry.atMs));
  // Replayed buckets and tombstones may be long expired: free them now rather than on the sweep's rounds.
  memory.windows.expire(nowMs, memory.windows.shardCount);
  memory.pruneTombstones(nowMs - droppedShardTombstoneMs, memory.droppedCount);
  // Keys come from keyed rows of the window, folded or not: the newest that fit in memory.
  const leftOutNewestAtMs = log.replayKeys(nowMs - dedupWindowMs + 1, dedup.keysInMemoryMax, (lsn, shardId, key, atMs, fenceShardCount) =>
    dedup.add(shardId, key, lsn, atMs, fenceShardCount),
  );
  if (leftOutNewestAtMs !== undefined) dedup.leftOnDisk(leftOutNewestAtMs);
  return lastLsn;
}
