// Original file: proto/counter.proto

import type { NodeInfo as _counter_v1_NodeInfo, NodeInfo__Output as _counter_v1_NodeInfo__Output } from '../../counter/v1/NodeInfo.ts';
import type { Long } from '@grpc/proto-loader';

export interface ClusterStatusResponse {
  'nodes'?: (_counter_v1_NodeInfo)[];
  'counters'?: (number | string | Long);
}

export interface ClusterStatusResponse__Output {
  'nodes': (_counter_v1_NodeInfo__Output)[];
  'counters': (string);
}
