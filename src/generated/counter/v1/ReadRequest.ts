// Original file: proto/counter.proto

import type { Consistency as _counter_v1_Consistency, Consistency__Output as _counter_v1_Consistency__Output } from '../../counter/v1/Consistency.ts';

export interface ReadRequest {
  'counter'?: (string);
  'consistency'?: (_counter_v1_Consistency);
}

export interface ReadRequest__Output {
  'counter': (string);
  'consistency': (_counter_v1_Consistency__Output);
}
