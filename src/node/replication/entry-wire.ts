// A log entry as the node wire carries it (a snapshot's keys), and an
// append as a follower before streams takes it (entry columns).
import { toWireInt64 } from '../../wire/index.ts';
import type { shardV1 } from '../../common/index.ts';
import { bytesChecksum, decodeCommitWire, encodeEntryColumns, entriesOfWire, type StoredEntry } from '../log/index.ts';

const noColumns = Buffer.alloc(0);

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

/** The request for a follower before streams: its records as entry columns (with their checksum), which it decodes. */
export function withColumns(request: shardV1.AppendEntriesRequest): shardV1.AppendEntriesRequest {
  const prevLsn = BigInt(String(request.prevLsn ?? '0'));
  const records = request.records as Buffer;
  const entries = records.length === 0 ? [] : entriesOfWire(decodeCommitWire(records, prevLsn + 1n, request.entryCount ?? 0));
  const columns = encodeEntryColumns(entries);
  return { ...request, records: noColumns, recordsCrc32: 0, columns, columnsCrc32: bytesChecksum(columns), columnsChecked: true };
}
