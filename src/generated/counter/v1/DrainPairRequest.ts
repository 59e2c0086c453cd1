// Original file: proto/counter.proto


export interface DrainPairRequest {
  'pair'?: (number);
  /**
   * Resume placing shards on the pair.
   */
  'undrain'?: (boolean);
}

export interface DrainPairRequest__Output {
  'pair': (number);
  /**
   * Resume placing shards on the pair.
   */
  'undrain': (boolean);
}
