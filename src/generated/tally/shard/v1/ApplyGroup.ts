// Original file: proto/shard.proto

import type { ApplyItem as _tally_shard_v1_ApplyItem, ApplyItem__Output as _tally_shard_v1_ApplyItem__Output } from '../../../tally/shard/v1/ApplyItem.ts';
import type { PackedIncrements as _tally_shard_v1_PackedIncrements, PackedIncrements__Output as _tally_shard_v1_PackedIncrements__Output } from '../../../tally/shard/v1/PackedIncrements.ts';

/**
 * One caller's group: all of it applies or none of it. Its packed
 * increments apply first, in order, then its items, in order.
 */
export interface ApplyGroup {
  /**
   * Keyed increments, fences and the other ops: one message each.
   */
  'items'?: (_tally_shard_v1_ApplyItem)[];
  'increments'?: (_tally_shard_v1_PackedIncrements)[];
}

/**
 * One caller's group: all of it applies or none of it. Its packed
 * increments apply first, in order, then its items, in order.
 */
export interface ApplyGroup__Output {
  /**
   * Keyed increments, fences and the other ops: one message each.
   */
  'items': (_tally_shard_v1_ApplyItem__Output)[];
  'increments': (_tally_shard_v1_PackedIncrements__Output)[];
}
