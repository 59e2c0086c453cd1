// Original file: proto/region.proto

import type { ComponentVersion as _tally_region_v1_ComponentVersion, ComponentVersion__Output as _tally_region_v1_ComponentVersion__Output } from '../../../tally/region/v1/ComponentVersion.ts';
import type { Long } from '@grpc/proto-loader';

/**
 * One counter's total in its origin region (its own increments only).
 */
export interface Component {
  'counter'?: (string);
  'total'?: (number | string | Long);
  'version'?: (_tally_region_v1_ComponentVersion | null);
  /**
   * When the origin took the total, on the origin's clock.
   */
  'asOfUnixMs'?: (number | string | Long);
  /**
   * How many clears the counter has had in the origin when the total was
   * taken. A region whose own counter is at a lower generation clears it up
   * to this one (docs/regions.md: clear across regions).
   */
  'generation'?: (number | string | Long);
  /**
   * A distinct counter's HyperLogLog registers in the origin (a serialized
   * sketch, as nodes store it); empty for a total counter. Regions merge
   * them by register maximum.
   */
  'sketch'?: (Buffer | Uint8Array | string);
  /**
   * How many deletes of the counter's name the origin had applied (from any
   * region) when the total was taken. A region whose own is lower deletes
   * its counter first; a component of a lower incarnation than the
   * receiver's is refused (docs/regions.md: delete across regions).
   */
  'incarnation'?: (number | string | Long);
  /**
   * The name was deleted in the origin at this incarnation: no total, no
   * sketch; the receiver deletes its counter up to this incarnation.
   */
  'tombstone'?: (boolean);
}

/**
 * One counter's total in its origin region (its own increments only).
 */
export interface Component__Output {
  'counter': (string);
  'total': (string);
  'version': (_tally_region_v1_ComponentVersion__Output | null);
  /**
   * When the origin took the total, on the origin's clock.
   */
  'asOfUnixMs': (string);
  /**
   * How many clears the counter has had in the origin when the total was
   * taken. A region whose own counter is at a lower generation clears it up
   * to this one (docs/regions.md: clear across regions).
   */
  'generation': (string);
  /**
   * A distinct counter's HyperLogLog registers in the origin (a serialized
   * sketch, as nodes store it); empty for a total counter. Regions merge
   * them by register maximum.
   */
  'sketch': (Buffer);
  /**
   * How many deletes of the counter's name the origin had applied (from any
   * region) when the total was taken. A region whose own is lower deletes
   * its counter first; a component of a lower incarnation than the
   * receiver's is refused (docs/regions.md: delete across regions).
   */
  'incarnation': (string);
  /**
   * The name was deleted in the origin at this incarnation: no total, no
   * sketch; the receiver deletes its counter up to this incarnation.
   */
  'tombstone': (boolean);
}
