// Original file: proto/counter.proto

import type { Long } from '@grpc/proto-loader';

export interface ShardDrift {
  'pair'?: (number);
  'shardId'?: (number | string | Long);
  /**
   * Empty when the whole pair was checked.
   */
  'counter'?: (string);
  'primaryMemory'?: (number | string | Long);
  'primaryLog'?: (number | string | Long);
  'followerMemory'?: (number | string | Long);
  'followerLog'?: (number | string | Long);
  /**
   * primary memory - primary log; follower memory - follower log;
   * primary log at the follower's lsn - follower log.
   */
  'primaryDrift'?: (number | string | Long);
  'followerDrift'?: (number | string | Long);
  'replicaDrift'?: (number | string | Long);
}

export interface ShardDrift__Output {
  'pair': (number);
  'shardId': (string);
  /**
   * Empty when the whole pair was checked.
   */
  'counter': (string);
  'primaryMemory': (string);
  'primaryLog': (string);
  'followerMemory': (string);
  'followerLog': (string);
  /**
   * primary memory - primary log; follower memory - follower log;
   * primary log at the follower's lsn - follower log.
   */
  'primaryDrift': (string);
  'followerDrift': (string);
  'replicaDrift': (string);
}
