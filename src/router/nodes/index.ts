// The router's side of the node wire: one channel per node, and the
// batching sender every write path and clear goes through.
export { NodePool } from './node-pool.ts';
export { NotAppliedError, itemsWireBytes, type ApplyItem, type OutgoingGroup, type SenderObserver } from './node-sender.ts';
