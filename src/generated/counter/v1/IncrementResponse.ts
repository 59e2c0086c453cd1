// Original file: proto/counter.proto


export interface IncrementResponse {
  'applied'?: (boolean);
  /**
   * Index of the shard (within the counter) that holds the increment.
   */
  'shard'?: (number);
}

export interface IncrementResponse__Output {
  'applied': (boolean);
  /**
   * Index of the shard (within the counter) that holds the increment.
   */
  'shard': (number);
}
