// Original file: proto/counter.proto


export interface RebuildRequest {
  'counter'?: (string);
  'repair'?: (boolean);
}

export interface RebuildRequest__Output {
  'counter': (string);
  'repair': (boolean);
}
