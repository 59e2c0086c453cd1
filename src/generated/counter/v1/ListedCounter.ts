// Original file: proto/counter.proto


export interface ListedCounter {
  'name'?: (string);
  /**
   * "total", "distinct" or "membership".
   */
  'kind'?: (string);
  'shards'?: (number);
}

export interface ListedCounter__Output {
  'name': (string);
  /**
   * "total", "distinct" or "membership".
   */
  'kind': (string);
  'shards': (number);
}
