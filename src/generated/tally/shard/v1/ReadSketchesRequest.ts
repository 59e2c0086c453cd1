// Original file: proto/shard.proto

import type { ProtocolVersion as _tally_shard_v1_ProtocolVersion, ProtocolVersion__Output as _tally_shard_v1_ProtocolVersion__Output } from '../../../tally/shard/v1/ProtocolVersion.ts';
import type { Long } from '@grpc/proto-loader';

export interface ReadSketchesRequest {
  'shardIds'?: (number | string | Long)[];
  'merge'?: (boolean);
  /**
   * As in ReadShardsRequest.
   */
  'generations'?: (number | string | Long)[];
  /**
   * The sender's wire version (see ProtocolVersion).
   */
  'protocol'?: (_tally_shard_v1_ProtocolVersion | null);
}

export interface ReadSketchesRequest__Output {
  'shardIds': (string)[];
  'merge': (boolean);
  /**
   * As in ReadShardsRequest.
   */
  'generations': (string)[];
  /**
   * The sender's wire version (see ProtocolVersion).
   */
  'protocol': (_tally_shard_v1_ProtocolVersion__Output | null);
}
