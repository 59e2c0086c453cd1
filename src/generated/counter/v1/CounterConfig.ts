// Original file: proto/counter.proto

import type { Long } from '@grpc/proto-loader';

export interface CounterConfig {
  'createdUnixMs'?: (number | string | Long);
  /**
   * False when an operator fixed the shard count; heat never grows it then.
   */
  'autoscale'?: (boolean);
  /**
   * "total", "distinct" or "membership": fixed at creation.
   */
  'kind'?: (string);
  /**
   * Totals with a window: bucket size and retention (0 when none).
   */
  'windowBucketMs'?: (number | string | Long);
  'windowRetentionMs'?: (number | string | Long);
}

export interface CounterConfig__Output {
  'createdUnixMs': (string);
  /**
   * False when an operator fixed the shard count; heat never grows it then.
   */
  'autoscale': (boolean);
  /**
   * "total", "distinct" or "membership": fixed at creation.
   */
  'kind': (string);
  /**
   * Totals with a window: bucket size and retention (0 when none).
   */
  'windowBucketMs': (string);
  'windowRetentionMs': (string);
}
