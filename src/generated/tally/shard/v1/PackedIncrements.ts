// Original file: proto/shard.proto

import type { Long } from '@grpc/proto-loader';

/**
 * Plain increments (no idempotency key, not a fence) of one group that share
 * a window setting, packed into one bytes field so neither side builds a
 * message (or decodes an int64 string) per increment. `records` holds 16
 * bytes per increment, little-endian:
 * bytes 0..7   shard_id, uint64 (1 .. 2^53 - 1)
 * bytes 8..15  amount, int64 (non-zero)
 * The router sums the plain increments a group carries to one shard into
 * one record (they commute; a second record only when a sum would leave
 * int64). A node must not rely on either: it takes any records.
 */
export interface PackedIncrements {
  /**
   * The counter's window setting, as in ApplyItem (0, 0: none).
   */
  'windowBucketMs'?: (number | string | Long);
  'windowRetentionMs'?: (number | string | Long);
  'records'?: (Buffer | Uint8Array | string);
  /**
   * How many of the caller's increments these records sum (for metrics only).
   */
  'incrementCount'?: (number);
  /**
   * The counter's generation, as in ApplyItem: one per run, never per record.
   */
  'generation'?: (number | string | Long);
}

/**
 * Plain increments (no idempotency key, not a fence) of one group that share
 * a window setting, packed into one bytes field so neither side builds a
 * message (or decodes an int64 string) per increment. `records` holds 16
 * bytes per increment, little-endian:
 * bytes 0..7   shard_id, uint64 (1 .. 2^53 - 1)
 * bytes 8..15  amount, int64 (non-zero)
 * The router sums the plain increments a group carries to one shard into
 * one record (they commute; a second record only when a sum would leave
 * int64). A node must not rely on either: it takes any records.
 */
export interface PackedIncrements__Output {
  /**
   * The counter's window setting, as in ApplyItem (0, 0: none).
   */
  'windowBucketMs': (string);
  'windowRetentionMs': (string);
  'records': (Buffer);
  /**
   * How many of the caller's increments these records sum (for metrics only).
   */
  'incrementCount': (number);
  /**
   * The counter's generation, as in ApplyItem: one per run, never per record.
   */
  'generation': (string);
}
