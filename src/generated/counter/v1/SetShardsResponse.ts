// Original file: proto/counter.proto


export interface SetShardsResponse {
  'counter'?: (string);
  'previousShards'?: (number);
  'shards'?: (number);
}

export interface SetShardsResponse__Output {
  'counter': (string);
  'previousShards': (number);
  'shards': (number);
}
