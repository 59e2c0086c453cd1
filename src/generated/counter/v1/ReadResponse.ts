// Original file: proto/counter.proto

import type { RegionPart as _counter_v1_RegionPart, RegionPart__Output as _counter_v1_RegionPart__Output } from '../../counter/v1/RegionPart.ts';
import type { Long } from '@grpc/proto-loader';

export interface ReadResponse {
  'counter'?: (string);
  'total'?: (number | string | Long);
  /**
   * True when total is the sum of every shard taken during this call.
   */
  'exact'?: (boolean);
  /**
   * Every increment acknowledged before this instant is included in total.
   */
  'asOfUnixMs'?: (number | string | Long);
  'stalenessMs'?: (number | string | Long);
  'shards'?: (number);
  /**
   * SCOPE_GLOBAL only: the home region first, then each peer by name.
   */
  'regions'?: (_counter_v1_RegionPart)[];
}

export interface ReadResponse__Output {
  'counter': (string);
  'total': (string);
  /**
   * True when total is the sum of every shard taken during this call.
   */
  'exact': (boolean);
  /**
   * Every increment acknowledged before this instant is included in total.
   */
  'asOfUnixMs': (string);
  'stalenessMs': (string);
  'shards': (number);
  /**
   * SCOPE_GLOBAL only: the home region first, then each peer by name.
   */
  'regions': (_counter_v1_RegionPart__Output)[];
}
