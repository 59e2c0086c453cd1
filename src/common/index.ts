// Server plumbing: what the router, the nodes, the relay, the CLI and the
// launcher share and the client never ships (configuration parsing, the
// servers' limits, logging, metrics, gRPC servers and their TLS, the protos
// loaded from disk, bounded caches and queues). What travels on the wire is in
// src/wire/index.ts. Import from here, not from the files.
export * from './limits.ts';
export * from './interval-task.ts';
export * from './lru-map.ts';
export * from './fifo.ts';
export * from './private-files.ts';
export * from './config.ts';
export * from './logger.ts';
export * from './metrics.ts';
export * from './region-config.ts';
export * from './grpc/index.ts';
