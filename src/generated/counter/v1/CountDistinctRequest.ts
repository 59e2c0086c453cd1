// Original file: proto/counter.proto


export interface CountDistinctRequest {
  /**
   * 1..100 distinct counters; a counter never written counts as empty.
   */
  'counters'?: (string)[];
}

export interface CountDistinctRequest__Output {
  /**
   * 1..100 distinct counters; a counter never written counts as empty.
   */
  'counters': (string)[];
}
