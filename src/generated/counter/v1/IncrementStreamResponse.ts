// Original file: proto/counter.proto

import type { IncrementResponse as _counter_v1_IncrementResponse, IncrementResponse__Output as _counter_v1_IncrementResponse__Output } from '../../counter/v1/IncrementResponse.ts';
import type { IncrementStreamError as _counter_v1_IncrementStreamError, IncrementStreamError__Output as _counter_v1_IncrementStreamError__Output } from '../../counter/v1/IncrementStreamError.ts';
import type { Long } from '@grpc/proto-loader';

/**
 * The answer to one batch of an IncrementStream: results or error.
 */
export interface IncrementStreamResponse {
  /**
   * One per item, in the batch's order, when the batch succeeded (as
   * IncrementBatchResponse.results); empty when error is set.
   */
  'results'?: (_counter_v1_IncrementResponse)[];
  /**
   * The sequence number of the batch answered.
   */
  'sequence'?: (number | string | Long);
  /**
   * Set when the batch failed: nothing of it was acknowledged.
   */
  'error'?: (_counter_v1_IncrementStreamError | null);
}

/**
 * The answer to one batch of an IncrementStream: results or error.
 */
export interface IncrementStreamResponse__Output {
  /**
   * One per item, in the batch's order, when the batch succeeded (as
   * IncrementBatchResponse.results); empty when error is set.
   */
  'results': (_counter_v1_IncrementResponse__Output)[];
  /**
   * The sequence number of the batch answered.
   */
  'sequence': (string);
  /**
   * Set when the batch failed: nothing of it was acknowledged.
   */
  'error': (_counter_v1_IncrementStreamError__Output | null);
}
