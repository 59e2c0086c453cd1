// Original file: proto/shard.proto

import type { Long } from '@grpc/proto-loader';

export interface ChangedShardsResponse {
  /**
   * This node's feed, as the next request names it: a new one after every
   * restart or memory rebuild.
   */
  'feedId'?: (string);
  /**
   * The position the answer covers: every shard changed up to it is in this
   * answer or an earlier one of the same feed (for a full answer, once its
   * last page is in).
   */
  'seq'?: (number | string | Long);
  /**
   * The answer lists every shard the node holds (in pages by shard id), not only changed ones.
   */
  'full'?: (boolean);
  /**
   * The answer stopped at shards_max: call again from seq (or, full, after the last shard id).
   */
  'more'?: (boolean);
  /**
   * Columns, little-endian, one entry per shard: ids (float64, integers),
   * totals (int64), generations (uint32: clears the shard has seen).
   */
  'shardIds'?: (Buffer | Uint8Array | string);
  'totals'?: (Buffer | Uint8Array | string);
  'generations'?: (Buffer | Uint8Array | string);
  'lsn'?: (number | string | Long);
  'role'?: (string);
  'epoch'?: (number | string | Long);
  'nodeId'?: (string);
  /**
   * A full answer: the page holds shards with ids above this one (0: the first page).
   */
  'fullAfterShardId'?: (number | string | Long);
}

export interface ChangedShardsResponse__Output {
  /**
   * This node's feed, as the next request names it: a new one after every
   * restart or memory rebuild.
   */
  'feedId': (string);
  /**
   * The position the answer covers: every shard changed up to it is in this
   * answer or an earlier one of the same feed (for a full answer, once its
   * last page is in).
   */
  'seq': (string);
  /**
   * The answer lists every shard the node holds (in pages by shard id), not only changed ones.
   */
  'full': (boolean);
  /**
   * The answer stopped at shards_max: call again from seq (or, full, after the last shard id).
   */
  'more': (boolean);
  /**
   * Columns, little-endian, one entry per shard: ids (float64, integers),
   * totals (int64), generations (uint32: clears the shard has seen).
   */
  'shardIds': (Buffer);
  'totals': (Buffer);
  'generations': (Buffer);
  'lsn': (string);
  'role': (string);
  'epoch': (string);
  'nodeId': (string);
  /**
   * A full answer: the page holds shards with ids above this one (0: the first page).
   */
  'fullAfterShardId': (string);
}
