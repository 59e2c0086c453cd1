// Original file: proto/counter.proto

import type { Long } from '@grpc/proto-loader';

export interface ClearResponse {
  'counter'?: (string);
  /**
   * The counter's generation from this clear on (it counts its clears).
   */
  'generation'?: (number | string | Long);
  /**
   * False for a retry of a keyed clear that had already happened: nothing
   * more was cleared, and generation is that clear's.
   */
  'applied'?: (boolean);
  'shards'?: (number);
  /**
   * Shards whose node has not yet confirmed clearing (its pair has no
   * reachable primary): they read 0 all the same, and the router keeps
   * sending the clear until the node confirms it.
   */
  'shardsPending'?: (number);
}

export interface ClearResponse__Output {
  'counter': (string);
  /**
   * The counter's generation from this clear on (it counts its clears).
   */
  'generation': (string);
  /**
   * False for a retry of a keyed clear that had already happened: nothing
   * more was cleared, and generation is that clear's.
   */
  'applied': (boolean);
  'shards': (number);
  /**
   * Shards whose node has not yet confirmed clearing (its pair has no
   * reachable primary): they read 0 all the same, and the router keeps
   * sending the clear until the node confirms it.
   */
  'shardsPending': (number);
}
