// Original file: proto/counter.proto

import type { IncrementResponse as _counter_v1_IncrementResponse, IncrementResponse__Output as _counter_v1_IncrementResponse__Output } from '../../counter/v1/IncrementResponse.ts';

export interface IncrementBatchResponse {
  'results'?: (_counter_v1_IncrementResponse)[];
}

export interface IncrementBatchResponse__Output {
  'results': (_counter_v1_IncrementResponse__Output)[];
}
