// Original file: proto/counter.proto


/**
 * How one batch failed: what a unary IncrementBatch would have ended with.
 */
export interface IncrementStreamError {
  /**
   * The gRPC status code (google.rpc.Code), never 0.
   */
  'code'?: (number);
  'message'?: (string);
  /**
   * The google.rpc.ErrorInfo reason (domain tally.counter.v1): NOT_APPLIED
   * (nothing of the batch was applied: it may be sent again, even unkeyed)
   * or OUTCOME_UNKNOWN (some items may have been applied: send them again
   * only with the same idempotency keys).
   */
  'reason'?: (string);
  /**
   * The serialized google.rpc.Status a unary call carries in its
   * grpc-status-details-bin trailer: ErrorInfo, and RetryInfo when waiting
   * helps.
   */
  'statusDetails'?: (Buffer | Uint8Array | string);
}

/**
 * How one batch failed: what a unary IncrementBatch would have ended with.
 */
export interface IncrementStreamError__Output {
  /**
   * The gRPC status code (google.rpc.Code), never 0.
   */
  'code': (number);
  'message': (string);
  /**
   * The google.rpc.ErrorInfo reason (domain tally.counter.v1): NOT_APPLIED
   * (nothing of the batch was applied: it may be sent again, even unkeyed)
   * or OUTCOME_UNKNOWN (some items may have been applied: send them again
   * only with the same idempotency keys).
   */
  'reason': (string);
  /**
   * The serialized google.rpc.Status a unary call carries in its
   * grpc-status-details-bin trailer: ErrorInfo, and RetryInfo when waiting
   * helps.
   */
  'statusDetails': (Buffer);
}
