// Original file: proto/counter.proto

import type { AutoscaleMode as _counter_v1_AutoscaleMode, AutoscaleMode__Output as _counter_v1_AutoscaleMode__Output } from '../../counter/v1/AutoscaleMode.ts';
import type { WindowSettings as _counter_v1_WindowSettings, WindowSettings__Output as _counter_v1_WindowSettings__Output } from '../../counter/v1/WindowSettings.ts';
import type { TtlSetting as _counter_v1_TtlSetting, TtlSetting__Output as _counter_v1_TtlSetting__Output } from '../../counter/v1/TtlSetting.ts';

export interface ConfigureRequest {
  'counter'?: (string);
  'autoscale'?: (_counter_v1_AutoscaleMode);
  /**
   * Set: the counter's window (a total counter, created if absent).
   */
  'window'?: (_counter_v1_WindowSettings | null);
  /**
   * Non-zero: create a membership counter with this many partitions (fixed
   * for life); on an existing membership counter it must match.
   */
  'membershipPartitions'?: (number);
  /**
   * Set: the counter's time to live (see TtlSetting); absent: unchanged.
   */
  'ttl'?: (_counter_v1_TtlSetting | null);
}

export interface ConfigureRequest__Output {
  'counter': (string);
  'autoscale': (_counter_v1_AutoscaleMode__Output);
  /**
   * Set: the counter's window (a total counter, created if absent).
   */
  'window': (_counter_v1_WindowSettings__Output | null);
  /**
   * Non-zero: create a membership counter with this many partitions (fixed
   * for life); on an existing membership counter it must match.
   */
  'membershipPartitions': (number);
  /**
   * Set: the counter's time to live (see TtlSetting); absent: unchanged.
   */
  'ttl': (_counter_v1_TtlSetting__Output | null);
}
