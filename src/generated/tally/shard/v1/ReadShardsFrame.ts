// Original file: proto/shard.proto

import type { ReadShardsRequest as _tally_shard_v1_ReadShardsRequest, ReadShardsRequest__Output as _tally_shard_v1_ReadShardsRequest__Output } from '../../../tally/shard/v1/ReadShardsRequest.ts';

export interface ReadShardsFrame {
  /**
   * As ApplyFrame.seq.
   */
  'seq'?: (number);
  'request'?: (_tally_shard_v1_ReadShardsRequest | null);
}

export interface ReadShardsFrame__Output {
  /**
   * As ApplyFrame.seq.
   */
  'seq': (number);
  'request': (_tally_shard_v1_ReadShardsRequest__Output | null);
}
