// Original file: proto/counter.proto


export interface DescribeRequest {
  'counter'?: (string);
}

export interface DescribeRequest__Output {
  'counter': (string);
}
