// Original file: proto/counter.proto

import type { HotCounter as _counter_v1_HotCounter, HotCounter__Output as _counter_v1_HotCounter__Output } from '../../counter/v1/HotCounter.ts';
import type { Long } from '@grpc/proto-loader';

export interface HotResponse {
  'counters'?: (_counter_v1_HotCounter)[];
  /**
   * Counters with measurable heat, of which `counters` are the hottest.
   */
  'tracked'?: (number | string | Long);
}

export interface HotResponse__Output {
  'counters': (_counter_v1_HotCounter__Output)[];
  /**
   * Counters with measurable heat, of which `counters` are the hottest.
   */
  'tracked': (string);
}
