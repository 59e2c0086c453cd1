// Original file: proto/shard.proto

import type { ApplyItem as _tally_shard_v1_ApplyItem, ApplyItem__Output as _tally_shard_v1_ApplyItem__Output } from '../../../tally/shard/v1/ApplyItem.ts';

export interface ApplyGroup {
  'items'?: (_tally_shard_v1_ApplyItem)[];
}

export interface ApplyGroup__Output {
  'items': (_tally_shard_v1_ApplyItem__Output)[];
}
