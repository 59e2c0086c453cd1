// Original file: proto/counter.proto

import type { Long } from '@grpc/proto-loader';

export interface NodeInfo {
  'address'?: (string);
  /**
   * "primary" or "follower".
   */
  'role'?: (string);
  'pair'?: (number);
  /**
   * "SERVING", "NOT_SERVING" or "UNREACHABLE".
   */
  'health'?: (string);
  'lastLsn'?: (number | string | Long);
  'pid'?: (number);
  'shardCount'?: (number | string | Long);
  /**
   * Entries the follower has not yet committed; 0 for a primary.
   */
  'replicationLagEntries'?: (number | string | Long);
  'error'?: (string);
  'epoch'?: (number | string | Long);
  /**
   * Pair state from the directory: the follower holds every acknowledged increment.
   */
  'inSync'?: (boolean);
  'replicationLagMs'?: (number | string | Long);
  /**
   * The node's log identity (made when its data directory was initialised).
   */
  'nodeId'?: (string);
  /**
   * A snapshot install into this node is under way.
   */
  'installing'?: (boolean);
  /**
   * The failure domain the node reports (its --zone; '' when not given).
   */
  'zone'?: (string);
  /**
   * The internal wire version the node speaks (0: it did not answer).
   */
  'protocolVersion'?: (number);
  /**
   * Where its partner replicates to, when not its address here.
   */
  'replicationAddress'?: (string);
}

export interface NodeInfo__Output {
  'address': (string);
  /**
   * "primary" or "follower".
   */
  'role': (string);
  'pair': (number);
  /**
   * "SERVING", "NOT_SERVING" or "UNREACHABLE".
   */
  'health': (string);
  'lastLsn': (string);
  'pid': (number);
  'shardCount': (string);
  /**
   * Entries the follower has not yet committed; 0 for a primary.
   */
  'replicationLagEntries': (string);
  'error': (string);
  'epoch': (string);
  /**
   * Pair state from the directory: the follower holds every acknowledged increment.
   */
  'inSync': (boolean);
  'replicationLagMs': (string);
  /**
   * The node's log identity (made when its data directory was initialised).
   */
  'nodeId': (string);
  /**
   * A snapshot install into this node is under way.
   */
  'installing': (boolean);
  /**
   * The failure domain the node reports (its --zone; '' when not given).
   */
  'zone': (string);
  /**
   * The internal wire version the node speaks (0: it did not answer).
   */
  'protocolVersion': (number);
  /**
   * Where its partner replicates to, when not its address here.
   */
  'replicationAddress': (string);
}
