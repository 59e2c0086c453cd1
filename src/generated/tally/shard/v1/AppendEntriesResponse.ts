// Original file: proto/shard.proto

import type { Long } from '@grpc/proto-loader';

export interface AppendEntriesResponse {
  /**
   * False when the entries do not continue the follower's log; nothing was written.
   */
  'ok'?: (boolean);
  'lastLsn'?: (number | string | Long);
  'lastEpoch'?: (number | string | Long);
  /**
   * The follower's log identity: a new one means a new (empty) log.
   */
  'nodeId'?: (string);
  /**
   * Entries up to here are folded into the follower's checkpoint.
   */
  'checkpointLsn'?: (number | string | Long);
}

export interface AppendEntriesResponse__Output {
  /**
   * False when the entries do not continue the follower's log; nothing was written.
   */
  'ok': (boolean);
  'lastLsn': (string);
  'lastEpoch': (string);
  /**
   * The follower's log identity: a new one means a new (empty) log.
   */
  'nodeId': (string);
  /**
   * Entries up to here are folded into the follower's checkpoint.
   */
  'checkpointLsn': (string);
}
