// Original file: proto/counter.proto


export interface ListCountersRequest {
  /**
   * Empty: every counter. Otherwise 1..200 bytes of UTF-8, no control
   * characters (the rules of a counter name).
   */
  'prefix'?: (string);
  /**
   * Empty: the first page. Otherwise a next_page_token of an earlier answer
   * for the same prefix; opaque (its form may change between versions).
   */
  'pageToken'?: (string);
  /**
   * Counters per page: 0 means 100; at most 1,000.
   */
  'pageSize'?: (number);
}

export interface ListCountersRequest__Output {
  /**
   * Empty: every counter. Otherwise 1..200 bytes of UTF-8, no control
   * characters (the rules of a counter name).
   */
  'prefix': (string);
  /**
   * Empty: the first page. Otherwise a next_page_token of an earlier answer
   * for the same prefix; opaque (its form may change between versions).
   */
  'pageToken': (string);
  /**
   * Counters per page: 0 means 100; at most 1,000.
   */
  'pageSize': (number);
}
