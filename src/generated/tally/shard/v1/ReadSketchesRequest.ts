// Original file: proto/shard.proto

import type { Long } from '@grpc/proto-loader';

export interface ReadSketchesRequest {
  'shardIds'?: (number | string | Long)[];
  'merge'?: (boolean);
  /**
   * As in ReadShardsRequest.
   */
  'generations'?: (number | string | Long)[];
}

export interface ReadSketchesRequest__Output {
  'shardIds': (string)[];
  'merge': (boolean);
  /**
   * As in ReadShardsRequest.
   */
  'generations': (string)[];
}
