// Original file: proto/shard.proto

import type { Long } from '@grpc/proto-loader';

/**
 * One piece of a shard's checkpoint part (window, sketch, members). A part
 * larger than a chunk arrives in several pieces, in order, concatenated.
 */
export interface SnapshotPart {
  'shardId'?: (number | string | Long);
  'part'?: (string);
  'data'?: (Buffer | Uint8Array | string);
}

/**
 * One piece of a shard's checkpoint part (window, sketch, members). A part
 * larger than a chunk arrives in several pieces, in order, concatenated.
 */
export interface SnapshotPart__Output {
  'shardId': (string);
  'part': (string);
  'data': (Buffer);
}
