// Original file: proto/counter.proto

import type { ShardPlacement as _counter_v1_ShardPlacement, ShardPlacement__Output as _counter_v1_ShardPlacement__Output } from '../../counter/v1/ShardPlacement.ts';
import type { CounterConfig as _counter_v1_CounterConfig, CounterConfig__Output as _counter_v1_CounterConfig__Output } from '../../counter/v1/CounterConfig.ts';

export interface DescribeResponse {
  'counter'?: (string);
  'shards'?: (number);
  'placements'?: (_counter_v1_ShardPlacement)[];
  /**
   * Increments per second, smoothed.
   */
  'heatPerSec'?: (number | string);
  'config'?: (_counter_v1_CounterConfig | null);
  /**
   * The recent peak of heat_per_sec, which automatic sizing follows.
   */
  'peakPerSec'?: (number | string);
  /**
   * Increments/s per shard over the last sample window (index = shard).
   */
  'shardRates'?: (number | string)[];
  /**
   * max shard rate / mean shard rate; 1 is even.
   */
  'skew'?: (number | string);
}

export interface DescribeResponse__Output {
  'counter': (string);
  'shards': (number);
  'placements': (_counter_v1_ShardPlacement__Output)[];
  /**
   * Increments per second, smoothed.
   */
  'heatPerSec': (number);
  'config': (_counter_v1_CounterConfig__Output | null);
  /**
   * The recent peak of heat_per_sec, which automatic sizing follows.
   */
  'peakPerSec': (number);
  /**
   * Increments/s per shard over the last sample window (index = shard).
   */
  'shardRates': (number)[];
  /**
   * max shard rate / mean shard rate; 1 is even.
   */
  'skew': (number);
}
