// Original file: proto/shard.proto

import type { ProtocolVersion as _tally_shard_v1_ProtocolVersion, ProtocolVersion__Output as _tally_shard_v1_ProtocolVersion__Output } from '../../../tally/shard/v1/ProtocolVersion.ts';
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
  /**
   * The pair's configuration version in the directory this order was derived
   * from: every directory change to the pair issues a higher one. The node
   * persists the version of each order it obeys and refuses (FAILED_PRECONDITION)
   * a lower one, and at the same version any order other than the same one or
   * the same one with sync_required turned on: an order the directory has
   * superseded (late, duplicated, from a deposed supervisor) is never obeyed.
   * 0: an order from a router before versions (the epoch rule alone).
   */
  'configVersion'?: (number | string | Long);
  /**
   * The sender's wire version (see ProtocolVersion).
   */
  'protocol'?: (_tally_shard_v1_ProtocolVersion | null);
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
  /**
   * The pair's configuration version in the directory this order was derived
   * from: every directory change to the pair issues a higher one. The node
   * persists the version of each order it obeys and refuses (FAILED_PRECONDITION)
   * a lower one, and at the same version any order other than the same one or
   * the same one with sync_required turned on: an order the directory has
   * superseded (late, duplicated, from a deposed supervisor) is never obeyed.
   * 0: an order from a router before versions (the epoch rule alone).
   */
  'configVersion': (string);
  /**
   * The sender's wire version (see ProtocolVersion).
   */
  'protocol': (_tally_shard_v1_ProtocolVersion__Output | null);
}
