// Original file: proto/counter.proto

import type { PairReconcile as _counter_v1_PairReconcile, PairReconcile__Output as _counter_v1_PairReconcile__Output } from '../../counter/v1/PairReconcile.ts';
import type { ShardDrift as _counter_v1_ShardDrift, ShardDrift__Output as _counter_v1_ShardDrift__Output } from '../../counter/v1/ShardDrift.ts';
import type { Long } from '@grpc/proto-loader';

export interface ReconcileResponse {
  'pairs'?: (_counter_v1_PairReconcile)[];
  /**
   * Only shards with drift, plus every shard when a counter was named.
   */
  'shards'?: (_counter_v1_ShardDrift)[];
  'shardsChecked'?: (number | string | Long);
  'shardsDrifting'?: (number | string | Long);
}

export interface ReconcileResponse__Output {
  'pairs': (_counter_v1_PairReconcile__Output)[];
  /**
   * Only shards with drift, plus every shard when a counter was named.
   */
  'shards': (_counter_v1_ShardDrift__Output)[];
  'shardsChecked': (string);
  'shardsDrifting': (string);
}
