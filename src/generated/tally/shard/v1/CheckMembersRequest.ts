// Original file: proto/shard.proto

import type { ProtocolVersion as _tally_shard_v1_ProtocolVersion, ProtocolVersion__Output as _tally_shard_v1_ProtocolVersion__Output } from '../../../tally/shard/v1/ProtocolVersion.ts';
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
  /**
   * The sender's wire version (see ProtocolVersion).
   */
  'protocol'?: (_tally_shard_v1_ProtocolVersion | null);
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
  /**
   * The sender's wire version (see ProtocolVersion).
   */
  'protocol': (_tally_shard_v1_ProtocolVersion__Output | null);
}
