// Original file: proto/counter.proto


export interface AddPairRequest {
  /**
   * host:port of the node to be primary, and of its follower.
   */
  'primary'?: (string);
  'follower'?: (string);
}

export interface AddPairRequest__Output {
  /**
   * host:port of the node to be primary, and of its follower.
   */
  'primary': (string);
  'follower': (string);
}
