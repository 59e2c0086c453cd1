// Original file: proto/counter.proto

import type { Consistency as _counter_v1_Consistency, Consistency__Output as _counter_v1_Consistency__Output } from '../../counter/v1/Consistency.ts';

export interface ReadManyRequest {
  'counters'?: (string)[];
  'consistency'?: (_counter_v1_Consistency);
}

export interface ReadManyRequest__Output {
  'counters': (string)[];
  'consistency': (_counter_v1_Consistency__Output);
}
