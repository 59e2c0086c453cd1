// The handlers of the node's ShardNode service, one per RPC or family (apply;
// reads; Status and SetRole; Reconcile; replication; the backup's snapshot
// stream; the region publisher's feed of changed shards), each over the
// node's state and testable alone, and the frame streams that serve the
// streamed methods. The service's wiring (src/node/node-service.ts) binds
// them to gRPC; nothing here binds a port.
export { createApplyHandler, type ApplyDeps } from './apply-handler.ts';
export { createChangedShards, type ChangedShardsDeps } from './changed-shards.ts';
export { FrameStreams, serveFrames, type FrameAnswer, type FrameHandlerOptions } from './frame-streams.ts';
export { NodeContext, type NodeContextDeps, type ReadConfirmation, type ReadGenerations } from './node-context.ts';
export { checkProtocol, protocolRefusalOf } from './protocol-check.ts';
export { createReadHandlers, type ReadHandlers } from './read-handlers.ts';
export { createReconcileHandler } from './reconcile-handler.ts';
export { createReplicationHandlers, type ReplicationDeps, type ReplicationHandlers } from './replication-handlers.ts';
export { createRoleHandlers, type RoleDeps, type RoleHandlers, type RoleReplicator } from './role-handlers.ts';
export { createSnapshotExport, type SnapshotExportDeps } from './snapshot-export.ts';
