// Original file: proto/counter.proto

import type { Long } from '@grpc/proto-loader';

export interface WindowSettings {
  /**
   * A multiple of 1000, at least 1000. 0 with retention 0 turns windows off.
   */
  'bucketMs'?: (number | string | Long);
  /**
   * A multiple of bucket_ms, at most 400 days and 10,000 buckets.
   */
  'retentionMs'?: (number | string | Long);
}

export interface WindowSettings__Output {
  /**
   * A multiple of 1000, at least 1000. 0 with retention 0 turns windows off.
   */
  'bucketMs': (string);
  /**
   * A multiple of bucket_ms, at most 400 days and 10,000 buckets.
   */
  'retentionMs': (string);
}
