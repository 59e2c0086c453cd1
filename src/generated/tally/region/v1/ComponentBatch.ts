// Original file: proto/region.proto

import type { Component as _tally_region_v1_Component, Component__Output as _tally_region_v1_Component__Output } from '../../../tally/region/v1/Component.ts';
import type { ComponentVersion as _tally_region_v1_ComponentVersion, ComponentVersion__Output as _tally_region_v1_ComponentVersion__Output } from '../../../tally/region/v1/ComponentVersion.ts';
import type { Long } from '@grpc/proto-loader';

export interface ComponentBatch {
  /**
   * Numbers the batches of one stream from 1, echoed by the answer.
   */
  'seq'?: (number | string | Long);
  'components'?: (_tally_region_v1_Component)[];
  /**
   * The newest version among the components (and every earlier batch).
   */
  'version'?: (_tally_region_v1_ComponentVersion | null);
}

export interface ComponentBatch__Output {
  /**
   * Numbers the batches of one stream from 1, echoed by the answer.
   */
  'seq': (string);
  'components': (_tally_region_v1_Component__Output)[];
  /**
   * The newest version among the components (and every earlier batch).
   */
  'version': (_tally_region_v1_ComponentVersion__Output | null);
}
