// Original file: proto/counter.proto

import type { PartitionCheck as _counter_v1_PartitionCheck, PartitionCheck__Output as _counter_v1_PartitionCheck__Output } from '../../counter/v1/PartitionCheck.ts';
import type { Long } from '@grpc/proto-loader';

export interface RebuildResponse {
  'counter'?: (string);
  'members'?: (number | string | Long);
  'storedCount'?: (number | string | Long);
  'drift'?: (number | string | Long);
  'repaired'?: (boolean);
  'partitions'?: (_counter_v1_PartitionCheck)[];
}

export interface RebuildResponse__Output {
  'counter': (string);
  'members': (string);
  'storedCount': (string);
  'drift': (string);
  'repaired': (boolean);
  'partitions': (_counter_v1_PartitionCheck__Output)[];
}
