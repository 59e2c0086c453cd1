// Original file: proto/shard.proto

import type { ProtocolVersion as _tally_shard_v1_ProtocolVersion, ProtocolVersion__Output as _tally_shard_v1_ProtocolVersion__Output } from '../../../tally/shard/v1/ProtocolVersion.ts';
import type { Long } from '@grpc/proto-loader';

export interface ReadShardsRequest {
  'shardIds'?: (number | string | Long)[];
  /**
   * Parallel to shard_ids, or empty (all 0): each shard's counter generation
   * as the router read it. A shard at an older generation has not seen the
   * clear yet and reads as empty (0 here, no sketch, no member, 0 buckets).
   * MemberCounts ignores them: it compares a shard with itself.
   */
  'generations'?: (number | string | Long)[];
  /**
   * The sender's wire version (see ProtocolVersion).
   */
  'protocol'?: (_tally_shard_v1_ProtocolVersion | null);
}

export interface ReadShardsRequest__Output {
  'shardIds': (string)[];
  /**
   * Parallel to shard_ids, or empty (all 0): each shard's counter generation
   * as the router read it. A shard at an older generation has not seen the
   * clear yet and reads as empty (0 here, no sketch, no member, 0 buckets).
   * MemberCounts ignores them: it compares a shard with itself.
   */
  'generations': (string)[];
  /**
   * The sender's wire version (see ProtocolVersion).
   */
  'protocol': (_tally_shard_v1_ProtocolVersion__Output | null);
}
