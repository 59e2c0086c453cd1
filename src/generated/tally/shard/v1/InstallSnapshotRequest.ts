// Original file: proto/shard.proto

import type { SnapshotShard as _tally_shard_v1_SnapshotShard, SnapshotShard__Output as _tally_shard_v1_SnapshotShard__Output } from '../../../tally/shard/v1/SnapshotShard.ts';
import type { SnapshotPart as _tally_shard_v1_SnapshotPart, SnapshotPart__Output as _tally_shard_v1_SnapshotPart__Output } from '../../../tally/shard/v1/SnapshotPart.ts';
import type { LogEntryMsg as _tally_shard_v1_LogEntryMsg, LogEntryMsg__Output as _tally_shard_v1_LogEntryMsg__Output } from '../../../tally/shard/v1/LogEntryMsg.ts';
import type { ProtocolVersion as _tally_shard_v1_ProtocolVersion, ProtocolVersion__Output as _tally_shard_v1_ProtocolVersion__Output } from '../../../tally/shard/v1/ProtocolVersion.ts';
import type { Long } from '@grpc/proto-loader';

export interface InstallSnapshotRequest {
  'epoch'?: (number | string | Long);
  /**
   * One install: every chunk carries the same id; chunk_index counts from 0.
   */
  'snapshotId'?: (string);
  'chunkIndex'?: (number);
  /**
   * The snapshot is the fold of every entry up to snapshot_lsn (written at snapshot_epoch).
   */
  'snapshotLsn'?: (number | string | Long);
  'snapshotEpoch'?: (number | string | Long);
  'shards'?: (_tally_shard_v1_SnapshotShard)[];
  'parts'?: (_tally_shard_v1_SnapshotPart)[];
  /**
   * Keyed entries at or before snapshot_lsn still inside the dedup window.
   */
  'keys'?: (_tally_shard_v1_LogEntryMsg)[];
  'done'?: (boolean);
  /**
   * CRC-32 of the chunk's content (shards, parts and keys in order, as
   * src/node/log/checksums.ts chunkChecksum lays them out), set with
   * chunk_checked by the primary from what it read off its own checked log;
   * the follower verifies it before it writes the chunk (INVALID_ARGUMENT).
   */
  'chunkCrc32'?: (number);
  'chunkChecked'?: (boolean);
  /**
   * The sender's wire version (see ProtocolVersion).
   */
  'protocol'?: (_tally_shard_v1_ProtocolVersion | null);
}

export interface InstallSnapshotRequest__Output {
  'epoch': (string);
  /**
   * One install: every chunk carries the same id; chunk_index counts from 0.
   */
  'snapshotId': (string);
  'chunkIndex': (number);
  /**
   * The snapshot is the fold of every entry up to snapshot_lsn (written at snapshot_epoch).
   */
  'snapshotLsn': (string);
  'snapshotEpoch': (string);
  'shards': (_tally_shard_v1_SnapshotShard__Output)[];
  'parts': (_tally_shard_v1_SnapshotPart__Output)[];
  /**
   * Keyed entries at or before snapshot_lsn still inside the dedup window.
   */
  'keys': (_tally_shard_v1_LogEntryMsg__Output)[];
  'done': (boolean);
  /**
   * CRC-32 of the chunk's content (shards, parts and keys in order, as
   * src/node/log/checksums.ts chunkChecksum lays them out), set with
   * chunk_checked by the primary from what it read off its own checked log;
   * the follower verifies it before it writes the chunk (INVALID_ARGUMENT).
   */
  'chunkCrc32': (number);
  'chunkChecked': (boolean);
  /**
   * The sender's wire version (see ProtocolVersion).
   */
  'protocol': (_tally_shard_v1_ProtocolVersion__Output | null);
}
