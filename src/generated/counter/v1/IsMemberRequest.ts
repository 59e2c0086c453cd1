// Original file: proto/counter.proto

import type { Long } from '@grpc/proto-loader';

export interface IsMemberRequest {
  'counter'?: (string);
  /**
   * 1..10,000 members.
   */
  'members'?: (number | string | Long)[];
}

export interface IsMemberRequest__Output {
  'counter': (string);
  /**
   * 1..10,000 members.
   */
  'members': (string)[];
}
