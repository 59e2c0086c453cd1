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
   * The watermark: every component of the origin up to this version is in
   * this batch or an earlier one of the stream. A batch may carry no
   * components: it then only moves the watermark (once per round).
   */
  'version'?: (_tally_region_v1_ComponentVersion | null);
  /**
   * When the origin began the round of the watermark, on its clock; 0 when
   * the watermark is not a whole round. Every component up to the
   * watermark was the origin's total at that instant.
   */
  'asOfUnixMs'?: (number | string | Long);
  /**
   * The batch's components as columns (src/wire/internal/batch-components.ts:
   * the counter names, then one region-component record each), instead of
   * `components`; sent only to a receiver whose hello answer set
   * `reads_packed_components`. A batch uses one of the two, never both.
   */
  'packedComponents'?: (Buffer | Uint8Array | string);
}

export interface ComponentBatch__Output {
  /**
   * Numbers the batches of one stream from 1, echoed by the answer.
   */
  'seq': (string);
  'components': (_tally_region_v1_Component__Output)[];
  /**
   * The watermark: every component of the origin up to this version is in
   * this batch or an earlier one of the stream. A batch may carry no
   * components: it then only moves the watermark (once per round).
   */
  'version': (_tally_region_v1_ComponentVersion__Output | null);
  /**
   * When the origin began the round of the watermark, on its clock; 0 when
   * the watermark is not a whole round. Every component up to the
   * watermark was the origin's total at that instant.
   */
  'asOfUnixMs': (string);
  /**
   * The batch's components as columns (src/wire/internal/batch-components.ts:
   * the counter names, then one region-component record each), instead of
   * `components`; sent only to a receiver whose hello answer set
   * `reads_packed_components`. A batch uses one of the two, never both.
   */
  'packedComponents': (Buffer);
}
