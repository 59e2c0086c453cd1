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
}
