// Original file: proto/counter.proto

import type { Long } from '@grpc/proto-loader';

export interface ReplaceNodeResponse {
  'pair'?: (number);
  'primary'?: (string);
  'follower'?: (string);
  'epoch'?: (number | string | Long);
}

export interface ReplaceNodeResponse__Output {
  'pair': (number);
  'primary': (string);
  'follower': (string);
  'epoch': (string);
}
