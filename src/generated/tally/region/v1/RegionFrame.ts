// Original file: proto/region.proto

import type { RegionHello as _tally_region_v1_RegionHello, RegionHello__Output as _tally_region_v1_RegionHello__Output } from '../../../tally/region/v1/RegionHello.ts';
import type { ComponentBatch as _tally_region_v1_ComponentBatch, ComponentBatch__Output as _tally_region_v1_ComponentBatch__Output } from '../../../tally/region/v1/ComponentBatch.ts';

export interface RegionFrame {
  'hello'?: (_tally_region_v1_RegionHello | null);
  'batch'?: (_tally_region_v1_ComponentBatch | null);
  'body'?: "hello"|"batch";
}

export interface RegionFrame__Output {
  'hello'?: (_tally_region_v1_RegionHello__Output | null);
  'batch'?: (_tally_region_v1_ComponentBatch__Output | null);
  'body'?: "hello"|"batch";
}
