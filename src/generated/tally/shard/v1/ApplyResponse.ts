// Original file: proto/shard.proto

import type { GroupResult as _tally_shard_v1_GroupResult, GroupResult__Output as _tally_shard_v1_GroupResult__Output } from '../../../tally/shard/v1/GroupResult.ts';
import type { Long } from '@grpc/proto-loader';

export interface ApplyResponse {
  'results'?: (_tally_shard_v1_GroupResult)[];
  'lsn'?: (number | string | Long);
}

export interface ApplyResponse__Output {
  'results': (_tally_shard_v1_GroupResult__Output)[];
  'lsn': (string);
}
