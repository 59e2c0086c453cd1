// Original file: proto/shard.proto

import type { ProtocolVersion as _tally_shard_v1_ProtocolVersion, ProtocolVersion__Output as _tally_shard_v1_ProtocolVersion__Output } from '../../../tally/shard/v1/ProtocolVersion.ts';

export interface StreamSnapshotRequest {
  /**
   * The sender's wire version (see ProtocolVersion).
   */
  'protocol'?: (_tally_shard_v1_ProtocolVersion | null);
}

export interface StreamSnapshotRequest__Output {
  /**
   * The sender's wire version (see ProtocolVersion).
   */
  'protocol': (_tally_shard_v1_ProtocolVersion__Output | null);
}
