// Original file: proto/shard.proto

import type { ProtocolVersion as _tally_shard_v1_ProtocolVersion, ProtocolVersion__Output as _tally_shard_v1_ProtocolVersion__Output } from '../../../tally/shard/v1/ProtocolVersion.ts';
import type { Long } from '@grpc/proto-loader';

export interface ReconcileRequest {
  /**
   * Empty: every shard the node holds.
   */
  'shardIds'?: (number | string | Long)[];
  /**
   * Also recompute totals from the log up to this lsn (0: skip).
   */
  'compareAtLsn'?: (number | string | Long);
  /**
   * The sender's wire version (see ProtocolVersion).
   */
  'protocol'?: (_tally_shard_v1_ProtocolVersion | null);
}

export interface ReconcileRequest__Output {
  /**
   * Empty: every shard the node holds.
   */
  'shardIds': (string)[];
  /**
   * Also recompute totals from the log up to this lsn (0: skip).
   */
  'compareAtLsn': (string);
  /**
   * The sender's wire version (see ProtocolVersion).
   */
  'protocol': (_tally_shard_v1_ProtocolVersion__Output | null);
}
