// Original file: proto/counter.proto

import type { Long } from '@grpc/proto-loader';

export interface IncrementRequest {
  'counter'?: (string);
  'amount'?: (number | string | Long);
  /**
   * 0-128 bytes; empty means no key.
   */
  'idempotencyKey'?: (Buffer | Uint8Array | string);
  /**
   * true: the response carries the counter's total after this increment
   * (IncrementResponse.total), read as an EXACT read would be.
   */
  'returnTotal'?: (boolean);
}

export interface IncrementRequest__Output {
  'counter': (string);
  'amount': (string);
  /**
   * 0-128 bytes; empty means no key.
   */
  'idempotencyKey': (Buffer);
  /**
   * true: the response carries the counter's total after this increment
   * (IncrementResponse.total), read as an EXACT read would be.
   */
  'returnTotal': (boolean);
}
