// Original file: proto/counter.proto

import type { Long } from '@grpc/proto-loader';

export interface SetMemberRequest {
  'counter'?: (string);
  'member'?: (number | string | Long);
  /**
   * true: like; false: unlike.
   */
  'present'?: (boolean);
}

export interface SetMemberRequest__Output {
  'counter': (string);
  'member': (string);
  /**
   * true: like; false: unlike.
   */
  'present': (boolean);
}
