// Original file: proto/shard.proto

import type { Long } from '@grpc/proto-loader';

export interface ShardCheck {
  'shardId'?: (number | string | Long);
  'memoryTotal'?: (number | string | Long);
  'logTotal'?: (number | string | Long);
  'logTotalAtCompareLsn'?: (number | string | Long);
}

export interface ShardCheck__Output {
  'shardId': (string);
  'memoryTotal': (string);
  'logTotal': (string);
  'logTotalAtCompareLsn': (string);
}
