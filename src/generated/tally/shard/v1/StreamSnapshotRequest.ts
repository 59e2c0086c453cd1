// Original file: proto/shard.proto

import type { ProtocolVersion as _tally_shard_v1_ProtocolVersion, ProtocolVersion__Output as _tally_shard_v1_ProtocolVersion__Output } from '../../../tally/shard/v1/ProtocolVersion.ts';

export interface StreamSnapshotRequest {
  /**
   * How long the node may wait for its checkpoint to reach the log's end (0: 10,000).
   */
  'waitMs'?: (number);
  /**
   * The sender's wire version (see ProtocolVersion).
   */
  'protocol'?: (_tally_shard_v1_ProtocolVersion | null);
}

export interface StreamSnapshotRequest__Output {
  /**
   * How long the node may wait for its checkpoint to reach the log's end (0: 10,000).
   */
  'waitMs': (number);
  /**
   * The sender's wire version (see ProtocolVersion).
   */
  'protocol': (_tally_shard_v1_ProtocolVersion__Output | null);
}
