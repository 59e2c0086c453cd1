// Original file: proto/shard.proto

import type { AppendEntriesResponse as _tally_shard_v1_AppendEntriesResponse, AppendEntriesResponse__Output as _tally_shard_v1_AppendEntriesResponse__Output } from '../../../tally/shard/v1/AppendEntriesResponse.ts';
import type { FrameError as _tally_shard_v1_FrameError, FrameError__Output as _tally_shard_v1_FrameError__Output } from '../../../tally/shard/v1/FrameError.ts';

export interface ReplicateAnswer {
  'seq'?: (number);
  /**
   * Exactly one of them.
   */
  'response'?: (_tally_shard_v1_AppendEntriesResponse | null);
  'error'?: (_tally_shard_v1_FrameError | null);
}

export interface ReplicateAnswer__Output {
  'seq': (number);
  /**
   * Exactly one of them.
   */
  'response': (_tally_shard_v1_AppendEntriesResponse__Output | null);
  'error': (_tally_shard_v1_FrameError__Output | null);
}
