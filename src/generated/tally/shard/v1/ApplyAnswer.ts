// Original file: proto/shard.proto

import type { ApplyResponse as _tally_shard_v1_ApplyResponse, ApplyResponse__Output as _tally_shard_v1_ApplyResponse__Output } from '../../../tally/shard/v1/ApplyResponse.ts';
import type { FrameError as _tally_shard_v1_FrameError, FrameError__Output as _tally_shard_v1_FrameError__Output } from '../../../tally/shard/v1/FrameError.ts';

export interface ApplyAnswer {
  'seq'?: (number);
  /**
   * Exactly one of them.
   */
  'response'?: (_tally_shard_v1_ApplyResponse | null);
  'error'?: (_tally_shard_v1_FrameError | null);
}

export interface ApplyAnswer__Output {
  'seq': (number);
  /**
   * Exactly one of them.
   */
  'response': (_tally_shard_v1_ApplyResponse__Output | null);
  'error': (_tally_shard_v1_FrameError__Output | null);
}
