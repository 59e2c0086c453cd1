// Original file: proto/counter.proto

import type { ReadResponse as _counter_v1_ReadResponse, ReadResponse__Output as _counter_v1_ReadResponse__Output } from '../../counter/v1/ReadResponse.ts';

export interface ReadManyResponse {
  'values'?: (_counter_v1_ReadResponse)[];
}

export interface ReadManyResponse__Output {
  'values': (_counter_v1_ReadResponse__Output)[];
}
