// Original file: proto/shard.proto

import type { LogEntryMsg as _tally_shard_v1_LogEntryMsg, LogEntryMsg__Output as _tally_shard_v1_LogEntryMsg__Output } from '../../../tally/shard/v1/LogEntryMsg.ts';
import type { Long } from '@grpc/proto-loader';

export interface AppendEntriesRequest {
  'epoch'?: (number | string | Long);
  /**
   * When set, the follower first drops every entry after this lsn.
   */
  'truncate'?: (boolean);
  'truncateAfterLsn'?: (number | string | Long);
  'entries'?: (_tally_shard_v1_LogEntryMsg)[];
  /**
   * Log matching: the entries follow the entry at prev_lsn, written at
   * prev_epoch (0, 0: the log's start). The follower appends (or truncates)
   * only when its own entry there matches; otherwise nothing changes and it
   * answers ok=false with where its log ends.
   */
  'prevLsn'?: (number | string | Long);
  'prevEpoch'?: (number | string | Long);
}

export interface AppendEntriesRequest__Output {
  'epoch': (string);
  /**
   * When set, the follower first drops every entry after this lsn.
   */
  'truncate': (boolean);
  'truncateAfterLsn': (string);
  'entries': (_tally_shard_v1_LogEntryMsg__Output)[];
  /**
   * Log matching: the entries follow the entry at prev_lsn, written at
   * prev_epoch (0, 0: the log's start). The follower appends (or truncates)
   * only when its own entry there matches; otherwise nothing changes and it
   * answers ok=false with where its log ends.
   */
  'prevLsn': (string);
  'prevEpoch': (string);
}
