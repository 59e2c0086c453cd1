// The formats servers speak among themselves, never the client: shard.proto's
// protocol version and stream frames, the node's lean ReadShards codec, the
// packed-increment record the router writes and a node reads, a region
// component's record, the packed entry of many and a link batch's columns, and the columns of the nodes' feed of changed shards. Servers import this surface beside src/wire/index.ts;
// the client may not (lint), so @tally/client ships none of it.
export * from './shard-protocol.ts';
export * from './shard-frames.ts';
export * from './read-shards-codec.ts';
export * from './packed-increment.ts';
export * from './region-component.ts';
export * from './packed-components.ts';
export * from './batch-components.ts';
export * from './shard-columns.ts';
