// Original file: proto/shard.proto

import type { Long } from '@grpc/proto-loader';

export interface ReadWindowsRequest {
  'shardIds'?: (number | string | Long)[];
  'fromMs'?: (number | string | Long);
  'toMs'?: (number | string | Long);
  /**
   * The bucket width the reader means. A shard still on another width has
   * had no increment since the width changed (every increment carries it),
   * and a width change restarts the window: it sums 0.
   */
  'bucketMs'?: (number | string | Long);
  /**
   * As in ReadShardsRequest.
   */
  'generations'?: (number | string | Long)[];
}

export interface ReadWindowsRequest__Output {
  'shardIds': (string)[];
  'fromMs': (string);
  'toMs': (string);
  /**
   * The bucket width the reader means. A shard still on another width has
   * had no increment since the width changed (every increment carries it),
   * and a width change restarts the window: it sums 0.
   */
  'bucketMs': (string);
  /**
   * As in ReadShardsRequest.
   */
  'generations': (string)[];
}
