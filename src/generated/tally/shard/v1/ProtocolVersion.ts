// Original file: proto/shard.proto


/**
 * The version of this internal wire a process speaks, carried in every
 * request (field 100) and in StatusResponse. `current` rises with every
 * change to this file a peer must know about; `oldest` is the oldest
 * version the sender still understands, raised only when support for an
 * older peer is dropped (a breaking change). A receiver serves a request
 * when the two ranges overlap (sender.oldest <= its current and
 * sender.current >= its oldest) and refuses it FAILED_PRECONDITION naming
 * both otherwise. A request without it comes from a process before
 * versions: version 1, oldest 1. History: 1 = before versions; 2 = the
 * version itself, StatusResponse.zone and replication_address; 3 =
 * ApplyStream and ReadShardsStream; 4 = ReplicateStream and
 * AppendEntriesRequest.records; 5 = REGION_COMPONENT, ApplyItem.component
 * and ReadComponents (regions); 6 = REGION_COMPONENTS.
 */
export interface ProtocolVersion {
  'current'?: (number);
  'oldest'?: (number);
}

/**
 * The version of this internal wire a process speaks, carried in every
 * request (field 100) and in StatusResponse. `current` rises with every
 * change to this file a peer must know about; `oldest` is the oldest
 * version the sender still understands, raised only when support for an
 * older peer is dropped (a breaking change). A receiver serves a request
 * when the two ranges overlap (sender.oldest <= its current and
 * sender.current >= its oldest) and refuses it FAILED_PRECONDITION naming
 * both otherwise. A request without it comes from a process before
 * versions: version 1, oldest 1. History: 1 = before versions; 2 = the
 * version itself, StatusResponse.zone and replication_address; 3 =
 * ApplyStream and ReadShardsStream; 4 = ReplicateStream and
 * AppendEntriesRequest.records; 5 = REGION_COMPONENT, ApplyItem.component
 * and ReadComponents (regions); 6 = REGION_COMPONENTS.
 */
export interface ProtocolVersion__Output {
  'current': (number);
  'oldest': (number);
}
