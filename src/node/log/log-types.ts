// The shapes the log hands out: snapshot chunks, key records and the checkpoint.
import type { StoredEntry } from './records/log-entry.ts';

/** A piece of a snapshot: checkpoint totals, part pieces and keyed entries. */
export interface SnapshotChunk {
  shards: [shardId: number, total: bigint][];
  parts: { shardId: number; part: string; data: Buffer }[];
  keys: StoredEntry[];
}

/**
 * The newest log row of an idempotency key at one shard: the key's state
 * there (applied, or fenced at a shard count), as the dedup index keeps it.
 */
export interface KeyRecord {
  lsn: bigint;
  atMs: number;
  /** 0: the key's increment applied here. Otherwise a fence set at this shard count. */
  fenceShardCount: number;
}

/** The checkpoint: per-shard totals plus each shard's folded state of the other kinds. */
export interface CheckpointState {
  totals: Map<number, bigint>;
  /** Per shard, per part ('window', 'sketch', 'members'): the part's serialized state. */
  parts: Map<number, Map<string, Buffer>>;
}

/**
 * Folds entries into checkpoint state: the same code that applies entries
 * to memory, so checkpoint + tail always equals a full replay.
 */
export interface CheckpointFolder {
  fold(state: CheckpointState, entries: readonly StoredEntry[], nowMs: number): CheckpointState;
}
