// Original file: proto/shard.proto

import type { ApplyOp as _tally_shard_v1_ApplyOp, ApplyOp__Output as _tally_shard_v1_ApplyOp__Output } from '../../../tally/shard/v1/ApplyOp.ts';
import type { Long } from '@grpc/proto-loader';

export interface ApplyItem {
  'shardId'?: (number | string | Long);
  'amount'?: (number | string | Long);
  'idempotencyKey'?: (Buffer | Uint8Array | string);
  /**
   * Record the key at this shard without changing its total (amount is 0):
   * a keyed retry after growth fences the shard its first attempt may have
   * gone to. applied=false means the key was already there.
   */
  'fence'?: (boolean);
  /**
   * Keyed items: the counter's shard count the router routed by.
   */
  'routedShardCount'?: (number);
  'op'?: (_tally_shard_v1_ApplyOp);
  /**
   * MEMBER_SET
   */
  'member'?: (number | string | Long);
  'present'?: (boolean);
  /**
   * DISTINCT: packed (u16 register index, u8 rank) triples.
   */
  'registers'?: (Buffer | Uint8Array | string);
  /**
   * INCREMENT: the counter's window setting (0, 0: none).
   */
  'windowBucketMs'?: (number | string | Long);
  'windowRetentionMs'?: (number | string | Long);
  /**
   * INCREMENT, MEMBER_SET, DISTINCT: the counter's generation (how many
   * clears it has had) when the router routed the item. Older than the
   * shard's: the item was sent before a clear the shard has seen, and is
   * cleared away (a key is still recorded). Newer: the shard is cleared to
   * it first. CLEAR: the generation to clear to.
   */
  'generation'?: (number | string | Long);
  /**
   * REGION_COMPONENT: the encoded component. REGION_COMPONENTS: the packed
   * component entry.
   */
  'component'?: (Buffer | Uint8Array | string);
}

export interface ApplyItem__Output {
  'shardId': (string);
  'amount': (string);
  'idempotencyKey': (Buffer);
  /**
   * Record the key at this shard without changing its total (amount is 0):
   * a keyed retry after growth fences the shard its first attempt may have
   * gone to. applied=false means the key was already there.
   */
  'fence': (boolean);
  /**
   * Keyed items: the counter's shard count the router routed by.
   */
  'routedShardCount': (number);
  'op': (_tally_shard_v1_ApplyOp__Output);
  /**
   * MEMBER_SET
   */
  'member': (string);
  'present': (boolean);
  /**
   * DISTINCT: packed (u16 register index, u8 rank) triples.
   */
  'registers': (Buffer);
  /**
   * INCREMENT: the counter's window setting (0, 0: none).
   */
  'windowBucketMs': (string);
  'windowRetentionMs': (string);
  /**
   * INCREMENT, MEMBER_SET, DISTINCT: the counter's generation (how many
   * clears it has had) when the router routed the item. Older than the
   * shard's: the item was sent before a clear the shard has seen, and is
   * cleared away (a key is still recorded). Newer: the shard is cleared to
   * it first. CLEAR: the generation to clear to.
   */
  'generation': (string);
  /**
   * REGION_COMPONENT: the encoded component. REGION_COMPONENTS: the packed
   * component entry.
   */
  'component': (Buffer);
}
