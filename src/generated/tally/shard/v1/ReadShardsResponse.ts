// Original file: proto/shard.proto

import type { Long } from '@grpc/proto-loader';

export interface ReadShardsResponse {
  'totals'?: (number | string | Long)[];
  'lsn'?: (number | string | Long);
  'role'?: (string);
  'epoch'?: (number | string | Long);
  'nodeId'?: (string);
  /**
   * Indexes into shard_ids of shards at a newer generation than the request
   * named: a clear overtook the read, which must be taken again.
   */
  'newerGenerationIndexes'?: (number)[];
}

export interface ReadShardsResponse__Output {
  'totals': (string)[];
  'lsn': (string);
  'role': (string);
  'epoch': (string);
  'nodeId': (string);
  /**
   * Indexes into shard_ids of shards at a newer generation than the request
   * named: a clear overtook the read, which must be taken again.
   */
  'newerGenerationIndexes': (number)[];
}
