// Original file: proto/shard.proto

import type { ApplyGroup as _tally_shard_v1_ApplyGroup, ApplyGroup__Output as _tally_shard_v1_ApplyGroup__Output } from '../../../tally/shard/v1/ApplyGroup.ts';
import type { ProtocolVersion as _tally_shard_v1_ProtocolVersion, ProtocolVersion__Output as _tally_shard_v1_ProtocolVersion__Output } from '../../../tally/shard/v1/ProtocolVersion.ts';
import type { Long } from '@grpc/proto-loader';

export interface ApplyRequest {
  /**
   * The pair epoch the router believes is current.
   */
  'epoch'?: (number | string | Long);
  'groups'?: (_tally_shard_v1_ApplyGroup)[];
  /**
   * The sender's wire version (see ProtocolVersion).
   */
  'protocol'?: (_tally_shard_v1_ProtocolVersion | null);
}

export interface ApplyRequest__Output {
  /**
   * The pair epoch the router believes is current.
   */
  'epoch': (string);
  'groups': (_tally_shard_v1_ApplyGroup__Output)[];
  /**
   * The sender's wire version (see ProtocolVersion).
   */
  'protocol': (_tally_shard_v1_ProtocolVersion__Output | null);
}
