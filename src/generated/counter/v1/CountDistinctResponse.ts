// Original file: proto/counter.proto

import type { Long } from '@grpc/proto-loader';

export interface CountDistinctResponse {
  'estimate'?: (number | string | Long);
  /**
   * Relative standard error of the estimate (1.04 / sqrt(16384)).
   */
  'standardError'?: (number | string);
  /**
   * Shard sketches merged.
   */
  'shards'?: (number);
}

export interface CountDistinctResponse__Output {
  'estimate': (string);
  /**
   * Relative standard error of the estimate (1.04 / sqrt(16384)).
   */
  'standardError': (number);
  /**
   * Shard sketches merged.
   */
  'shards': (number);
}
