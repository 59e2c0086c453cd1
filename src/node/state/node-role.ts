// The node's role, as last assigned by the router: primary or follower of a
// pair at an epoch. Persisted in the log's meta table so a restarted node
// resumes it. Only the router changes it (SetRole); a node never promotes or
// demotes itself.
import type { ShardLog } from '../log/index.ts';

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
  /** The pair's directory configuration version of the last order obeyed (0: none, or a router before versions). */
  configVersion: bigint;
}

/** A SetRole order, parsed. */
export interface RoleOrder {
  role: 'primary' | 'follower';
  epoch: bigint;
  peer: string;
  syncRequired: boolean;
  configVersion: bigint;
}

/**
 * Why an order must not be obeyed, or undefined when it may be. The
 * directory issues a higher configuration version with every change to a
 * pair, so an order carrying a lower one than the node already obeyed was
 * superseded (late, duplicated, from a deposed supervisor) whatever its
 * timing. At the same version the only other order the directory can mean
 * is the same one requiring sync (a primary is told to require its follower
 * before the directory records the pair in sync, under the version it read):
 * requiring sync is the safe direction, so it is taken; dropping sync needs
 * a newer version, which the directory issues only after recording the pair
 * out of sync. Orders from a router before versions (0 on both sides) keep
 * the epoch rule alone; an unversioned order to a node that obeyed a version
 * is refused (it may be superseded: nothing can tell).
 */
export function refusalOf(current: RoleState, order: RoleOrder): string | undefined {
  if (order.epoch < current.epoch) return `stale epoch ${order.epoch}: node is at ${current.epoch}`;
  // Decided, not an accident: an order without a version cannot be told from
  // a superseded one, so once a node obeyed a versioned order it obeys no
  // unversioned one. Routers from before versions must all be upgraded
  // before the nodes take orders from new ones (docs/kubernetes.md, Upgrade).
  if (order.configVersion === 0n && current.configVersion > 0n)
    return (
      `order without a configuration version (from a router older than configuration versions) refused: this node obeyed ` +
      `version ${current.configVersion}, and an unversioned order cannot be told from a superseded one; upgrade every router`
    );
  if (order.configVersion < current.configVersion)
    return `superseded order: configuration version ${order.configVersion}, node obeyed ${current.configVersion}`;
  if (order.configVersion > current.configVersion || order.configVersion === 0n) return undefined;
  const sameOrder = order.role === current.role && order.epoch === current.epoch && order.peer === current.peer;
  if (!sameOrder)
    return `superseded order: configuration version ${order.configVersion} already obeyed as ${current.role} at epoch ${current.epoch}`;
  if (current.syncRequired && !order.syncRequired)
    return `superseded order: configuration version ${order.configVersion} already requires sync; dropping it needs a newer version`;
  return undefined;
}

const metaKey = 'role';

export function loadRole(log: ShardLog): RoleState {
  const stored = log.getMeta(metaKey);
  if (stored === undefined) return { role: 'unassigned', epoch: 0n, peer: '', syncRequired: false, epochStartLsn: 0n, configVersion: 0n };
  const parsed = JSON.parse(stored) as {
    role: Role;
    epoch: string;
    peer: string;
    syncRequired: boolean;
    epochStartLsn: string;
    configVersion?: string;
  };
  return {
    role: parsed.role,
    epoch: BigInt(parsed.epoch),
    peer: parsed.peer,
    syncRequired: parsed.syncRequired,
    epochStartLsn: BigInt(parsed.epochStartLsn),
    // A role saved before versions: none obeyed yet.
    configVersion: BigInt(parsed.configVersion ?? '0'),
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
      configVersion: state.configVersion.toString(),
    }),
  );
}
