// Original file: proto/shard.proto

import type { Long } from '@grpc/proto-loader';

export interface SetRoleRequest {
  'role'?: (string);
  'epoch'?: (number | string | Long);
  'peer'?: (string);
  'syncRequired'?: (boolean);
  /**
   * How long a primary asked to require sync may wait for its follower to catch up.
   */
  'catchUpTimeoutMs'?: (number);
  /**
   * The identity the router knows this node by: refused (FAILED_PRECONDITION)
   * when the node's log has another one (its disk was lost or replaced).
   */
  'nodeId'?: (string);
  /**
   * Primary only: refused unless the log reaches this lsn (what was acknowledged).
   */
  'minLastLsn'?: (number | string | Long);
}

export interface SetRoleRequest__Output {
  'role': (string);
  'epoch': (string);
  'peer': (string);
  'syncRequired': (boolean);
  /**
   * How long a primary asked to require sync may wait for its follower to catch up.
   */
  'catchUpTimeoutMs': (number);
  /**
   * The identity the router knows this node by: refused (FAILED_PRECONDITION)
   * when the node's log has another one (its disk was lost or replaced).
   */
  'nodeId': (string);
  /**
   * Primary only: refused unless the log reaches this lsn (what was acknowledged).
   */
  'minLastLsn': (string);
}
