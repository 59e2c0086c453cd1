// Original file: proto/shard.proto

import type { Long } from '@grpc/proto-loader';

export interface ReadSketchesResponse {
  'sketches'?: (Buffer | Uint8Array | string)[];
  'lsn'?: (number | string | Long);
  'role'?: (string);
  'epoch'?: (number | string | Long);
  'nodeId'?: (string);
  /**
   * As in ReadShardsResponse.
   */
  'newerGenerationIndexes'?: (number)[];
}

export interface ReadSketchesResponse__Output {
  'sketches': (Buffer)[];
  'lsn': (string);
  'role': (string);
  'epoch': (string);
  'nodeId': (string);
  /**
   * As in ReadShardsResponse.
   */
  'newerGenerationIndexes': (number)[];
}
