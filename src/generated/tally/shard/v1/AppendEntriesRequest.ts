// Original file: proto/shard.proto

import type { ProtocolVersion as _tally_shard_v1_ProtocolVersion, ProtocolVersion__Output as _tally_shard_v1_ProtocolVersion__Output } from '../../../tally/shard/v1/ProtocolVersion.ts';
import type { Long } from '@grpc/proto-loader';

export interface AppendEntriesRequest {
  'epoch'?: (number | string | Long);
  /**
   * When set, the follower first drops every entry after this lsn.
   */
  'truncate'?: (boolean);
  'truncateAfterLsn'?: (number | string | Long);
  /**
   * Log matching: the entries follow the entry at prev_lsn, written at
   * prev_epoch (0, 0: the log's start). The follower appends (or truncates)
   * only when its own entry there matches; otherwise nothing changes and it
   * answers ok=false with where its log ends.
   */
  'prevLsn'?: (number | string | Long);
  'prevEpoch'?: (number | string | Long);
  /**
   * The entries, lsns prev_lsn + 1 .. prev_lsn + entry_count, as columns in
   * one block (n = entry_count; little-endian; no padding):
   * shard_id   n x float64   (an integer, 1..2^53-1)
   * amount     n x int64
   * epoch      n x uint64
   * at_ms      n x float64   (an integer, the commit time)
   * flags      n x uint8     bits 0-3: kind (as LogEntryMsg.kind);
   * 0x10 key, 0x20 fence count, 0x40 member, 0x80 payload
   * extras     for each entry in order, the fields its flags name, in this order:
   * key: uint16 length + bytes; fence_shard_count: uint32;
   * member: uint64; payload: uint32 length + bytes
   * The block ends exactly after the last entry's extras. Most entries are
   * plain increments (flags 0): 33 bytes each. Each entry is checked as a
   * stored row is; a malformed block is refused whole (INVALID_ARGUMENT).
   */
  'entryCount'?: (number);
  'columns'?: (Buffer | Uint8Array | string);
  /**
   * CRC-32 (zlib's, IEEE) of columns, computed by the primary as it encodes
   * them; columns_checked says it is set (a sender from before leaves both
   * unset). The follower verifies it before it decodes or writes anything: a
   * block whose checksum fails is refused whole (INVALID_ARGUMENT).
   */
  'columnsCrc32'?: (number);
  'columnsChecked'?: (boolean);
  /**
   * Instead of columns (a primary of version 4 or later, to a follower of
   * version 4 or later): the entries as the primary stored them, its commit
   * records and log rows each with its own CRC-32, in lsn order, laid out as
   * src/node/log/commit-wire.ts describes. The follower checks every piece
   * (shape, then checksum) and that they hold exactly entry_count entries
   * from prev_lsn + 1 before it writes anything, and writes them verbatim;
   * anything else is refused whole (INVALID_ARGUMENT). records_crc32 is the
   * CRC-32 of the whole field, checked first.
   */
  'records'?: (Buffer | Uint8Array | string);
  'recordsCrc32'?: (number);
  /**
   * ReplicateStream only: the primary has more frames ready behind this one
   * (a follower catching up). The follower may hold this frame's write
   * (briefly, and never its answer without it) to commit it together with
   * the next ones: one transaction and one fsync for many frames.
   */
  'moreFollows'?: (boolean);
  /**
   * The sender's wire version (see ProtocolVersion).
   */
  'protocol'?: (_tally_shard_v1_ProtocolVersion | null);
}

export interface AppendEntriesRequest__Output {
  'epoch': (string);
  /**
   * When set, the follower first drops every entry after this lsn.
   */
  'truncate': (boolean);
  'truncateAfterLsn': (string);
  /**
   * Log matching: the entries follow the entry at prev_lsn, written at
   * prev_epoch (0, 0: the log's start). The follower appends (or truncates)
   * only when its own entry there matches; otherwise nothing changes and it
   * answers ok=false with where its log ends.
   */
  'prevLsn': (string);
  'prevEpoch': (string);
  /**
   * The entries, lsns prev_lsn + 1 .. prev_lsn + entry_count, as columns in
   * one block (n = entry_count; little-endian; no padding):
   * shard_id   n x float64   (an integer, 1..2^53-1)
   * amount     n x int64
   * epoch      n x uint64
   * at_ms      n x float64   (an integer, the commit time)
   * flags      n x uint8     bits 0-3: kind (as LogEntryMsg.kind);
   * 0x10 key, 0x20 fence count, 0x40 member, 0x80 payload
   * extras     for each entry in order, the fields its flags name, in this order:
   * key: uint16 length + bytes; fence_shard_count: uint32;
   * member: uint64; payload: uint32 length + bytes
   * The block ends exactly after the last entry's extras. Most entries are
   * plain increments (flags 0): 33 bytes each. Each entry is checked as a
   * stored row is; a malformed block is refused whole (INVALID_ARGUMENT).
   */
  'entryCount': (number);
  'columns': (Buffer);
  /**
   * CRC-32 (zlib's, IEEE) of columns, computed by the primary as it encodes
   * them; columns_checked says it is set (a sender from before leaves both
   * unset). The follower verifies it before it decodes or writes anything: a
   * block whose checksum fails is refused whole (INVALID_ARGUMENT).
   */
  'columnsCrc32': (number);
  'columnsChecked': (boolean);
  /**
   * Instead of columns (a primary of version 4 or later, to a follower of
   * version 4 or later): the entries as the primary stored them, its commit
   * records and log rows each with its own CRC-32, in lsn order, laid out as
   * src/node/log/commit-wire.ts describes. The follower checks every piece
   * (shape, then checksum) and that they hold exactly entry_count entries
   * from prev_lsn + 1 before it writes anything, and writes them verbatim;
   * anything else is refused whole (INVALID_ARGUMENT). records_crc32 is the
   * CRC-32 of the whole field, checked first.
   */
  'records': (Buffer);
  'recordsCrc32': (number);
  /**
   * ReplicateStream only: the primary has more frames ready behind this one
   * (a follower catching up). The follower may hold this frame's write
   * (briefly, and never its answer without it) to commit it together with
   * the next ones: one transaction and one fsync for many frames.
   */
  'moreFollows': (boolean);
  /**
   * The sender's wire version (see ProtocolVersion).
   */
  'protocol': (_tally_shard_v1_ProtocolVersion__Output | null);
}
