// A log entry as the node wire carries it (a snapshot's keys).
import { toWireInt64 } from '../../wire/index.ts';
import { type shardV1 } from '../../common/index.ts';
import type { StoredEntry } from '../log/index.ts';

/** A snapshot's keyed entry. Numbers where exact: cheaper to encode than decimal strings. */
export function entryToWire(entry: StoredEntry): shardV1.LogEntryMsg {
  const message: shardV1.LogEntryMsg = {
    lsn: toWireInt64(entry.lsn),
    epoch: toWireInt64(entry.epoch),
    shardId: entry.shardId,
    amount: toWireInt64(entry.amount),
    idempotencyKey: entry.idempotencyKey,
    fenceShardCount: entry.fenceShardCount,
    atMs: entry.atMs,
  };
  // Only what the kind needs: every field set costs encoding, even a zero.
  if (entry.kind !== undefined) message.kind = entry.kind;
  if (entry.member !== undefined) message.member = entry.member.toString();
  if (entry.payload !== undefined) message.payload = entry.payload;
  return message;
}

/** Estimated bytes of one entry on the wire (a snapshot stream sizes its blocks by it): sketch rows are large. */
export function entryWireBytes(entry: StoredEntry): number {
  return 64 + entry.idempotencyKey.length + (entry.payload?.length ?? 0);
}
