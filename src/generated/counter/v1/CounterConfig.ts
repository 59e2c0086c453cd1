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
  /**
   * The time to live in force: the counter is deleted once no write has
   * reached it for this long. 0: it never expires.
   */
  'ttlMs'?: (number | string | Long);
  /**
   * Where ttl_ms comes from: "counter" (its own), "default" (the router's
   * --counter-ttl-ms), "never" (exempted from the default) or "none".
   */
  'ttlFrom'?: (string);
  /**
   * Since the last write the router saw (or its start, if later): the
   * counter expires when this reaches ttl_ms.
   */
  'idleMs'?: (number | string | Long);
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
  /**
   * The time to live in force: the counter is deleted once no write has
   * reached it for this long. 0: it never expires.
   */
  'ttlMs': (string);
  /**
   * Where ttl_ms comes from: "counter" (its own), "default" (the router's
   * --counter-ttl-ms), "never" (exempted from the default) or "none".
   */
  'ttlFrom': (string);
  /**
   * Since the last write the router saw (or its start, if later): the
   * counter expires when this reaches ttl_ms.
   */
  'idleMs': (string);
}
