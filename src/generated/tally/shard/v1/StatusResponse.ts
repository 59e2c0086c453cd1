// Original file: proto/shard.proto

import type { ProtocolVersion as _tally_shard_v1_ProtocolVersion, ProtocolVersion__Output as _tally_shard_v1_ProtocolVersion__Output } from '../../../tally/shard/v1/ProtocolVersion.ts';
import type { Long } from '@grpc/proto-loader';

export interface StatusResponse {
  'role'?: (string);
  'pid'?: (number);
  'lastLsn'?: (number | string | Long);
  'shardCount'?: (number | string | Long);
  'epoch'?: (number | string | Long);
  /**
   * False while the node replays its log or shuts down.
   */
  'ready'?: (boolean);
  'peer'?: (string);
  'syncRequired'?: (boolean);
  /**
   * Primary: the highest lsn its follower has confirmed, and how it goes.
   */
  'followerAckedLsn'?: (number | string | Long);
  'followerCaughtUp'?: (boolean);
  'followerError'?: (string);
  /**
   * Milliseconds the oldest unconfirmed entry has waited (0 when none).
   */
  'replicationLagMs'?: (number | string | Long);
  'epochStartLsn'?: (number | string | Long);
  /**
   * The identity of this node's log: random, made when its data directory
   * was first initialised. A node with an empty or foreign disk has another.
   */
  'nodeId'?: (string);
  /**
   * Epoch of the last entry (0 for an empty log).
   */
  'lastEpoch'?: (number | string | Long);
  'checkpointLsn'?: (number | string | Long);
  /**
   * Primary: the identity of the follower whose confirmations follower_acked_lsn counts.
   */
  'followerId'?: (string);
  /**
   * Follower: a snapshot install is under way (the log is incomplete).
   */
  'installing'?: (boolean);
  /**
   * The configuration version of the last order this node obeyed (SetRole).
   */
  'configVersion'?: (number | string | Long);
  /**
   * Primary: its follower's log (same identity) ended before what it had
   * already confirmed (an old copy of its disk); true until it holds that again.
   */
  'followerLostEntries'?: (boolean);
  /**
   * The wire version this node speaks (absent: a node before versions, 1).
   */
  'protocol'?: (_tally_shard_v1_ProtocolVersion | null);
  /**
   * The failure domain the node runs in (--zone; '' when not given).
   */
  'zone'?: (string);
  /**
   * Where its partner reaches it to replicate (--advertise-replication-address);
   * '' when that is the address routers dial.
   */
  'replicationAddress'?: (string);
  /**
   * Primary: its follower (same identity) holds entries of this primary's own
   * epoch past where this log ends: this log lost entries it had written (an
   * old copy of its disk). It refuses writes and reads until the pair fails
   * over to that follower.
   */
  'followerAhead'?: (boolean);
}

export interface StatusResponse__Output {
  'role': (string);
  'pid': (number);
  'lastLsn': (string);
  'shardCount': (string);
  'epoch': (string);
  /**
   * False while the node replays its log or shuts down.
   */
  'ready': (boolean);
  'peer': (string);
  'syncRequired': (boolean);
  /**
   * Primary: the highest lsn its follower has confirmed, and how it goes.
   */
  'followerAckedLsn': (string);
  'followerCaughtUp': (boolean);
  'followerError': (string);
  /**
   * Milliseconds the oldest unconfirmed entry has waited (0 when none).
   */
  'replicationLagMs': (string);
  'epochStartLsn': (string);
  /**
   * The identity of this node's log: random, made when its data directory
   * was first initialised. A node with an empty or foreign disk has another.
   */
  'nodeId': (string);
  /**
   * Epoch of the last entry (0 for an empty log).
   */
  'lastEpoch': (string);
  'checkpointLsn': (string);
  /**
   * Primary: the identity of the follower whose confirmations follower_acked_lsn counts.
   */
  'followerId': (string);
  /**
   * Follower: a snapshot install is under way (the log is incomplete).
   */
  'installing': (boolean);
  /**
   * The configuration version of the last order this node obeyed (SetRole).
   */
  'configVersion': (string);
  /**
   * Primary: its follower's log (same identity) ended before what it had
   * already confirmed (an old copy of its disk); true until it holds that again.
   */
  'followerLostEntries': (boolean);
  /**
   * The wire version this node speaks (absent: a node before versions, 1).
   */
  'protocol': (_tally_shard_v1_ProtocolVersion__Output | null);
  /**
   * The failure domain the node runs in (--zone; '' when not given).
   */
  'zone': (string);
  /**
   * Where its partner reaches it to replicate (--advertise-replication-address);
   * '' when that is the address routers dial.
   */
  'replicationAddress': (string);
  /**
   * Primary: its follower (same identity) holds entries of this primary's own
   * epoch past where this log ends: this log lost entries it had written (an
   * old copy of its disk). It refuses writes and reads until the pair fails
   * over to that follower.
   */
  'followerAhead': (boolean);
}
