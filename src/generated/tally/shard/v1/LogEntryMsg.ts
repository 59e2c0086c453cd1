// Original file: proto/shard.proto

import type { Long } from '@grpc/proto-loader';

export interface LogEntryMsg {
  'lsn'?: (number | string | Long);
  'epoch'?: (number | string | Long);
  'shardId'?: (number | string | Long);
  'amount'?: (number | string | Long);
  'idempotencyKey'?: (Buffer | Uint8Array | string);
  'atMs'?: (number | string | Long);
  'fenceShardCount'?: (number);
  /**
   * 0 increment, 1 member flip, 2 distinct registers, 3 window setting, 4 drop,
   * 5 clear, 6 cleared-away key, 7 region component, 8 packed region
   * components (many shards' rows in one entry).
   */
  'kind'?: (number);
  'member'?: (number | string | Long);
  'payload'?: (Buffer | Uint8Array | string);
}

export interface LogEntryMsg__Output {
  'lsn': (string);
  'epoch': (string);
  'shardId': (string);
  'amount': (string);
  'idempotencyKey': (Buffer);
  'atMs': (string);
  'fenceShardCount': (number);
  /**
   * 0 increment, 1 member flip, 2 distinct registers, 3 window setting, 4 drop,
   * 5 clear, 6 cleared-away key, 7 region component, 8 packed region
   * components (many shards' rows in one entry).
   */
  'kind': (number);
  'member': (string);
  'payload': (Buffer);
}
