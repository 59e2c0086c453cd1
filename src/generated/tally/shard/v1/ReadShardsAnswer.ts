// Original file: proto/shard.proto

import type { ReadShardsResponse as _tally_shard_v1_ReadShardsResponse, ReadShardsResponse__Output as _tally_shard_v1_ReadShardsResponse__Output } from '../../../tally/shard/v1/ReadShardsResponse.ts';
import type { FrameError as _tally_shard_v1_FrameError, FrameError__Output as _tally_shard_v1_FrameError__Output } from '../../../tally/shard/v1/FrameError.ts';

export interface ReadShardsAnswer {
  'seq'?: (number);
  /**
   * Exactly one of them.
   */
  'response'?: (_tally_shard_v1_ReadShardsResponse | null);
  'error'?: (_tally_shard_v1_FrameError | null);
}

export interface ReadShardsAnswer__Output {
  'seq': (number);
  /**
   * Exactly one of them.
   */
  'response': (_tally_shard_v1_ReadShardsResponse__Output | null);
  'error': (_tally_shard_v1_FrameError__Output | null);
}
