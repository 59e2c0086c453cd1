// Original file: proto/counter.proto

import type { Long } from '@grpc/proto-loader';

export interface SetMemberResponse {
  /**
   * True when this call flipped the member's state.
   */
  'changed'?: (boolean);
  /**
   * The counter's exact count after the call.
   */
  'count'?: (number | string | Long);
  /**
   * True when the flip is done but the count could not be read (a pair of
   * the counter has no readable copy): count is then 0, not the count.
   */
  'countUnavailable'?: (boolean);
}

export interface SetMemberResponse__Output {
  /**
   * True when this call flipped the member's state.
   */
  'changed': (boolean);
  /**
   * The counter's exact count after the call.
   */
  'count': (string);
  /**
   * True when the flip is done but the count could not be read (a pair of
   * the counter has no readable copy): count is then 0, not the count.
   */
  'countUnavailable': (boolean);
}
