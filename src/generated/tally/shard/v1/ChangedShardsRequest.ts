// Original file: proto/shard.proto

import type { ProtocolVersion as _tally_shard_v1_ProtocolVersion, ProtocolVersion__Output as _tally_shard_v1_ProtocolVersion__Output } from '../../../tally/shard/v1/ProtocolVersion.ts';
import type { Long } from '@grpc/proto-loader';

export interface ChangedShardsRequest {
  /**
   * The feed the position belongs to ('' on a first call: answered in full).
   */
  'feedId'?: (string);
  /**
   * The position: answers say what changed after it.
   */
  'sinceSeq'?: (number | string | Long);
  /**
   * Shards per answer, at most (1 .. 100000); more=true says there are more.
   */
  'shardsMax'?: (number);
  /**
   * A full answer in pages: the shards with ids above this one (0: from the start).
   */
  'fullAfterShardId'?: (number | string | Long);
  /**
   * The sender's wire version (see ProtocolVersion).
   */
  'protocol'?: (_tally_shard_v1_ProtocolVersion | null);
}

export interface ChangedShardsRequest__Output {
  /**
   * The feed the position belongs to ('' on a first call: answered in full).
   */
  'feedId': (string);
  /**
   * The position: answers say what changed after it.
   */
  'sinceSeq': (string);
  /**
   * Shards per answer, at most (1 .. 100000); more=true says there are more.
   */
  'shardsMax': (number);
  /**
   * A full answer in pages: the shards with ids above this one (0: from the start).
   */
  'fullAfterShardId': (string);
  /**
   * The sender's wire version (see ProtocolVersion).
   */
  'protocol': (_tally_shard_v1_ProtocolVersion__Output | null);
}
