// Original file: proto/shard.proto

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
}
