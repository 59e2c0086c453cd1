// Original file: proto/shard.proto

import type { Long } from '@grpc/proto-loader';

export interface ReadComponentsResponse {
  /**
   * Per named shard: its components, each a region-component record, packed
   * one after another (empty: none).
   */
  'components'?: (Buffer | Uint8Array | string)[];
  'lsn'?: (number | string | Long);
  'role'?: (string);
  'epoch'?: (number | string | Long);
  'nodeId'?: (string);
}

export interface ReadComponentsResponse__Output {
  /**
   * Per named shard: its components, each a region-component record, packed
   * one after another (empty: none).
   */
  'components': (Buffer)[];
  'lsn': (string);
  'role': (string);
  'epoch': (string);
  'nodeId': (string);
}
