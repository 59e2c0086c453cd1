// Original file: proto/shard.proto

import type { ProtocolVersion as _tally_shard_v1_ProtocolVersion, ProtocolVersion__Output as _tally_shard_v1_ProtocolVersion__Output } from '../../../tally/shard/v1/ProtocolVersion.ts';
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
  /**
   * The sender's wire version (see ProtocolVersion).
   */
  'protocol'?: (_tally_shard_v1_ProtocolVersion | null);
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
  /**
   * The sender's wire version (see ProtocolVersion).
   */
  'protocol': (_tally_shard_v1_ProtocolVersion__Output | null);
}
