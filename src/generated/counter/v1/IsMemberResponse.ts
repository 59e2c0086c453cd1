// Original file: proto/counter.proto


export interface IsMemberResponse {
  'present'?: (boolean)[];
}

export interface IsMemberResponse__Output {
  'present': (boolean)[];
}
