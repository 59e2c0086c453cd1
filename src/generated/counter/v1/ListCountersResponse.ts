// Original file: proto/counter.proto

import type { ListedCounter as _counter_v1_ListedCounter, ListedCounter__Output as _counter_v1_ListedCounter__Output } from '../../counter/v1/ListedCounter.ts';

export interface ListCountersResponse {
  'counters'?: (_counter_v1_ListedCounter)[];
  /**
   * Empty when this page is the last.
   */
  'nextPageToken'?: (string);
}

export interface ListCountersResponse__Output {
  'counters': (_counter_v1_ListedCounter__Output)[];
  /**
   * Empty when this page is the last.
   */
  'nextPageToken': (string);
}
