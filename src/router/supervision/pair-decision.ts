// What the supervisor should do with one pair, given what each of its nodes
// last answered: a pure function, so every decision is a table-driven test.
// A node is known by its log's identity, never by its address or by
// "answers Status" alone: a node is made primary, or promoted, only when it
// is the recorded node and its log reaches what was acknowledged. A node
// that comes back with a new identity is a new follower to be filled.
import { replicationAddressOf, type AdvertisedNode, type PairInfo, type PairUpdate } from '../directory/index.ts';
import { inSyncGapEntriesMax } from '../../common/index.ts';

/** What a node said about itself (a StatusResponse, parsed). */
export interface NodeStatusView {
  nodeId: string;
  role: string;
  epoch: bigint;
  lastLsn: bigint;
  peer: string;
  syncRequired: boolean;
  installing: boolean;
  /** Primary: its follower's log identity and how far that log has confirmed. */
  followerId: string;
  followerAckedLsn: bigint;
  followerCaughtUp: boolean;
  replicationLagMs: number;
  /** The configuration version of the last order it obeyed. */
  configVersion: bigint;
  /** Primary: its follower (same identity) holds less than it once confirmed (an old copy of its disk). */
  followerLostEntries: boolean;
  /** Primary: its follower holds entries of its own epoch past its log's end (it lost entries: an old copy of its disk). */
  followerAhead: boolean;
  /** Its failure domain ('' when it names none). */
  zone: string;
  /** Where its partner replicates to ('' = the address routers dial). */
  replicationAddress: string;
}

export interface NodeView {
  /** undefined: no answer this round (or not ready). */
  status: NodeStatusView | undefined;
  /** Its connection was refused: the process is gone, not slow. */
  refused: boolean;
  /** How long it has not answered. */
  silentMs: number;
}

export type PairAction =
  /** Persist what was learned (identities, acknowledged lsn). */
  | { kind: 'record'; update: PairUpdate; reason: string }
  /** Make the primary slot's node primary at the pair's epoch (requiring sync or not). */
  | { kind: 'assignPrimary'; syncRequired: boolean }
  | { kind: 'assignFollower' }
  /** Directory first, then the primary: the follower is no longer read or promoted. */
  | { kind: 'markOutOfSync'; reason: string; update?: PairUpdate }
  | { kind: 'markInSync' }
  /** New epoch: the in-sync follower becomes primary; the old slot's node (with deposedId) becomes the follower. */
  | { kind: 'failover'; reason: string; deposedId: string }
  /** No node can safely serve the pair's shards: they answer UNAVAILABLE until an operator or a node returns. */
  | { kind: 'stuck'; reason: string };

export interface DecisionSettings {
  failoverTimeoutMs: number;
  followerTimeoutMs: number;
}

/**
 * confirmedLsnSeen: the highest lsn the primary last reported its follower
 * (the recorded one, at this epoch) confirmed, from the supervisor's memory:
 * fresher than pair.ackedLsn, which is written at most once a second. A
 * follower that holds less than either is missing acknowledged entries.
 */
export function decidePair(
  pair: PairInfo,
  primary: NodeView,
  follower: NodeView,
  settings: DecisionSettings,
  confirmedLsnSeen = 0n,
): PairAction[] {
  const actions: PairAction[] = [];
  const ps = primary.status;
  const fs = follower.status;
  // A node obeyed a newer version than this directory holds (restored from an
  // older copy, or this router's view lags): it would refuse every order
  // derived from here, so the next version issued goes above it. With a
  // lagging view the write itself is refused (the store compares revisions).
  const nodeVersion = [ps?.configVersion ?? 0n, fs?.configVersion ?? 0n].reduce((a, b) => (a > b ? a : b));
  if (nodeVersion > pair.configVersion)
    return [
      {
        kind: 'record',
        update: { configVersionAbove: nodeVersion },
        reason: `a node obeyed configuration version ${nodeVersion}, above the directory's ${pair.configVersion}`,
      },
    ];
  // What a node says of itself (zone, replication address) is recorded before
  // anything else, while the primary answers: a primary must be told where to
  // replicate from the directory (orders derive from it, under its version).
  // With the primary silent it waits: a failover comes first.
  const advertised = advertisedUpdate(pair, ps, fs);
  if (advertised !== undefined && ps !== undefined)
    return [{ kind: 'record', update: { advertised }, reason: 'what a node advertises (zone, replication address) recorded' }];
  // The follower slot answers as the recorded follower log, at this epoch, whole.
  const recordedFollower =
    fs !== undefined &&
    pair.followerId !== '' &&
    fs.nodeId === pair.followerId &&
    fs.role === 'follower' &&
    fs.epoch === pair.epoch &&
    !fs.installing;
  // Only the recorded follower, in sync at this epoch, holding everything
  // acknowledged, may take over.
  const followerHoldsHistory = recordedFollower && fs.lastLsn >= pair.ackedLsn && fs.lastLsn >= confirmedLsnSeen;
  const canFailover = pair.inSync && followerHoldsHistory;

  if (ps === undefined) {
    if (canFailover && (primary.refused || primary.silentMs >= settings.failoverTimeoutMs)) {
      return [
        {
          kind: 'failover',
          reason: primary.refused ? 'primary refused connections' : `primary silent for ${primary.silentMs} ms`,
          deposedId: pair.primaryId,
        },
      ];
    }
    // A directory from before identities, primary down: the follower of this
    // epoch is the one the directory's in-sync flag speaks of; record it so it can take over.
    if (pair.legacy && pair.followerId === '' && fs !== undefined && fs.role === 'follower' && fs.epoch === pair.epoch) {
      return [{ kind: 'record', update: { followerId: fs.nodeId }, reason: 'follower identity recorded' }];
    }
    return [];
  }

  // Is the node in the primary slot the pair's primary?
  let adopt = false;
  let known: boolean;
  if (pair.primaryId !== '') known = ps.nodeId === pair.primaryId;
  // A directory from before identities: the node holding a role at this
  // epoch, or the one before it (a failover written to the directory whose
  // SetRole never arrived), is the one it meant; an unassigned (empty) one never is.
  else if (pair.legacy) known = adopt = ps.role !== 'unassigned' && (ps.epoch === pair.epoch || ps.epoch + 1n === pair.epoch);
  // A pair no node was ever made primary of has no history to lose.
  else known = adopt = true;
  const acknowledgedLsn = pair.ackedLsn > confirmedLsnSeen ? pair.ackedLsn : confirmedLsnSeen;
  // A primary whose follower holds more of its own epoch lost entries: the
  // directory's floor may be older than what was acknowledged (it is written
  // at most once a second, and a new supervisor has seen nothing yet).
  const lostToFollower = ps.role === 'primary' && ps.epoch === pair.epoch && ps.followerAhead;
  const holdsHistory = known && !ps.installing && ps.lastLsn >= acknowledgedLsn && !lostToFollower;
  if (!holdsHistory) {
    const why = !known
      ? `the primary slot holds log ${ps.nodeId}, not ${pair.primaryId || 'the primary of this epoch'} (a lost or replaced disk)`
      : lostToFollower
        ? `the primary's log ends at lsn ${ps.lastLsn}, before its follower's at the same epoch (an old copy of its disk)`
        : `the primary's log ends at lsn ${ps.lastLsn}, before the acknowledged ${acknowledgedLsn}`;
    if (canFailover) return [{ kind: 'failover', reason: why, deposedId: ps.nodeId }];
    return [{ kind: 'stuck', reason: `${why}, and no in-sync follower holds the pair's history` }];
  }
  if (adopt) actions.push({ kind: 'record', update: { primaryId: ps.nodeId }, reason: 'primary identity recorded' });
  if (ps.epoch > pair.epoch)
    return [...actions, { kind: 'stuck', reason: `node is at epoch ${ps.epoch}, newer than the directory's ${pair.epoch}` }];

  // The directory says in sync but the primary is not requiring its
  // follower (a delayed or lost SetRole): it may have acknowledged alone,
  // so the follower is no longer known to hold everything.
  if (pair.inSync && ps.role === 'primary' && ps.epoch === pair.epoch && !ps.syncRequired) {
    return [...actions, { kind: 'markOutOfSync', reason: 'primary was not requiring its follower' }];
  }
  // The primary requires its follower under the directory's own version while
  // the directory says out of sync: a markInSync whose SetRole arrived but
  // whose in-sync write did not (it failed, or the lease moved between). The
  // node refuses to drop sync under that version (node-role.ts refusalOf), so
  // asking it to would fail every round and end it before markInSync. Either
  // finish the markInSync (its SetRole is the same order), or, with a
  // follower that cannot be counted, record out of sync again: the new
  // version lets the primary acknowledge alone, as the directory says.
  const requiresSyncUnrecorded =
    !pair.inSync &&
    pair.configVersion !== 0n &&
    ps.configVersion === pair.configVersion &&
    ps.role === 'primary' &&
    ps.epoch === pair.epoch &&
    ps.syncRequired;
  if (requiresSyncUnrecorded) {
    const followerReady = recordedFollower && fs.peer === pair.primary && ps.followerId === pair.followerId && nearlyCaughtUp(ps, settings);
    if (followerReady) return [...actions, { kind: 'markInSync' }];
    actions.push({ kind: 'markOutOfSync', reason: 'the primary requires its follower, which the directory does not record in sync' });
  } else if (
    ps.role !== 'primary' ||
    ps.epoch !== pair.epoch ||
    ps.peer !== replicationAddressOf(pair, pair.follower) ||
    ps.syncRequired !== pair.inSync
  ) {
    actions.push({ kind: 'assignPrimary', syncRequired: pair.inSync });
  }

  return followerActions(pair, ps, fs, follower, settings, actions);
}

/**
 * decidePair's second half, with the primary known to hold the pair's
 * history: the follower slot's identity, role and sync, after the primary's
 * actions already chosen.
 */
function followerActions(
  pair: PairInfo,
  ps: NodeStatusView,
  fs: NodeStatusView | undefined,
  follower: NodeView,
  settings: DecisionSettings,
  actions: PairAction[],
): PairAction[] {
  if (fs === undefined) {
    if (pair.inSync && (follower.refused || follower.silentMs >= settings.followerTimeoutMs)) {
      actions.push({
        kind: 'markOutOfSync',
        reason: follower.refused ? 'follower refused connections' : `follower silent for ${follower.silentMs} ms`,
      });
    }
    return actions;
  }
  if (fs.nodeId !== pair.followerId) {
    // A new log in the follower slot (first sight, a lost disk, a replacement): it holds nothing yet.
    const update: PairUpdate = { followerId: fs.nodeId };
    const reason =
      pair.followerId === '' ? 'follower identity recorded' : `the follower slot holds log ${fs.nodeId}, not ${pair.followerId}`;
    // First sight of a follower the primary is already confirming (a directory
    // from before identities): the pair's sync stands on the primary's word.
    const firstSightOfConfirmed = pair.followerId === '' && ps.followerId === fs.nodeId;
    actions.push(pair.inSync && !firstSightOfConfirmed ? { kind: 'markOutOfSync', reason, update } : { kind: 'record', update, reason });
    if (fs.role !== 'follower' || fs.epoch !== pair.epoch || fs.peer !== pair.primary) actions.push({ kind: 'assignFollower' });
    return actions;
  }
  if (fs.role !== 'follower' || fs.epoch !== pair.epoch || fs.peer !== pair.primary) actions.push({ kind: 'assignFollower' });

  const primaryReportsOurFollower = ps.role === 'primary' && ps.epoch === pair.epoch && ps.followerId === pair.followerId;
  if (pair.inSync) {
    if (primaryReportsOurFollower && ps.followerLostEntries) {
      actions.push({ kind: 'markOutOfSync', reason: 'the follower holds less than it had confirmed (an old copy of its disk?)' });
    } else if (ps.replicationLagMs >= settings.followerTimeoutMs) {
      actions.push({ kind: 'markOutOfSync', reason: `follower lagging ${ps.replicationLagMs} ms` });
    } else if (primaryReportsOurFollower && ps.followerAckedLsn > pair.ackedLsn) {
      actions.push({ kind: 'record', update: { ackedLsn: ps.followerAckedLsn }, reason: 'acknowledged lsn advanced' });
    }
  } else if (
    primaryReportsOurFollower &&
    nearlyCaughtUp(ps, settings) &&
    fs.role === 'follower' &&
    fs.epoch === pair.epoch &&
    !fs.installing
  ) {
    actions.push({ kind: 'markInSync' });
  }
  return actions;
}

/**
 * The follower streams at its primary's head: it confirmed everything, or it
 * is within one shipment of the head and not lagging. Exactly caught up is
 * rarely what a status shows under steady load (a commit is always in
 * flight), so asking for it kept a loaded pair out of sync for good. Close
 * is enough to try: markInSync's SetRole answers only once the follower
 * holds the primary's whole log, and only then is the pair recorded in sync.
 */
function nearlyCaughtUp(ps: NodeStatusView, settings: DecisionSettings): boolean {
  if (ps.followerCaughtUp) return true;
  const gapEntries = ps.lastLsn - ps.followerAckedLsn;
  return ps.followerAckedLsn > 0n && gapEntries <= BigInt(inSyncGapEntriesMax) && ps.replicationLagMs < settings.followerTimeoutMs;
}

/**
 * The pair's advertised map with what each answering member reports now, or
 * undefined when that changes nothing. A silent member keeps its entry.
 */
export function advertisedUpdate(
  pair: PairInfo,
  primary: NodeStatusView | undefined,
  follower: NodeStatusView | undefined,
): Record<string, AdvertisedNode> | undefined {
  const next: Record<string, AdvertisedNode> = { ...pair.advertised };
  let changed = false;
  for (const [address, status] of [
    [pair.primary, primary],
    [pair.follower, follower],
  ] as const) {
    if (status === undefined) continue;
    const held = Object.hasOwn(pair.advertised, address) ? pair.advertised[address]! : { zone: '', replicationAddress: '' };
    if (held.zone === status.zone && held.replicationAddress === status.replicationAddress) continue;
    next[address] = { zone: status.zone, replicationAddress: status.replicationAddress };
    changed = true;
  }
  return changed ? next : undefined;
}
