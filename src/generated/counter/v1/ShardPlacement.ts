// Original file: proto/counter.proto

import type { Long } from '@grpc/proto-loader';

export interface ShardPlacement {
  'shard'?: (number);
  'shardId'?: (number | string | Long);
  'pair'?: (number);
  'primary'?: (string);
  'follower'?: (string);
  'epoch'?: (number | string | Long);
}

export interface ShardPlacement__Output {
  'shard': (number);
  'shardId': (string);
  'pair': (number);
  'primary': (string);
  'follower': (string);
  'epoch': (string);
}
