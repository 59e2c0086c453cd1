// Original file: proto/counter.proto

import type { Long } from '@grpc/proto-loader';

/**
 * A counter's time to live, as Configure sets it. Setting one restarts the
 * counter's idle clock, as a write does.
 */
export interface TtlSetting {
  /**
   * 1,000 ms..10 years: the counter is deleted once no write has reached it
   * for this long. 0 (with never unset): the counter's own TTL is removed;
   * the router default (--counter-ttl-ms) applies again, if there is one.
   */
  'ttlMs'?: (number | string | Long);
  /**
   * The counter never expires, even under a router default; ttl_ms must be 0.
   */
  'never'?: (boolean);
}

/**
 * A counter's time to live, as Configure sets it. Setting one restarts the
 * counter's idle clock, as a write does.
 */
export interface TtlSetting__Output {
  /**
   * 1,000 ms..10 years: the counter is deleted once no write has reached it
   * for this long. 0 (with never unset): the counter's own TTL is removed;
   * the router default (--counter-ttl-ms) applies again, if there is one.
   */
  'ttlMs': (string);
  /**
   * The counter never expires, even under a router default; ttl_ms must be 0.
   */
  'never': (boolean);
}
