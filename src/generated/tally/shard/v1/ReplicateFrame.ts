// Original file: proto/shard.proto

import type { AppendEntriesRequest as _tally_shard_v1_AppendEntriesRequest, AppendEntriesRequest__Output as _tally_shard_v1_AppendEntriesRequest__Output } from '../../../tally/shard/v1/AppendEntriesRequest.ts';

export interface ReplicateFrame {
  /**
   * As ApplyFrame.seq.
   */
  'seq'?: (number);
  'request'?: (_tally_shard_v1_AppendEntriesRequest | null);
}

export interface ReplicateFrame__Output {
  /**
   * As ApplyFrame.seq.
   */
  'seq': (number);
  'request': (_tally_shard_v1_AppendEntriesRequest__Output | null);
}
