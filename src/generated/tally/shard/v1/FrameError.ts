// Original file: proto/shard.proto


/**
 * Why a frame failed: what the unary call's status would have said.
 */
export interface FrameError {
  /**
   * A gRPC status code (never 0).
   */
  'code'?: (number);
  'message'?: (string);
  /**
   * The google.rpc.ErrorInfo reason ('NOT_APPLIED', 'OUTCOME_UNKNOWN', ...).
   */
  'reason'?: (string);
  /**
   * When a retry may succeed (0: not said).
   */
  'retryAfterMs'?: (number);
}

/**
 * Why a frame failed: what the unary call's status would have said.
 */
export interface FrameError__Output {
  /**
   * A gRPC status code (never 0).
   */
  'code': (number);
  'message': (string);
  /**
   * The google.rpc.ErrorInfo reason ('NOT_APPLIED', 'OUTCOME_UNKNOWN', ...).
   */
  'reason': (string);
  /**
   * When a retry may succeed (0: not said).
   */
  'retryAfterMs': (number);
}
