// The node's write path: an Apply's groups decoded and checked, staged and
// committed by group commit (one transaction and fsync per turn of the event
// loop, answered only once durable, on the follower too while in sync), and
// the checkpointer that folds the committed log in the background. Nothing
// here answers a gRPC call: src/node/handlers does.
export { Checkpointer, type CheckpointObserver, type CheckpointSettings } from './checkpointer.ts';
export { GroupCommitter, RowMerger, type ApplyEntry, type ApplyOp, type CommitHooks, type CommitResult, type GroupOutcome } from './group-commit.ts';
export { decodeGroup, packedIncrementBytes, packedIncrementCount, parseShardId } from './request-decoding.ts';
