// Original file: proto/counter.proto


export interface BackupChunk {
  /**
   * A tally.shard.v1.SnapshotStreamPiece as the node encoded it.
   */
  'snapshotChunk'?: (Buffer | Uint8Array | string);
  /**
   * The node it came from: its address and its log's identity.
   */
  'node'?: (string);
  'nodeId'?: (string);
}

export interface BackupChunk__Output {
  /**
   * A tally.shard.v1.SnapshotStreamPiece as the node encoded it.
   */
  'snapshotChunk': (Buffer);
  /**
   * The node it came from: its address and its log's identity.
   */
  'node': (string);
  'nodeId': (string);
}
