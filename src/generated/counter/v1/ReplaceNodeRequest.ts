// Original file: proto/counter.proto


export interface ReplaceNodeRequest {
  /**
   * host:port of the follower to replace, and of the node taking its place.
   */
  'address'?: (string);
  'newAddress'?: (string);
}

export interface ReplaceNodeRequest__Output {
  /**
   * host:port of the follower to replace, and of the node taking its place.
   */
  'address': (string);
  'newAddress': (string);
}
