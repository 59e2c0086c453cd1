// Original file: proto/counter.proto

import type { Long } from '@grpc/proto-loader';

export interface ReadResponse {
  'counter'?: (string);
  'total'?: (number | string | Long);
  /**
   * True when total is the sum of every shard taken during this call.
   */
  'exact'?: (boolean);
  /**
   * Every increment acknowledged before this instant is included in total.
   */
  'asOfUnixMs'?: (number | string | Long);
  'stalenessMs'?: (number | string | Long);
  'shards'?: (number);
}

export interface ReadResponse__Output {
  'counter': (string);
  'total': (string);
  /**
   * True when total is the sum of every shard taken during this call.
   */
  'exact': (boolean);
  /**
   * Every increment acknowledged before this instant is included in total.
   */
  'asOfUnixMs': (string);
  'stalenessMs': (string);
  'shards': (number);
}
