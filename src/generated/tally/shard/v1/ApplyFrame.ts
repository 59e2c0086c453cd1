// Original file: proto/shard.proto

import type { ApplyRequest as _tally_shard_v1_ApplyRequest, ApplyRequest__Output as _tally_shard_v1_ApplyRequest__Output } from '../../../tally/shard/v1/ApplyRequest.ts';

export interface ApplyFrame {
  /**
   * 1 .. 2^32 - 1, unique among the stream's frames in flight.
   */
  'seq'?: (number);
  'request'?: (_tally_shard_v1_ApplyRequest | null);
}

export interface ApplyFrame__Output {
  /**
   * 1 .. 2^32 - 1, unique among the stream's frames in flight.
   */
  'seq': (number);
  'request': (_tally_shard_v1_ApplyRequest__Output | null);
}
