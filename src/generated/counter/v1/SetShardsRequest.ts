// Original file: proto/counter.proto


export interface SetShardsRequest {
  'counter'?: (string);
  'shards'?: (number);
}

export interface SetShardsRequest__Output {
  'counter': (string);
  'shards': (number);
}
