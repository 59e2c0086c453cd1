// Original file: proto/counter.proto

import type { Long } from '@grpc/proto-loader';

/**
 * One region's part of a SCOPE_GLOBAL read.
 */
export interface RegionPart {
  'region'?: (string);
  /**
   * That region's own total (its increments only).
   */
  'total'?: (number | string | Long);
  /**
   * The instant the region's total was taken, on that region's clock.
   */
  'asOfUnixMs'?: (number | string | Long);
  /**
   * Now minus as_of_unix_ms on this router's clock (0 when negative).
   */
  'stalenessMs'?: (number | string | Long);
  /**
   * True for the region that served the read.
   */
  'home'?: (boolean);
}

/**
 * One region's part of a SCOPE_GLOBAL read.
 */
export interface RegionPart__Output {
  'region': (string);
  /**
   * That region's own total (its increments only).
   */
  'total': (string);
  /**
   * The instant the region's total was taken, on that region's clock.
   */
  'asOfUnixMs': (string);
  /**
   * Now minus as_of_unix_ms on this router's clock (0 when negative).
   */
  'stalenessMs': (string);
  /**
   * True for the region that served the read.
   */
  'home': (boolean);
}
