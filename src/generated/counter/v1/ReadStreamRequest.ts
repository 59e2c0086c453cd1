// Original file: proto/counter.proto

import type { Consistency as _counter_v1_Consistency, Consistency__Output as _counter_v1_Consistency__Output } from '../../counter/v1/Consistency.ts';
import type { Scope as _counter_v1_Scope, Scope__Output as _counter_v1_Scope__Output } from '../../counter/v1/Scope.ts';
import type { Long } from '@grpc/proto-loader';

/**
 * One page of a ReadStream. Its fields below 15 are ReadManyRequest's, so
 * the bytes of a ReadManyRequest are a page with sequence number 0.
 */
export interface ReadStreamRequest {
  /**
   * As ReadManyRequest.counters: validated and bounded alike.
   */
  'counters'?: (string)[];
  'consistency'?: (_counter_v1_Consistency);
  /**
   * As ReadManyRequest.scope.
   */
  'scope'?: (_counter_v1_Scope);
  /**
   * Chosen by the client and echoed in the answer; distinct among the
   * stream's pages in flight (a counter from 1 is the simplest choice).
   */
  'sequence'?: (number | string | Long);
}

/**
 * One page of a ReadStream. Its fields below 15 are ReadManyRequest's, so
 * the bytes of a ReadManyRequest are a page with sequence number 0.
 */
export interface ReadStreamRequest__Output {
  /**
   * As ReadManyRequest.counters: validated and bounded alike.
   */
  'counters': (string)[];
  'consistency': (_counter_v1_Consistency__Output);
  /**
   * As ReadManyRequest.scope.
   */
  'scope': (_counter_v1_Scope__Output);
  /**
   * Chosen by the client and echoed in the answer; distinct among the
   * stream's pages in flight (a counter from 1 is the simplest choice).
   */
  'sequence': (string);
}
