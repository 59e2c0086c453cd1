// Original file: proto/counter.proto


export interface DeleteCounterResponse {
  'counter'?: (string);
  /**
   * Shards the counter had; their ids are never used again.
   */
  'shards'?: (number);
  /**
   * Shards whose node has not yet confirmed dropping them (its pair has no
   * reachable primary): the router keeps sending the drop until it does. The
   * counter is gone from the directory either way.
   */
  'shardsPending'?: (number);
}

export interface DeleteCounterResponse__Output {
  'counter': (string);
  /**
   * Shards the counter had; their ids are never used again.
   */
  'shards': (number);
  /**
   * Shards whose node has not yet confirmed dropping them (its pair has no
   * reachable primary): the router keeps sending the drop until it does. The
   * counter is gone from the directory either way.
   */
  'shardsPending': (number);
}
