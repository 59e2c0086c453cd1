// Original file: proto/counter.proto


export interface HotRequest {
  /**
   * How many counters, hottest first (default 20).
   */
  'limit'?: (number);
}

export interface HotRequest__Output {
  /**
   * How many counters, hottest first (default 20).
   */
  'limit': (number);
}
