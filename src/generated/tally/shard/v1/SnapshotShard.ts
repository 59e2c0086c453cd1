// Original file: proto/shard.proto

import type { Long } from '@grpc/proto-loader';

export interface SnapshotShard {
  'shardId'?: (number | string | Long);
  'total'?: (number | string | Long);
}

export interface SnapshotShard__Output {
  'shardId': (string);
  'total': (string);
}
