// Original file: proto/shard.proto

import type { Long } from '@grpc/proto-loader';

export interface CheckMembersResponse {
  'present'?: (boolean)[];
  'lsn'?: (number | string | Long);
  'role'?: (string);
  'epoch'?: (number | string | Long);
  'nodeId'?: (string);
  /**
   * As in ReadShardsResponse.
   */
  'newerGenerationIndexes'?: (number)[];
}

export interface CheckMembersResponse__Output {
  'present': (boolean)[];
  'lsn': (string);
  'role': (string);
  'epoch': (string);
  'nodeId': (string);
  /**
   * As in ReadShardsResponse.
   */
  'newerGenerationIndexes': (number)[];
}
