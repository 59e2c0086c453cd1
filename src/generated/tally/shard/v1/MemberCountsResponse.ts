// Original file: proto/shard.proto

import type { Long } from '@grpc/proto-loader';

export interface MemberCountsResponse {
  'memberCounts'?: (number | string | Long)[];
  'totals'?: (number | string | Long)[];
  'lsn'?: (number | string | Long);
  'role'?: (string);
  'epoch'?: (number | string | Long);
  'nodeId'?: (string);
}

export interface MemberCountsResponse__Output {
  'memberCounts': (string)[];
  'totals': (string)[];
  'lsn': (string);
  'role': (string);
  'epoch': (string);
  'nodeId': (string);
}
