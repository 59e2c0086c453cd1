// Original file: proto/shard.proto

import type { Long } from '@grpc/proto-loader';

export interface ReadShardsRequest {
  'shardIds'?: (number | string | Long)[];
}

export interface ReadShardsRequest__Output {
  'shardIds': (string)[];
}
