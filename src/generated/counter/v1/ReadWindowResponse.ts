// Original file: proto/counter.proto

import type { Long } from '@grpc/proto-loader';

export interface ReadWindowResponse {
  'counter'?: (string);
  'total'?: (number | string | Long);
  'exact'?: (boolean);
  /**
   * The buckets summed: [from, to). The newest is the current, partial
   * bucket; the sum covers between (buckets - 1) and buckets bucket lengths.
   */
  'fromUnixMs'?: (number | string | Long);
  'toUnixMs'?: (number | string | Long);
  'bucketMs'?: (number | string | Long);
  'buckets'?: (number);
  'asOfUnixMs'?: (number | string | Long);
  'stalenessMs'?: (number | string | Long);
}

export interface ReadWindowResponse__Output {
  'counter': (string);
  'total': (string);
  'exact': (boolean);
  /**
   * The buckets summed: [from, to). The newest is the current, partial
   * bucket; the sum covers between (buckets - 1) and buckets bucket lengths.
   */
  'fromUnixMs': (string);
  'toUnixMs': (string);
  'bucketMs': (string);
  'buckets': (number);
  'asOfUnixMs': (string);
  'stalenessMs': (string);
}
