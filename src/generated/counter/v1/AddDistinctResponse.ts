// Original file: proto/counter.proto


export interface AddDistinctResponse {
  /**
   * Sketch registers this call raised: 0 means every member was (very likely) seen before.
   */
  'registersChanged'?: (number);
}

export interface AddDistinctResponse__Output {
  /**
   * Sketch registers this call raised: 0 means every member was (very likely) seen before.
   */
  'registersChanged': (number);
}
