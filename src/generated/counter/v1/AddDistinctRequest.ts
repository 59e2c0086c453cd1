// Original file: proto/counter.proto


export interface AddDistinctRequest {
  'counter'?: (string);
  /**
   * 1..10,000 members, each 1..1024 bytes (strings are their UTF-8 bytes).
   */
  'members'?: (Buffer | Uint8Array | string)[];
}

export interface AddDistinctRequest__Output {
  'counter': (string);
  /**
   * 1..10,000 members, each 1..1024 bytes (strings are their UTF-8 bytes).
   */
  'members': (Buffer)[];
}
