// The only place roles change. Every healthIntervalMs (and at once when the
// write path finds a node unreachable) it asks each node of each pair for
// its status, and, one pair at a time, carries out what decidePair says,
// persisting every decision in the directory before acting on it:
//
//   in sync      primary acknowledges only what the follower has committed;
//                the follower may serve reads and may be promoted.
//   out of sync  primary acknowledges alone; the follower catches up (by
//                log, or by snapshot install); it is never read from or promoted.
//
// Nodes are known by their log identity (pair-decision.ts has the rules).
// A primary whose connection is refused (the process is gone) is replaced
// at once by its in-sync follower; a silent one after failoverTimeoutMs.
import { IntervalTask, type Logger, type shardV1 } from '../../common/index.ts';
import { monotonicNowMs, type MonotonicClock } from '../../wire/index.ts';
import { peerProtocolOf, shardProtocolRefusal } from '../../wire/internal/index.ts';
import { replicationAddressOf, type PairInfo, type PairUpdate, type SupervisedDirectory } from '../directory/index.ts';
import { decidePair, type NodeStatusView, type NodeView, type PairAction } from './pair-decision.ts';
import type { NodePool } from '../nodes/index.ts';
import type { RouterMetrics } from '../metrics/index.ts';

export interface SupervisorSettings {
  healthIntervalMs: number;
  /** Deadline of one health (Status) call. */
  healthTimeoutMs: number;
  /** A primary silent this long is replaced by its in-sync follower. */
  failoverTimeoutMs: number;
  /** A follower silent (or lagging) this long is marked out of sync. */
  followerTimeoutMs: number;
  /** How long a primary told to require sync may take to bring its follower level. */
  catchUpTimeoutMs: number;
}

interface NodeHealth {
  lastOkMs: number;
  status: shardV1.StatusResponse__Output | undefined;
  error: string;
  /** The last call's connection was refused: the process is gone. */
  refused: boolean;
}

/** Acknowledged-lsn progress is persisted at most this often per pair (each is an fsync). */
const ackedLsnRecordIntervalMs = 1_000;
/** The same "stuck" complaint is logged at most this often per pair. */
const stuckLogIntervalMs = 10_000;

function statusView(status: shardV1.StatusResponse__Output): NodeStatusView {
  return {
    nodeId: status.nodeId,
    role: status.role,
    epoch: BigInt(status.epoch),
    lastLsn: BigInt(status.lastLsn),
    peer: status.peer,
    syncRequired: status.syncRequired,
    installing: status.installing,
    followerId: status.followerId,
    followerAckedLsn: BigInt(status.followerAckedLsn),
    followerCaughtUp: status.followerCaughtUp,
    replicationLagMs: Number(status.replicationLagMs),
    configVersion: BigInt(status.configVersion ?? '0'),
    followerLostEntries: status.followerLostEntries ?? false,
    followerAhead: status.followerAhead ?? false,
    zone: status.zone ?? '',
    replicationAddress: status.replicationAddress ?? '',
  };
}

/** Role changes the supervisor makes: fenced by its lease when several routers share the directory. */
const asSupervisor = { asSupervisor: true } as const;

export class PairSupervisor {
  private readonly health = new Map<string, NodeHealth>();
  private readonly busyPairs = new Set<number>();
  /** Pairs to check again as soon as the current check ends (nudged while busy). */
  private readonly recheckPairs = new Set<number>();
  private readonly ackedRecordedMs = new Map<number, number>();
  private readonly stuckLoggedMs = new Map<number, number>();
  private readonly ticker: IntervalTask;
  /** Per pair: the highest lsn its primary reported the recorded follower confirmed, at that epoch. */
  private readonly confirmedSeen = new Map<number, { epoch: bigint; followerId: string; lsn: bigint }>();
  /** When any node last answered: no answer from any of them means this router is the one cut off. */
  private lastAnyAnswerMs: number;

  constructor(
    private readonly directory: SupervisedDirectory,
    private readonly pool: NodePool,
    private readonly metrics: RouterMetrics,
    private readonly logger: Logger,
    private readonly settings: SupervisorSettings,
    // Silence is a duration: a wall-clock step must neither fail a pair over nor hold a failover back.
    private readonly now: MonotonicClock = monotonicNowMs,
  ) {
    const startedMs = now();
    this.lastAnyAnswerMs = startedMs;
    for (const pair of directory.allPairs()) {
      for (const address of [pair.primary, pair.follower])
        this.health.set(address, { lastOkMs: startedMs, status: undefined, error: '', refused: false });
    }
    // A tick only starts pair checks (each pair guards and logs its own); it never waits for them.
    this.ticker = new IntervalTask({ name: 'pair supervision tick', intervalMs: settings.healthIntervalMs, logger }, () => this.tick());
  }

  start(): void {
    this.ticker.start();
  }

  stop(): void {
    this.ticker.stop();
  }

  /** Last known health of a node, for ClusterStatus. */
  healthOf(address: string): NodeHealth | undefined {
    return this.health.get(address);
  }

  tick(): void {
    for (const pair of this.directory.allPairs()) this.checkSoon(pair);
  }

  /**
   * The write or read path could not reach a node: check its pair now
   * rather than at the next tick (a dead primary is replaced in well under
   * a second).
   */
  nudge(address: string): void {
    const pair = this.directory.pairOf(address);
    if (pair !== undefined) this.checkSoon(pair);
  }

  private checkSoon(pair: PairInfo): void {
    if (this.busyPairs.has(pair.pairIndex)) {
      this.recheckPairs.add(pair.pairIndex);
      return;
    }
    this.busyPairs.add(pair.pairIndex);
    this.checkPair(pair)
      .catch((error: unknown) => this.logger.warn('pair check failed', { pair: pair.pairIndex, error: (error as Error).message }))
      .finally(() => {
        this.busyPairs.delete(pair.pairIndex);
        if (this.recheckPairs.delete(pair.pairIndex)) this.checkSoon(pair);
      });
  }

  /**
   * Runs one check of every pair and waits for it (startup, tests). Never
   * rejects: a pair whose check fails (the directory cannot be proven
   * current, a node does not answer) is logged as a tick's would be and
   * checked again by the ticker, which the caller starts next. A rejection
   * here once left a router that believed it supervised with no ticker.
   */
  async checkAll(): Promise<void> {
    await Promise.all(
      this.directory.allPairs().map(async (pair) => {
        if (this.busyPairs.has(pair.pairIndex)) return;
        this.busyPairs.add(pair.pairIndex);
        try {
          await this.checkPair(pair);
        } catch (error) {
          this.logger.warn('pair check failed', { pair: pair.pairIndex, error: (error as Error).message });
        } finally {
          this.busyPairs.delete(pair.pairIndex);
        }
      }),
    );
  }

  private async probe(address: string): Promise<shardV1.StatusResponse__Output | undefined> {
    let health = this.health.get(address);
    if (health === undefined) this.health.set(address, (health = { lastOkMs: this.now(), status: undefined, error: '', refused: false }));
    try {
      const status = await this.pool.status(address, this.settings.healthTimeoutMs);
      // Answering, but not yet holding its log in memory: alive, not usable.
      health.refused = false;
      if (!status.ready) throw new Error('not ready');
      // A node whose wire this router cannot speak gets no orders (it may not
      // check versions itself); tally status shows why.
      const refusal = shardProtocolRefusal(peerProtocolOf(status.protocol), `node ${address}`);
      if (refusal !== undefined) throw new Error(refusal);
      this.onAnswer();
      health.lastOkMs = this.now();
      health.status = status;
      health.error = '';
      return status;
    } catch (error) {
      const message = (error as Error).message;
      health.status = undefined;
      health.error = message;
      // Refused: nothing listens there. A paused or partitioned process times out instead.
      if (message.includes('ECONNREFUSED')) health.refused = true;
      return undefined;
    }
  }

  /**
   * Every node was silent for longer than a round: the fault was most likely
   * this router's own network (a partition, a pause), not every node at once.
   * Their silence is not evidence against any one of them, so every silence
   * clock restarts now: a healthy primary whose answer comes a moment after
   * its follower's is not failed over the instant links return. A refused
   * connection still proves a process gone.
   */
  private onAnswer(): void {
    const nowMs = this.now();
    const roundMs = this.settings.healthIntervalMs + this.settings.healthTimeoutMs;
    if (nowMs - this.lastAnyAnswerMs > 2 * roundMs) {
      for (const health of this.health.values()) if (health.lastOkMs < nowMs) health.lastOkMs = nowMs;
      this.logger.warn('nodes answer again after every one was silent: silence clocks restarted', {
        silentMs: Math.round(nowMs - this.lastAnyAnswerMs),
      });
    }
    this.lastAnyAnswerMs = nowMs;
  }

  private silentForMs(address: string): number {
    return this.now() - (this.health.get(address)?.lastOkMs ?? this.now());
  }

  private view(address: string, status: shardV1.StatusResponse__Output | undefined): NodeView {
    return {
      status: status === undefined ? undefined : statusView(status),
      refused: this.health.get(address)?.refused ?? false,
      silentMs: this.silentForMs(address),
    };
  }

  private async checkPair(pair: PairInfo): Promise<void> {
    const [primary, follower] = await Promise.all([this.probe(pair.primary), this.probe(pair.follower)]);
    const confirmedLsnSeen = this.noteConfirmed(pair, primary);
    const actions = decidePair(pair, this.view(pair.primary, primary), this.view(pair.follower, follower), this.settings, confirmedLsnSeen);
    for (const action of actions) {
      // Each step sees what the previous one changed; a failed step ends the round.
      if (!(await this.act(pair, action))) return;
    }
  }

  /**
   * What the primary says its recorded follower confirmed, remembered between
   * checks: a follower found holding less (an old copy of its disk) is not
   * promoted even if the primary dies before the directory records it.
   */
  private noteConfirmed(pair: PairInfo, primary: shardV1.StatusResponse__Output | undefined): bigint {
    let seen = this.confirmedSeen.get(pair.pairIndex);
    if (seen === undefined || seen.epoch !== pair.epoch || seen.followerId !== pair.followerId) {
      seen = { epoch: pair.epoch, followerId: pair.followerId, lsn: 0n };
      this.confirmedSeen.set(pair.pairIndex, seen);
    }
    if (
      primary !== undefined &&
      primary.role === 'primary' &&
      BigInt(primary.epoch) === pair.epoch &&
      primary.followerId === pair.followerId
    ) {
      const confirmed = BigInt(primary.followerAckedLsn);
      if (confirmed > seen.lsn) seen.lsn = confirmed;
    }
    return seen.lsn;
  }

  /** What a primary must hold: the directory's acknowledged lsn, or more if the primary reported more confirmed since. */
  private acknowledgedLsnOf(pair: PairInfo): bigint {
    const seen = this.confirmedSeen.get(pair.pairIndex);
    const seenLsn = seen !== undefined && seen.epoch === pair.epoch && seen.followerId === pair.followerId ? seen.lsn : 0n;
    return seenLsn > pair.ackedLsn ? seenLsn : pair.ackedLsn;
  }

  /**
   * False once this router stopped supervising (several routers: the lease
   * went elsewhere). A check already under way stops before its next step:
   * a deposed supervisor sends no role to a node after the new one may have
   * (its directory changes are fenced by the lease anyway).
   */
  mayAct: () => boolean = () => true;

  private async act(pair: PairInfo, action: PairAction): Promise<boolean> {
    if (!this.mayAct()) return false;
    switch (action.kind) {
      case 'record': {
        const onlyAcked = Object.keys(action.update).every((key) => key === 'ackedLsn');
        if (onlyAcked) {
          const lastMs = this.ackedRecordedMs.get(pair.pairIndex) ?? 0;
          if (this.now() - lastMs < ackedLsnRecordIntervalMs) return true;
          this.ackedRecordedMs.set(pair.pairIndex, this.now());
        } else {
          this.logger.info(action.reason, { pair: pair.pairIndex, ...stringified(action.update) });
        }
        await this.directory.updatePair(pair.pairIndex, action.update, asSupervisor);
        return true;
      }
      case 'assignPrimary': {
        const status = await this.assign(pair.primary, 'primary', pair, action.syncRequired);
        return status !== undefined;
      }
      case 'assignFollower':
        await this.assign(pair.follower, 'follower', pair, false);
        return true;
      case 'markOutOfSync':
        await this.markOutOfSync(pair, action.reason, action.update);
        return true;
      case 'markInSync':
        await this.markInSync(pair);
        return true;
      case 'failover':
        await this.failover(pair, action.reason, action.deposedId);
        return false;
      case 'stuck': {
        const lastMs = this.stuckLoggedMs.get(pair.pairIndex) ?? 0;
        if (this.now() - lastMs >= stuckLogIntervalMs) {
          this.stuckLoggedMs.set(pair.pairIndex, this.now());
          this.logger.error('pair unavailable', {
            pair: pair.pairIndex,
            primary: pair.primary,
            follower: pair.follower,
            epoch: pair.epoch,
            reason: action.reason,
          });
        }
        return false;
      }
    }
  }

  private async assign(
    address: string,
    role: 'primary' | 'follower',
    pair: PairInfo,
    syncRequired: boolean,
  ): Promise<shardV1.StatusResponse__Output | undefined> {
    // Checked again after any directory write of this step: a supervisor deposed meanwhile sends nothing.
    // (The version the order carries is what makes a late one harmless; this only spares the node.)
    if (!this.mayAct()) return undefined;
    try {
      return await this.pool.setRole(
        address,
        {
          role,
          epoch: pair.epoch.toString(),
          // A primary dials its follower where the follower advertised it replicates (a separate network, NAT).
          peer: role === 'primary' ? replicationAddressOf(pair, pair.follower) : pair.primary,
          syncRequired,
          catchUpTimeoutMs: this.settings.catchUpTimeoutMs,
          // The node must be the log we mean, and a primary must hold what was acknowledged.
          nodeId: role === 'primary' ? pair.primaryId : pair.followerId,
          minLastLsn: role === 'primary' ? this.acknowledgedLsnOf(pair).toString() : '0',
          // The directory's version this order derives from: the node refuses it once superseded.
          configVersion: pair.configVersion.toString(),
        },
        this.settings.catchUpTimeoutMs + this.settings.healthTimeoutMs,
      );
    } catch (error) {
      this.logger.warn('role assignment failed', {
        pair: pair.pairIndex,
        node: address,
        role,
        epoch: pair.epoch,
        error: (error as Error).message,
      });
      return undefined;
    }
  }

  private async markInSync(pair: PairInfo): Promise<void> {
    // The primary first starts requiring the follower (and waits until the
    // follower holds its whole log); only then may the directory say in sync.
    const status = await this.assign(pair.primary, 'primary', pair, true);
    if (status === undefined || !status.syncRequired || BigInt(status.epoch) !== pair.epoch || status.followerId !== pair.followerId)
      return;
    const confirmedLsn = BigInt(status.followerAckedLsn);
    await this.directory.updatePair(
      pair.pairIndex,
      {
        inSync: true,
        ackedLsn: confirmedLsn > pair.ackedLsn ? confirmedLsn : pair.ackedLsn,
      },
      asSupervisor,
    );
    this.metrics.pairInSync.set({ pair: String(pair.pairIndex) }, 1);
    this.logger.info('in sync', {
      pair: pair.pairIndex,
      primary: pair.primary,
      follower: pair.follower,
      epoch: pair.epoch,
      lastLsn: status.lastLsn,
    });
  }

  private async markOutOfSync(pair: PairInfo, reason: string, update: PairUpdate = {}): Promise<void> {
    // Directory first: from here on the follower is neither read nor promoted.
    // The floor goes with it: everything the follower confirmed while in sync
    // was acknowledged, and a supervisor after this one, or a primary back on
    // an old copy of its disk with its follower gone, must not go below it.
    const acknowledgedLsn = this.acknowledgedLsnOf(pair);
    const floor = update.ackedLsn === undefined && acknowledgedLsn > pair.ackedLsn ? { ackedLsn: acknowledgedLsn } : {};
    await this.directory.updatePair(pair.pairIndex, { ...update, ...floor, inSync: false }, asSupervisor);
    this.metrics.pairInSync.set({ pair: String(pair.pairIndex) }, 0);
    this.metrics.outOfSync.inc({ pair: String(pair.pairIndex) });
    this.logger.warn('out of sync', { pair: pair.pairIndex, primary: pair.primary, follower: pair.follower, epoch: pair.epoch, reason });
    await this.assign(pair.primary, 'primary', pair, false);
  }

  private async failover(pair: PairInfo, reason: string, deposedId: string): Promise<void> {
    const deposed = pair.primary;
    const promoted = pair.follower;
    const epoch = pair.epoch + 1n;
    // Persisted before anyone is told: a router restart keeps the decision.
    const next = await this.directory.updatePair(
      pair.pairIndex,
      {
        primary: promoted,
        follower: deposed,
        epoch,
        inSync: false,
        primaryId: pair.followerId,
        followerId: deposedId,
      },
      asSupervisor,
    );
    this.metrics.failovers.inc({ pair: String(pair.pairIndex) });
    this.metrics.pairInSync.set({ pair: String(pair.pairIndex) }, 0);
    this.logger.warn('promotion', { pair: pair.pairIndex, promoted, deposed, epoch, reason, silentMs: this.silentForMs(deposed) });
    await this.assign(promoted, 'primary', next, false);
    // Best effort: a deposed primary that is merely paused learns it at once;
    // a dead one is told when it returns (checkPair).
    void this.assign(deposed, 'follower', next, false);
  }
}

function stringified(update: PairUpdate): Record<string, string | boolean> {
  return Object.fromEntries(
    Object.entries(update).map(([key, value]) => [key, typeof value === 'bigint' ? value.toString() : (value as string | boolean)]),
  );
}
