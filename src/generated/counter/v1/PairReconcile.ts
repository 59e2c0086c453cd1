// Original file: proto/counter.proto

import type { Long } from '@grpc/proto-loader';

export interface PairReconcile {
  'pair'?: (number);
  'primaryLsn'?: (number | string | Long);
  'followerLsn'?: (number | string | Long);
  /**
   * False when the follower could not be compared (down, or ahead of its primary).
   */
  'followerChecked'?: (boolean);
  'note'?: (string);
}

export interface PairReconcile__Output {
  'pair': (number);
  'primaryLsn': (string);
  'followerLsn': (string);
  /**
   * False when the follower could not be compared (down, or ahead of its primary).
   */
  'followerChecked': (boolean);
  'note': (string);
}
