// Original file: proto/counter.proto


export interface ClearRequest {
  'counter'?: (string);
  /**
   * 0-128 bytes; empty means no key. Remembered for the dedup window.
   */
  'idempotencyKey'?: (Buffer | Uint8Array | string);
}

export interface ClearRequest__Output {
  'counter': (string);
  /**
   * 0-128 bytes; empty means no key. Remembered for the dedup window.
   */
  'idempotencyKey': (Buffer);
}
