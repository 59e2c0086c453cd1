// Original file: proto/counter.proto

import type { Long } from '@grpc/proto-loader';

export interface IncrementResponse {
  'applied'?: (boolean);
  /**
   * Index of the shard (within the counter) that holds the increment.
   */
  'shard'?: (number);
  /**
   * Set when the request asked return_total: the counter's exact total, read
   * after this increment (a duplicate too) was acknowledged, so it includes
   * it and every increment acknowledged before. Absent when that read failed
   * (the increment stands: read the counter again).
   */
  'total'?: (number | string | Long);
  /**
   * A oneof of one field: presence, as proto3 `optional` gives it, from any
   * protoc (the ones before 3.12 refuse `optional`), on the same wire and JSON.
   */
  'returnedTotal'?: "total";
}

export interface IncrementResponse__Output {
  'applied': (boolean);
  /**
   * Index of the shard (within the counter) that holds the increment.
   */
  'shard': (number);
  /**
   * Set when the request asked return_total: the counter's exact total, read
   * after this increment (a duplicate too) was acknowledged, so it includes
   * it and every increment acknowledged before. Absent when that read failed
   * (the increment stands: read the counter again).
   */
  'total'?: (string);
  /**
   * A oneof of one field: presence, as proto3 `optional` gives it, from any
   * protoc (the ones before 3.12 refuse `optional`), on the same wire and JSON.
   */
  'returnedTotal'?: "total";
}
