// Original file: proto/shard.proto

import type { ApplyGroup as _tally_shard_v1_ApplyGroup, ApplyGroup__Output as _tally_shard_v1_ApplyGroup__Output } from '../../../tally/shard/v1/ApplyGroup.ts';
import type { Long } from '@grpc/proto-loader';

export interface ApplyRequest {
  /**
   * The pair epoch the router believes is current.
   */
  'epoch'?: (number | string | Long);
  'groups'?: (_tally_shard_v1_ApplyGroup)[];
}

export interface ApplyRequest__Output {
  /**
   * The pair epoch the router believes is current.
   */
  'epoch': (string);
  'groups': (_tally_shard_v1_ApplyGroup__Output)[];
}
