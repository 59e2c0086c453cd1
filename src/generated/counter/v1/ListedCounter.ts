// Original file: proto/counter.proto

import type { Long } from '@grpc/proto-loader';

export interface ListedCounter {
  'name'?: (string);
  /**
   * "total", "distinct" or "membership".
   */
  'kind'?: (string);
  'shards'?: (number);
  /**
   * The time to live in force (its own or the router default); 0: never expires.
   */
  'ttlMs'?: (number | string | Long);
}

export interface ListedCounter__Output {
  'name': (string);
  /**
   * "total", "distinct" or "membership".
   */
  'kind': (string);
  'shards': (number);
  /**
   * The time to live in force (its own or the router default); 0: never expires.
   */
  'ttlMs': (string);
}
