// Original file: proto/shard.proto

import type { InstallSnapshotRequest as _tally_shard_v1_InstallSnapshotRequest, InstallSnapshotRequest__Output as _tally_shard_v1_InstallSnapshotRequest__Output } from '../../../tally/shard/v1/InstallSnapshotRequest.ts';
import type { Long } from '@grpc/proto-loader';

/**
 * One piece of StreamSnapshot: a checkpoint chunk, a block of entries past
 * the checkpoint, or (last) the end.
 */
export interface SnapshotStreamPiece {
  'chunk'?: (_tally_shard_v1_InstallSnapshotRequest | null);
  /**
   * Entries prev_lsn + 1 .. prev_lsn + entry_count, in AppendEntriesRequest's
   * columns layout, with the CRC-32 of columns.
   */
  'prevLsn'?: (number | string | Long);
  'entryCount'?: (number);
  'columns'?: (Buffer | Uint8Array | string);
  'columnsCrc32'?: (number);
  /**
   * The lsn the whole stream reaches (the log's end when the call arrived), on every piece.
   */
  'endLsn'?: (number | string | Long);
  /**
   * The stream's last piece: nothing follows (a stream without it was cut short).
   */
  'last'?: (boolean);
}

/**
 * One piece of StreamSnapshot: a checkpoint chunk, a block of entries past
 * the checkpoint, or (last) the end.
 */
export interface SnapshotStreamPiece__Output {
  'chunk': (_tally_shard_v1_InstallSnapshotRequest__Output | null);
  /**
   * Entries prev_lsn + 1 .. prev_lsn + entry_count, in AppendEntriesRequest's
   * columns layout, with the CRC-32 of columns.
   */
  'prevLsn': (string);
  'entryCount': (number);
  'columns': (Buffer);
  'columnsCrc32': (number);
  /**
   * The lsn the whole stream reaches (the log's end when the call arrived), on every piece.
   */
  'endLsn': (string);
  /**
   * The stream's last piece: nothing follows (a stream without it was cut short).
   */
  'last': (boolean);
}
