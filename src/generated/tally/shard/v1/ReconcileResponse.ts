// Original file: proto/shard.proto

import type { ShardCheck as _tally_shard_v1_ShardCheck, ShardCheck__Output as _tally_shard_v1_ShardCheck__Output } from '../../../tally/shard/v1/ShardCheck.ts';
import type { Long } from '@grpc/proto-loader';

export interface ReconcileResponse {
  'lastLsn'?: (number | string | Long);
  'shards'?: (_tally_shard_v1_ShardCheck)[];
  'role'?: (string);
  'epoch'?: (number | string | Long);
  /**
   * Entries up to here are folded into the checkpoint.
   */
  'checkpointLsn'?: (number | string | Long);
  /**
   * False when compare_at_lsn is already folded: log_total_at_compare_lsn is unknown.
   */
  'compareAvailable'?: (boolean);
}

export interface ReconcileResponse__Output {
  'lastLsn': (string);
  'shards': (_tally_shard_v1_ShardCheck__Output)[];
  'role': (string);
  'epoch': (string);
  /**
   * Entries up to here are folded into the checkpoint.
   */
  'checkpointLsn': (string);
  /**
   * False when compare_at_lsn is already folded: log_total_at_compare_lsn is unknown.
   */
  'compareAvailable': (boolean);
}
