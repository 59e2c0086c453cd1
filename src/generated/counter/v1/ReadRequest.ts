// Original file: proto/counter.proto

import type { Consistency as _counter_v1_Consistency, Consistency__Output as _counter_v1_Consistency__Output } from '../../counter/v1/Consistency.ts';
import type { Scope as _counter_v1_Scope, Scope__Output as _counter_v1_Scope__Output } from '../../counter/v1/Scope.ts';

export interface ReadRequest {
  'counter'?: (string);
  'consistency'?: (_counter_v1_Consistency);
  'scope'?: (_counter_v1_Scope);
}

export interface ReadRequest__Output {
  'counter': (string);
  'consistency': (_counter_v1_Consistency__Output);
  'scope': (_counter_v1_Scope__Output);
}
