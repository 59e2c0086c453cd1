// Status and SetRole: what the node says of itself, and the router's orders
// to change its role, epoch, peer or sync requirement. An order is obeyed only
// when it is newer than the last one (refusalOf) and names this log; the new
// role is durable before anyone hears of it.
import { ErrorCode, TallyError } from '../../wire/index.ts';
import { shardProtocolStamp } from '../../wire/internal/index.ts';
import type { Logger, shardV1 } from '../../common/index.ts';
import type { ShardLog } from '../log/index.ts';
import type { Replicator } from '../replication/index.ts';
import { refusalOf, saveRole, type NodeMemory, type NodeState, type Role, type RoleOrder, type RoleState } from '../state/index.ts';

/** What the role handlers ask of the primary's replicator (Replicator). */
export interface RoleReplicator {
  status(): ReturnType<Replicator['status']>;
  onRoleChange(): void;
  waitForAck(lsn: bigint, timeoutMs: number): Promise<void>;
}

export interface RoleDeps {
  state: NodeState;
  log: ShardLog;
  memory: NodeMemory;
  replicator: RoleReplicator;
  logger: Logger;
  /** What this node says of itself in Status: its failure domain and the address its partner replicates to ('' = its own). */
  zone: string;
  replicationAddress: string;
}

export interface RoleHandlers {
  status(): shardV1.StatusResponse__Output;
  setRole(request: shardV1.SetRoleRequest__Output): Promise<shardV1.StatusResponse__Output>;
}

export function createRoleHandlers(deps: RoleDeps): RoleHandlers {
  const { state, log, replicator } = deps;
  const status = (): shardV1.StatusResponse__Output => statusOf(deps);
  return {
    status,
    async setRole(request) {
      if (!state.ready) throw new TallyError(ErrorCode.unavailable, 'node is not ready (replaying its log or shutting down)');
      const order = orderOf(request);
      const refusal = refusalOf(state.role, order) ?? refusalOfLog(log, request, order);
      if (refusal !== undefined) throw new TallyError(ErrorCode.failedPrecondition, refusal);
      if (changesRole(state.role, order)) obey(deps, order);
      // Asked to require sync: answer only once the follower holds our whole
      // log, so the router marks the pair in sync only when it truly is.
      if (state.role.role === 'primary' && state.role.syncRequired)
        await replicator.waitForAck(log.lastLsn, Math.max(100, request.catchUpTimeoutMs));
      return status();
    },
  };
}

function statusOf(deps: RoleDeps): shardV1.StatusResponse__Output {
  const { state, log } = deps;
  const replication = deps.replicator.status();
  const isPrimary = state.role.role === 'primary';
  return {
    role: state.role.role,
    pid: process.pid,
    lastLsn: log.lastLsn.toString(),
    shardCount: String(deps.memory.totals.shardCount),
    epoch: state.role.epoch.toString(),
    ready: state.ready,
    peer: state.role.peer,
    syncRequired: state.role.syncRequired,
    followerAckedLsn: isPrimary ? replication.ackedLsn.toString() : '0',
    followerCaughtUp: isPrimary && replication.caughtUp,
    followerError: isPrimary ? replication.lastError : '',
    replicationLagMs: String(isPrimary ? Math.max(0, Math.round(replication.lagMs)) : 0),
    epochStartLsn: state.role.epochStartLsn.toString(),
    nodeId: log.nodeId,
    lastEpoch: log.lastEpoch.toString(),
    checkpointLsn: log.checkpointLsn.toString(),
    followerId: isPrimary ? replication.followerId : '',
    installing: log.installing,
    configVersion: state.role.configVersion.toString(),
    followerLostEntries: isPrimary && replication.followerLostEntries,
    followerAhead: isPrimary && replication.followerAhead,
    protocol: { current: shardProtocolStamp.current!, oldest: shardProtocolStamp.oldest! },
    zone: deps.zone,
    replicationAddress: deps.replicationAddress,
  };
}

/** The order a SetRole carries; a role other than primary or follower is refused. */
function orderOf(request: shardV1.SetRoleRequest__Output): RoleOrder {
  const role = request.role as Role;
  if (role !== 'primary' && role !== 'follower')
    throw new TallyError(ErrorCode.invalidArgument, `role must be primary or follower, got "${request.role}"`);
  return {
    role,
    epoch: BigInt(request.epoch),
    peer: request.peer,
    syncRequired: role === 'primary' && request.syncRequired,
    configVersion: BigInt(request.configVersion ?? '0'),
  };
}

/** Why this log may not take the order, or undefined. */
function refusalOfLog(log: ShardLog, request: shardV1.SetRoleRequest__Output, order: RoleOrder): string | undefined {
  // The router names the log it means: a node that lost its disk is not
  // the node it was, whatever its address.
  if ((request.nodeId ?? '') !== '' && request.nodeId !== log.nodeId)
    return `node identity is ${log.nodeId}, not ${request.nodeId}: this log is not the one the router knows`;
  if (order.role !== 'primary') return undefined;
  const minLastLsn = BigInt(request.minLastLsn ?? '0');
  if (log.installing) return 'a snapshot install is under way: this log is incomplete';
  if (log.lastLsn < minLastLsn) return `log ends at lsn ${log.lastLsn}, before the acknowledged ${minLastLsn}`;
  return undefined;
}

function changesRole(current: RoleState, order: RoleOrder): boolean {
  return (
    order.role !== current.role ||
    order.epoch !== current.epoch ||
    order.peer !== current.peer ||
    order.syncRequired !== current.syncRequired ||
    order.configVersion !== current.configVersion
  );
}

/** Takes the order: saved first (a restart resumes this role), then in memory, then told to replication. */
function obey(deps: RoleDeps, order: RoleOrder): void {
  const { state, log, logger } = deps;
  const current = state.role;
  const { role, epoch } = order;
  const becamePrimaryNow = role === 'primary' && (current.role !== 'primary' || epoch !== current.epoch);
  const next: RoleState = {
    role,
    epoch,
    peer: order.peer,
    syncRequired: order.syncRequired,
    epochStartLsn: becamePrimaryNow ? log.lastLsn : role === 'primary' ? current.epochStartLsn : 0n,
    configVersion: order.configVersion > current.configVersion ? order.configVersion : current.configVersion,
  };
  saveRole(log, next);
  state.role = next;
  state.confirmedLsn = 0n;
  deps.replicator.onRoleChange();
  logger.info(role === 'primary' && current.role !== 'primary' ? 'promotion' : 'role', {
    role,
    epoch,
    peer: order.peer,
    syncRequired: next.syncRequired,
    configVersion: next.configVersion,
    lastLsn: log.lastLsn,
    previousRole: current.role,
    previousEpoch: current.epoch,
  });
}
