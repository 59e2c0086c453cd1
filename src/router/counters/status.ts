// ClusterStatus: every node of every pair as it answers now (health, role, log,
// identity) beside what the directory records, and each follower's lag as its
// primary sees it. Reads only: it never changes the directory or a role.
import { peerProtocolOf } from '../../wire/internal/index.ts';
import { type counterV1 } from '../../common/index.ts';
import { zoneOf, type PairInfo, type StatusDirectory } from '../directory/index.ts';
import type { NodePool } from '../nodes/index.ts';

/** Who answers and who else shares the directory: for the status's header. */
export interface RouterView {
  directoryStore: 'sqlite' | 'etcd';
  routerId: string;
  /** Every router sharing the directory now, this one included. */
  routers(): string[];
  /** The router supervising the pairs now; '' while none does. */
  supervisor(): string;
  /** This router's --dedup-window-ms, advertised for the outbox relay's check (G12). */
  dedupWindowMs: number;
  /** This cluster's region ('' alone) and how each peer region's link stands (docs/regions.md). */
  region?: string;
  peerRegions?(): counterV1.PeerRegionStatus__Output[];
}

export function pairStatusOf(directory: StatusDirectory, pair: PairInfo): counterV1.PairStatus__Output {
  return {
    pair: pair.pairIndex,
    primary: pair.primary,
    follower: pair.follower,
    epoch: pair.epoch.toString(),
    inSync: pair.inSync,
    draining: pair.draining,
    shardCount: String(directory.shardCountOfPair(pair.pairIndex)),
    zoneWarning: directory.zoneWarning(pair.pairIndex),
  };
}

export async function clusterStatus(
  directory: StatusDirectory,
  pool: NodePool,
  statusTimeoutMs: number,
  view: RouterView,
): Promise<counterV1.ClusterStatusResponse__Output> {
  const pairs = directory.allPairs();
  const members = pairs.flatMap((pair) => [
    { address: pair.primary, role: 'primary', pair },
    { address: pair.follower, role: 'follower', pair },
  ]);
  const statuses = await Promise.allSettled(members.map((member) => pool.status(member.address, statusTimeoutMs)));
  const nodes: counterV1.NodeInfo__Output[] = members.map((member, index) => {
    const outcome = statuses[index]!;
    const base = {
      address: member.address,
      role: member.role,
      pair: member.pair.pairIndex,
      inSync: member.pair.inSync,
      // What the directory recorded, until the node answers for itself.
      zone: zoneOf(member.pair, member.address),
      replicationAddress: member.pair.advertised[member.address]?.replicationAddress ?? '',
      protocolVersion: 0,
    };
    if (outcome.status === 'rejected') {
      return {
        ...base,
        health: 'UNREACHABLE',
        lastLsn: '0',
        pid: 0,
        shardCount: '0',
        replicationLagEntries: '0',
        replicationLagMs: '0',
        epoch: '0',
        nodeId: '',
        installing: false,
        error: (outcome.reason as Error).message,
      };
    }
    const status = outcome.value;
    const recordedId = member.role === 'primary' ? member.pair.primaryId : member.pair.followerId;
    return {
      ...base,
      health: status.ready ? 'SERVING' : 'NOT_SERVING',
      lastLsn: status.lastLsn,
      pid: status.pid,
      shardCount: status.shardCount,
      replicationLagEntries: '0',
      replicationLagMs: '0',
      epoch: status.epoch,
      nodeId: status.nodeId,
      installing: status.installing,
      zone: status.zone,
      replicationAddress: status.replicationAddress,
      protocolVersion: peerProtocolOf(status.protocol).current,
      // A node that disagrees with the directory says so.
      error:
        recordedId !== '' && status.nodeId !== recordedId
          ? `node reports log ${status.nodeId}, the directory knows ${recordedId} (a lost or replaced disk)`
          : status.installing
            ? 'receiving a snapshot'
            : status.role !== member.role
              ? `node reports role ${status.role}`
              : '',
    };
  });
  // A follower's lag is how far its log trails its primary's, as the primary sees it.
  for (let index = 0; index < nodes.length; index += 2) {
    const primary = statuses[index]!;
    const follower = nodes[index + 1]!;
    if (primary.status === 'fulfilled') {
      const lag = BigInt(primary.value.lastLsn) - BigInt(primary.value.followerAckedLsn);
      follower.replicationLagEntries = (lag > 0n ? lag : 0n).toString();
      follower.replicationLagMs = primary.value.replicationLagMs;
    }
  }
  return {
    nodes,
    counters: String(directory.counterCount),
    pairs: pairs.map((pair) => pairStatusOf(directory, pair)),
    directoryStore: view.directoryStore,
    routers: view.routers(),
    supervisor: view.supervisor(),
    router: view.routerId,
    dedupWindowMs: String(view.dedupWindowMs),
    region: view.region ?? '',
    peerRegions: view.peerRegions?.() ?? [],
  };
}
