// Original file: proto/counter.proto

export const Consistency = {
  /**
   * Sum of every shard now. The default.
   */
  EXACT: 'EXACT',
  /**
   * Served from a total the router refreshes every refresh interval.
   */
  CACHED: 'CACHED',
} as const;

export type Consistency =
  /**
   * Sum of every shard now. The default.
   */
  | 'EXACT'
  | 0
  /**
   * Served from a total the router refreshes every refresh interval.
   */
  | 'CACHED'
  | 1

export type Consistency__Output = typeof Consistency[keyof typeof Consistency]
