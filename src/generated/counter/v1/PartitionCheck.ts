// Original file: proto/counter.proto

import type { Long } from '@grpc/proto-loader';

export interface PartitionCheck {
  'partition'?: (number);
  'shardId'?: (number | string | Long);
  'pair'?: (number);
  /**
   * Members in the partition's bitmap, and the count stored next to it.
   */
  'members'?: (number | string | Long);
  'storedCount'?: (number | string | Long);
  /**
   * stored_count - members.
   */
  'drift'?: (number | string | Long);
  /**
   * The correction made (repair only).
   */
  'repaired'?: (number | string | Long);
  /**
   * The same drift on the pair's follower (flips move both sides alike, so
   * replicas agree on drift even while one lags); unset when it could not be read.
   */
  'followerChecked'?: (boolean);
  'followerDrift'?: (number | string | Long);
}

export interface PartitionCheck__Output {
  'partition': (number);
  'shardId': (string);
  'pair': (number);
  /**
   * Members in the partition's bitmap, and the count stored next to it.
   */
  'members': (string);
  'storedCount': (string);
  /**
   * stored_count - members.
   */
  'drift': (string);
  /**
   * The correction made (repair only).
   */
  'repaired': (string);
  /**
   * The same drift on the pair's follower (flips move both sides alike, so
   * replicas agree on drift even while one lags); unset when it could not be read.
   */
  'followerChecked': (boolean);
  'followerDrift': (string);
}
