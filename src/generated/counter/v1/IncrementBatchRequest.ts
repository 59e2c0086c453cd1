// Original file: proto/counter.proto

import type { IncrementRequest as _counter_v1_IncrementRequest, IncrementRequest__Output as _counter_v1_IncrementRequest__Output } from '../../counter/v1/IncrementRequest.ts';

export interface IncrementBatchRequest {
  'items'?: (_counter_v1_IncrementRequest)[];
}

export interface IncrementBatchRequest__Output {
  'items': (_counter_v1_IncrementRequest__Output)[];
}
