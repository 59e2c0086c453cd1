// Original file: proto/shard.proto

import type { ProtocolVersion as _tally_shard_v1_ProtocolVersion, ProtocolVersion__Output as _tally_shard_v1_ProtocolVersion__Output } from '../../../tally/shard/v1/ProtocolVersion.ts';
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
  /**
   * The follower's protocol: a primary logs only entry kinds its follower can
   * hold (absent: a follower from before protocol 6, which refuses kind 8).
   */
  'protocol'?: (_tally_shard_v1_ProtocolVersion | null);
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
  /**
   * The follower's protocol: a primary logs only entry kinds its follower can
   * hold (absent: a follower from before protocol 6, which refuses kind 8).
   */
  'protocol': (_tally_shard_v1_ProtocolVersion__Output | null);
}
