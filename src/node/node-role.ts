// The node's role, as last assigned by the router: primary or follower of a
// pair at an epoch. Persisted in the log's meta table so a restarted node
// resumes it. Only the router changes it (SetRole); a node never promotes or
// demotes itself.
import type { ShardLog } from './shard-log.ts';

export type Role = 'unassigned' | 'primary' | 'follower';

export interface RoleState {
  role: Role;
  epoch: bigint;
  /** The other member of the pair: the follower of a primary, the primary of a follower. */
  peer: string;
  /** Primary only: acknowledge only after the follower has committed too. */
  syncRequired: boolean;
  /** Primary only: the log's last lsn when this node became primary at this epoch. */
  epochStartLsn: bigint;
}

const metaKey = 'role';

export function loadRole(log: ShardLog): RoleState {
  const stored = log.getMeta(metaKey);
  if (stored === undefined) return { role: 'unassigned', epoch: 0n, peer: '', syncRequired: false, epochStartLsn: 0n };
  const parsed = JSON.parse(stored) as { role: Role; epoch: string; peer: string; syncRequired: boolean; epochStartLsn: string };
  return {
    role: parsed.role,
    epoch: BigInt(parsed.epoch),
    peer: parsed.peer,
    syncRequired: parsed.syncRequired,
    epochStartLsn: BigInt(parsed.epochStartLsn),
  };
}

export function saveRole(log: ShardLog, state: RoleState): void {
  log.setMeta(
    metaKey,
    JSON.stringify({
      role: state.role,
      epoch: state.epoch.toString(),
      peer: state.peer,
      syncRequired: state.syncRequired,
      epochStartLsn: state.epochStartLsn.toString(),
    }),
  );
}
