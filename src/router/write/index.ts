// The write paths: increments (batched, keyed, generation-tagged; one
// call's share for one node is a NodeGroup, node-group.ts), distinct adds
// and membership changes, each resolving its counters in the directory and
// sending through the node pool.
export { DistinctPath } from './distinct-path.ts';
export { IncrementPath, columnsOf, type AppliedBatch, type ValidIncrement } from './increment-path.ts';
export { MembershipPath } from './membership-path.ts';
export { NodeGroup, addInt64, hashKey } from './node-group.ts';
