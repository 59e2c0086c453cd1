// What a node process knows about itself beyond its log: whether it serves,
// the role the router last gave it, and how much of its log is known to
// match its current primary. Shared by the service, follower and checkpointer.
import type { RoleState } from './node-role.ts';

export interface NodeState {
  ready: boolean;
  role: RoleState;
  /**
   * Follower only: the log up to here is known to match the current
   * primary's (it accepted an append continuing it this epoch). Only that
   * much may be folded into a checkpoint: the rest may be a deposed
   * primary's tail, to be dropped.
   */
  confirmedLsn: bigint;
}
