// Replication between the two nodes of a pair: the primary's replicator
// (streaming, catch-up, snapshot install) and the follower's side.
export { createFollower, decodeReplicated } from './follower.ts';
export { Replicator } from './replicator.ts';
export { entryToWire, entryWireBytes } from './entry-wire.ts';
