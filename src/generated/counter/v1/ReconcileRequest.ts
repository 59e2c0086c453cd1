// Original file: proto/counter.proto


export interface ReconcileRequest {
  /**
   * Empty: every shard of every pair.
   */
  'counter'?: (string);
}

export interface ReconcileRequest__Output {
  /**
   * Empty: every shard of every pair.
   */
  'counter': (string);
}
