// Original file: proto/shard.proto

import type { Long } from '@grpc/proto-loader';

export interface ReadShardsResponse {
  'totals'?: (number | string | Long)[];
  'lsn'?: (number | string | Long);
  'role'?: (string);
  'epoch'?: (number | string | Long);
  'nodeId'?: (string);
}

export interface ReadShardsResponse__Output {
  'totals': (string)[];
  'lsn': (string);
  'role': (string);
  'epoch': (string);
  'nodeId': (string);
}
