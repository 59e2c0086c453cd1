// Original file: proto/shard.proto

import type { Long } from '@grpc/proto-loader';

export interface CheckMembersRequest {
  /**
   * Parallel lists: member i is looked up in shard shard_ids[i].
   */
  'shardIds'?: (number | string | Long)[];
  'members'?: (number | string | Long)[];
  /**
   * As in ReadShardsRequest (parallel to shard_ids).
   */
  'generations'?: (number | string | Long)[];
}

export interface CheckMembersRequest__Output {
  /**
   * Parallel lists: member i is looked up in shard shard_ids[i].
   */
  'shardIds': (string)[];
  'members': (string)[];
  /**
   * As in ReadShardsRequest (parallel to shard_ids).
   */
  'generations': (string)[];
}
