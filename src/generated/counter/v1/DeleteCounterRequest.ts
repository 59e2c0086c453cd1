// Original file: proto/counter.proto


export interface DeleteCounterRequest {
  'counter'?: (string);
}

export interface DeleteCounterRequest__Output {
  'counter': (string);
}
