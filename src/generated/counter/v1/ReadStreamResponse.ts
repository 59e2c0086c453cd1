// Original file: proto/counter.proto

import type { ReadResponse as _counter_v1_ReadResponse, ReadResponse__Output as _counter_v1_ReadResponse__Output } from '../../counter/v1/ReadResponse.ts';
import type { IncrementStreamError as _counter_v1_IncrementStreamError, IncrementStreamError__Output as _counter_v1_IncrementStreamError__Output } from '../../counter/v1/IncrementStreamError.ts';
import type { Long } from '@grpc/proto-loader';

/**
 * The answer to one page of a ReadStream: values or error.
 */
export interface ReadStreamResponse {
  /**
   * One per counter, in the page's order, when the page succeeded (as
   * ReadManyResponse.values); empty when error is set.
   */
  'values'?: (_counter_v1_ReadResponse)[];
  /**
   * Set when the page failed, as a unary ReadMany would have (a read
   * changes nothing, so its reason is NOT_APPLIED).
   */
  'error'?: (_counter_v1_IncrementStreamError | null);
  /**
   * The sequence number of the page answered.
   */
  'sequence'?: (number | string | Long);
}

/**
 * The answer to one page of a ReadStream: values or error.
 */
export interface ReadStreamResponse__Output {
  /**
   * One per counter, in the page's order, when the page succeeded (as
   * ReadManyResponse.values); empty when error is set.
   */
  'values': (_counter_v1_ReadResponse__Output)[];
  /**
   * Set when the page failed, as a unary ReadMany would have (a read
   * changes nothing, so its reason is NOT_APPLIED).
   */
  'error': (_counter_v1_IncrementStreamError__Output | null);
  /**
   * The sequence number of the page answered.
   */
  'sequence': (string);
}
