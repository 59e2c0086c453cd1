// Original file: proto/counter.proto

import type { Scope as _counter_v1_Scope, Scope__Output as _counter_v1_Scope__Output } from '../../counter/v1/Scope.ts';

export interface CountDistinctRequest {
  /**
   * 1..100 distinct counters; a counter never written counts as empty.
   */
  'counters'?: (string)[];
  /**
   * SCOPE_GLOBAL: the union of this region's sketches and every peer
   * region's last received ones (docs/regions.md). Never exact anyway.
   */
  'scope'?: (_counter_v1_Scope);
}

export interface CountDistinctRequest__Output {
  /**
   * 1..100 distinct counters; a counter never written counts as empty.
   */
  'counters': (string)[];
  /**
   * SCOPE_GLOBAL: the union of this region's sketches and every peer
   * region's last received ones (docs/regions.md). Never exact anyway.
   */
  'scope': (_counter_v1_Scope__Output);
}
