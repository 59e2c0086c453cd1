// Original file: proto/counter.proto

import type { Consistency as _counter_v1_Consistency, Consistency__Output as _counter_v1_Consistency__Output } from '../../counter/v1/Consistency.ts';
import type { Long } from '@grpc/proto-loader';

export interface ReadWindowRequest {
  'counter'?: (string);
  /**
   * 1..the counter's retention.
   */
  'lastMs'?: (number | string | Long);
  'consistency'?: (_counter_v1_Consistency);
}

export interface ReadWindowRequest__Output {
  'counter': (string);
  /**
   * 1..the counter's retention.
   */
  'lastMs': (string);
  'consistency': (_counter_v1_Consistency__Output);
}
