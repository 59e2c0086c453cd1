// What the primary ships its follower next: the AppendEntries (a probe, a
// truncation, or the entries after what the follower holds), from the
// commits kept in memory as stored or, further behind, read back from the
// log. It decides from the follower's position the replicator gives it; it
// sends nothing and changes no replication state.
import { nodeCallBytesMax, replicationFrameBytesMax, replicationFrameEntriesMax, type shardV1 } from '../../common/index.ts';
import { shardProtocolStamp } from '../../wire/internal/index.ts';
import { bytesChecksum, type ShardLog } from '../log/index.ts';
import type { RoleState } from '../state/index.ts';
import { RecentEntries } from './recent-entries.ts';
import type { ReplicatorSettings } from './replicator-types.ts';

/** What the next frame (or unary call) sends: its request, the last lsn it carries and its size. */
export interface Shipment {
  request: shardV1.AppendEntriesRequest;
  lastLsn: bigint;
  sizeBytes: number;
  /** Read back from the log (not memory). */
  fromLog?: boolean;
}

/** Where the follower stands, as the replicator last heard it. */
export interface FollowerPosition {
  /** Where its log ends; undefined until its first answer this session. */
  lastLsn: bigint | undefined;
  lastEpoch: bigint;
  /** Its log equals ours up to lastLsn. */
  matched: boolean;
  /** It refused a truncation: its log cannot be mended entry by entry. */
  truncateRefused: boolean;
  /** Where the next frame starts: after the last one in flight, or lastLsn. */
  shippedLsn: bigint | undefined;
  /** It takes frames on a stream (unary calls carry fewer entries). */
  streams: boolean;
}

const noColumns = Buffer.alloc(0);

export class Shipments {
  /** This primary's newest commits, shipped without reading the log back. */
  readonly recent: RecentEntries;
  /** Entries shipped from memory and read back from the log (exported by housekeeping as tally_replication_entries_shipped_total). */
  readonly shipped = { fromMemory: 0, fromLog: 0 };

  constructor(
    private readonly log: ShardLog,
    private readonly settings: ReplicatorSettings,
  ) {
    this.recent = new RecentEntries(settings);
  }

  /** The epoch of the entry at lsn: from memory when it holds it, else as the log tells. */
  epochAt(lsn: bigint): bigint | undefined {
    if (lsn === this.log.lastLsn) return this.log.lastEpoch;
    return this.recent.epochAt(lsn) ?? this.log.entryEpoch(lsn);
  }

  private get frameBytesMax(): number {
    return Math.min(this.settings.frameBytesMax ?? replicationFrameBytesMax, nodeCallBytesMax);
  }

  /** Up to about batchEntriesMax entries from fromLsn on, as stored: from memory when it holds fromLsn, else read from the log (catch-up). */
  private wireFrom(fromLsn: bigint, streams: boolean): { records: Buffer; entryCount: number; lastLsn: bigint; fromLog: boolean } {
    const bytesMax = this.frameBytesMax;
    // A unary call (a follower before streams) carries batchEntriesMax entries; a frame more: each costs the follower one fsync.
    const entriesMax = streams ? (this.settings.frameEntriesMax ?? replicationFrameEntriesMax) : this.settings.batchEntriesMax;
    const run = this.recent.from(fromLsn, entriesMax, bytesMax, this.log.lastLsn);
    if (run !== undefined && run.sizeBytes <= bytesMax) {
      this.shipped.fromMemory += run.entryCount;
      const records = run.parts.length === 1 ? run.parts[0]! : Buffer.concat(run.parts, run.sizeBytes);
      return { records, entryCount: run.entryCount, lastLsn: run.lastLsn, fromLog: false };
    }
    const read = this.log.readWireFrom(fromLsn, entriesMax, bytesMax);
    this.shipped.fromLog += read.entryCount;
    return { records: read.bytes, entryCount: read.entryCount, lastLsn: read.lastLsn, fromLog: true };
  }

  /** The next AppendEntries; 'install' when only a snapshot can bring the follower level; undefined when it has everything. */
  next(role: RoleState, follower: FollowerPosition): Shipment | 'install' | undefined {
    const base = {
      protocol: shardProtocolStamp,
      epoch: role.epoch.toString(),
      truncate: false,
      truncateAfterLsn: '0',
      entryCount: 0,
      columns: noColumns,
      records: noColumns,
      recordsCrc32: 0,
      prevLsn: '0',
      prevEpoch: '0',
    };
    // First contact in this session: an empty append, answered with the follower's position.
    if (follower.lastLsn === undefined) return { request: base, lastLsn: 0n, sizeBytes: 0 };
    let prevLsn: bigint;
    let truncate = false;
    if (follower.matched) {
      prevLsn = follower.shippedLsn!;
      if (prevLsn >= this.log.lastLsn) return undefined;
    } else if (
      !follower.truncateRefused &&
      follower.lastEpoch < role.epoch &&
      follower.lastLsn > role.epochStartLsn &&
      this.log.entryEpoch(role.epochStartLsn) !== undefined
    ) {
      // The follower holds entries written by an older epoch past the point
      // where this epoch began: a deposed primary's tail that was never
      // acknowledged. It drops them (if its log matches ours up to that
      // point) and takes ours instead.
      truncate = true;
      prevLsn = role.epochStartLsn;
    } else {
      return 'install';
    }
    const prevEpoch = this.epochAt(prevLsn);
    // Entries after prevLsn are folded away here: the log alone cannot bring the follower level.
    if (prevEpoch === undefined || prevLsn < this.log.checkpointLsn) return 'install';
    const wire =
      prevLsn < this.log.lastLsn
        ? this.wireFrom(prevLsn + 1n, follower.streams)
        : { records: noColumns, entryCount: 0, lastLsn: prevLsn, fromLog: false };
    return {
      request: {
        ...base,
        truncate,
        truncateAfterLsn: truncate ? prevLsn.toString() : '0',
        prevLsn: prevLsn.toString(),
        prevEpoch: prevEpoch.toString(),
        entryCount: wire.entryCount,
        records: wire.records,
        recordsCrc32: bytesChecksum(wire.records),
      },
      lastLsn: wire.lastLsn,
      sizeBytes: wire.records.length,
      fromLog: wire.fromLog,
    };
  }
}
