// Original file: proto/region.proto

import type { ComponentVersion as _tally_region_v1_ComponentVersion, ComponentVersion__Output as _tally_region_v1_ComponentVersion__Output } from '../../../tally/region/v1/ComponentVersion.ts';
import type { Long } from '@grpc/proto-loader';

export interface RegionAnswer {
  /**
   * 0 for the answer to the hello.
   */
  'seq'?: (number | string | Long);
  /**
   * Every component up to this version is durable here: after a reconnect
   * the sender resends only what is newer.
   */
  'durable'?: (_tally_region_v1_ComponentVersion | null);
  /**
   * The receiving region's name.
   */
  'region'?: (string);
  /**
   * Components refused (unknown kind of counter, name invalid, taken before
   * a delete this region applied): skipped, counted.
   */
  'refused'?: (number);
  /**
   * Set in the hello's answer by a receiver that reads `packed_components`;
   * a sender sends the repeated `components` to a receiver that does not.
   */
  'readsPackedComponents'?: (boolean);
}

export interface RegionAnswer__Output {
  /**
   * 0 for the answer to the hello.
   */
  'seq': (string);
  /**
   * Every component up to this version is durable here: after a reconnect
   * the sender resends only what is newer.
   */
  'durable': (_tally_region_v1_ComponentVersion__Output | null);
  /**
   * The receiving region's name.
   */
  'region': (string);
  /**
   * Components refused (unknown kind of counter, name invalid, taken before
   * a delete this region applied): skipped, counted.
   */
  'refused': (number);
  /**
   * Set in the hello's answer by a receiver that reads `packed_components`;
   * a sender sends the repeated `components` to a receiver that does not.
   */
  'readsPackedComponents': (boolean);
}
