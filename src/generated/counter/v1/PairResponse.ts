// Original file: proto/counter.proto

import type { PairStatus as _counter_v1_PairStatus, PairStatus__Output as _counter_v1_PairStatus__Output } from '../../counter/v1/PairStatus.ts';

export interface PairResponse {
  'pair'?: (_counter_v1_PairStatus | null);
}

export interface PairResponse__Output {
  'pair': (_counter_v1_PairStatus__Output | null);
}
