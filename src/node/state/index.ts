// A node's state in memory: its role and epoch (and the orders it obeyed),
// shard totals and windows, the dedup index of recent keys, and rebuilding
// them from the log at start.
export { DedupIndex } from './dedup-index.ts';
export { NodeMemory, checkpointFolder, encodeWindowSetting } from './node-memory.ts';
export { loadRole, refusalOf, saveRole, type Role, type RoleOrder, type RoleState } from './node-role.ts';
export type { NodeState } from './node-state.ts';
export { rebuildMemory } from './recovery.ts';
