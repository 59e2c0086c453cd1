// Original file: proto/counter.proto

import type { IncrementRequest as _counter_v1_IncrementRequest, IncrementRequest__Output as _counter_v1_IncrementRequest__Output } from '../../counter/v1/IncrementRequest.ts';
import type { Long } from '@grpc/proto-loader';

/**
 * One batch of an IncrementStream. Field 1 is IncrementBatchRequest's, so
 * the bytes of an IncrementBatchRequest are a batch with sequence number 0.
 */
export interface IncrementStreamRequest {
  /**
   * As IncrementBatchRequest.items: validated, keyed and bounded alike.
   */
  'items'?: (_counter_v1_IncrementRequest)[];
  /**
   * Chosen by the client and echoed in the answer; distinct among the
   * stream's batches in flight (a counter from 1 is the simplest choice).
   */
  'sequence'?: (number | string | Long);
}

/**
 * One batch of an IncrementStream. Field 1 is IncrementBatchRequest's, so
 * the bytes of an IncrementBatchRequest are a batch with sequence number 0.
 */
export interface IncrementStreamRequest__Output {
  /**
   * As IncrementBatchRequest.items: validated, keyed and bounded alike.
   */
  'items': (_counter_v1_IncrementRequest__Output)[];
  /**
   * Chosen by the client and echoed in the answer; distinct among the
   * stream's batches in flight (a counter from 1 is the simplest choice).
   */
  'sequence': (string);
}
