// Original file: proto/counter.proto

import type { Long } from '@grpc/proto-loader';

export interface PairStatus {
  'pair'?: (number);
  'primary'?: (string);
  'follower'?: (string);
  'epoch'?: (number | string | Long);
  'inSync'?: (boolean);
  /**
   * No new shards are placed on it.
   */
  'draining'?: (boolean);
  /**
   * Shards placed on it, over all counters.
   */
  'shardCount'?: (number | string | Long);
  /**
   * Why the pair's two nodes do not span failure domains (both in one zone
   * while the cluster has another); '' when they do or zones are not given.
   */
  'zoneWarning'?: (string);
}

export interface PairStatus__Output {
  'pair': (number);
  'primary': (string);
  'follower': (string);
  'epoch': (string);
  'inSync': (boolean);
  /**
   * No new shards are placed on it.
   */
  'draining': (boolean);
  /**
   * Shards placed on it, over all counters.
   */
  'shardCount': (string);
  /**
   * Why the pair's two nodes do not span failure domains (both in one zone
   * while the cluster has another); '' when they do or zones are not given.
   */
  'zoneWarning': (string);
}
