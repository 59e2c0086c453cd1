// Original file: proto/shard.proto

export const ApplyOp = {
  /**
   * amount added to the shard (or, with fence, the key recorded).
   */
  INCREMENT: 'INCREMENT',
  /**
   * member made present or absent; logged only when that flips it.
   */
  MEMBER_SET: 'MEMBER_SET',
  /**
   * sketch registers raised to at least the given ranks.
   */
  DISTINCT: 'DISTINCT',
  /**
   * the shard total set to its member set's size (an operator's repair).
   */
  MEMBER_REPAIR: 'MEMBER_REPAIR',
  /**
   * the shard's counter was deleted: its state is freed and a tombstone kept,
   * so a later item for the shard fails its group (NOT_FOUND). applied=false
   * when it was already dropped.
   */
  DROP: 'DROP',
  /**
   * the shard emptied of every kind of state and moved to generation (its
   * counter was cleared); applied=false when it already was there or past it.
   */
  CLEAR: 'CLEAR',
  /**
   * a peer region's component of the shard's counter (payload: the
   * region-component record of src/wire/internal/region-component.ts) kept as a
   * max-register per origin region; logged only when its version is newer
   * than the one held, applied=false otherwise.
   */
  REGION_COMPONENT: 'REGION_COMPONENT',
  /**
   * peer regions' components of many shards' counters at once (payload: a
   * packed component entry of src/wire/internal/packed-components.ts; shard_id
   * is its first row's), each row kept as REGION_COMPONENT keeps one; logged
   * as one entry holding the rows whose version is newer than the one held.
   * applied=true when any row was; changed: how many rows were. A group with
   * a row for a dropped shard fails whole (NOT_FOUND).
   */
  REGION_COMPONENTS: 'REGION_COMPONENTS',
} as const;

export type ApplyOp =
  /**
   * amount added to the shard (or, with fence, the key recorded).
   */
  | 'INCREMENT'
  | 0
  /**
   * member made present or absent; logged only when that flips it.
   */
  | 'MEMBER_SET'
  | 1
  /**
   * sketch registers raised to at least the given ranks.
   */
  | 'DISTINCT'
  | 2
  /**
   * the shard total set to its member set's size (an operator's repair).
   */
  | 'MEMBER_REPAIR'
  | 3
  /**
   * the shard's counter was deleted: its state is freed and a tombstone kept,
   * so a later item for the shard fails its group (NOT_FOUND). applied=false
   * when it was already dropped.
   */
  | 'DROP'
  | 4
  /**
   * the shard emptied of every kind of state and moved to generation (its
   * counter was cleared); applied=false when it already was there or past it.
   */
  | 'CLEAR'
  | 5
  /**
   * a peer region's component of the shard's counter (payload: the
   * region-component record of src/wire/internal/region-component.ts) kept as a
   * max-register per origin region; logged only when its version is newer
   * than the one held, applied=false otherwise.
   */
  | 'REGION_COMPONENT'
  | 6
  /**
   * peer regions' components of many shards' counters at once (payload: a
   * packed component entry of src/wire/internal/packed-components.ts; shard_id
   * is its first row's), each row kept as REGION_COMPONENT keeps one; logged
   * as one entry holding the rows whose version is newer than the one held.
   * applied=true when any row was; changed: how many rows were. A group with
   * a row for a dropped shard fails whole (NOT_FOUND).
   */
  | 'REGION_COMPONENTS'
  | 7

export type ApplyOp__Output = typeof ApplyOp[keyof typeof ApplyOp]
