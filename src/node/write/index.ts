// The node's write path: an Apply's groups decoded and checked, staged and
// committed by group commit (one transaction and fsync per turn of the event
// loop, answered only once durable, on the follower too while in sync), and
// the checkpointer that folds the committed log in the background. Nothing
// here answers a gRPC call: src/node/handlers does.
export type { ApplyEntry, ApplyOp, GroupOutcome } from './apply-entry.ts';
export { Checkpointer, type CheckpointObserver, type CheckpointSettings } from './checkpointer.ts';
export { GroupCommitter, RowMerger, type CommitHooks, type CommitResult } from './group-commit.ts';
export { decodeGroup, packedIncrementCount, parseShardId } from './request-decoding.ts';
