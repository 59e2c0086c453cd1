// Original file: proto/shard.proto

import type { Long } from '@grpc/proto-loader';

export interface GroupResult {
  /**
   * 0 = OK; otherwise a gRPC status code for this group alone.
   */
  'code'?: (number);
  'message'?: (string);
  /**
   * One per ApplyItem of the group (packed increments always apply when
   * their group does): false when the item was a duplicate key.
   */
  'applied'?: (boolean)[];
  /**
   * Per ApplyItem: registers raised (DISTINCT), 1 or 0 (MEMBER_SET), the correction made (MEMBER_REPAIR).
   */
  'changed'?: (number | string | Long)[];
  /**
   * Packed increment records this group applied (all of them when code is 0).
   * The router checks it: a node older than packed increments would skip the
   * field it does not know and answer OK having applied none of them.
   */
  'packedRecordsApplied'?: (number);
}

export interface GroupResult__Output {
  /**
   * 0 = OK; otherwise a gRPC status code for this group alone.
   */
  'code': (number);
  'message': (string);
  /**
   * One per ApplyItem of the group (packed increments always apply when
   * their group does): false when the item was a duplicate key.
   */
  'applied': (boolean)[];
  /**
   * Per ApplyItem: registers raised (DISTINCT), 1 or 0 (MEMBER_SET), the correction made (MEMBER_REPAIR).
   */
  'changed': (string)[];
  /**
   * Packed increment records this group applied (all of them when code is 0).
   * The router checks it: a node older than packed increments would skip the
   * field it does not know and answer OK having applied none of them.
   */
  'packedRecordsApplied': (number);
}
