// The only place roles change. Every healthIntervalMs it asks each node of
// each pair for its status and, one pair at a time, moves the pair between
// states, persisting every decision in the directory before acting on it:
//
//   in sync      primary acknowledges only what the follower has committed;
//                the follower may serve reads and may be promoted.
//   out of sync  primary acknowledges alone; the follower catches up by lsn;
//                it is never read from and never promoted.
//
// Transitions: out of sync -> in sync when the primary reports its follower
// caught up (primary first told to require sync, then the directory says so);
// in sync -> out of sync when the follower stops answering (directory first,
// then the primary is told); failover when an in-sync pair's primary has not
// answered for failoverTimeoutMs: new epoch persisted, follower promoted.
import type { Logger, StatusResponseMsg } from '../common/index.ts';
import type { Directory, PairInfo } from './directory.ts';
import type { NodePool } from './node-pool.ts';
import type { RouterMetrics } from './router-metrics.ts';

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
  status: StatusResponseMsg | undefined;
  error: string;
}

export class PairSupervisor {
  private readonly health = new Map<string, NodeHealth>();
  private readonly busyPairs = new Set<number>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly directory: Directory,
    private readonly pool: NodePool,
    private readonly metrics: RouterMetrics,
    private readonly logger: Logger,
    private readonly settings: SupervisorSettings,
    private readonly now: () => number = Date.now,
  ) {
    const startedMs = now();
    for (const pair of directory.allPairs()) {
      for (const address of [pair.primary, pair.follower]) this.health.set(address, { lastOkMs: startedMs, status: undefined, error: '' });
    }
  }

  start(): void {
    this.timer = setInterval(() => this.tick(), this.settings.healthIntervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** Last known health of a node, for ClusterStatus. */
  healthOf(address: string): NodeHealth | undefined {
    return this.health.get(address);
  }

  tick(): void {
    for (const pair of this.directory.allPairs()) {
      if (this.busyPairs.has(pair.pairIndex)) continue;
      this.busyPairs.add(pair.pairIndex);
      this.checkPair(pair)
        .catch((error: unknown) => this.logger.warn('pair check failed', { pair: pair.pairIndex, error: (error as Error).message }))
        .finally(() => this.busyPairs.delete(pair.pairIndex));
    }
  }

  /** Runs one check of every pair and waits for it (startup, tests). */
  async checkAll(): Promise<void> {
    await Promise.all(
      this.directory.allPairs().map(async (pair) => {
        if (this.busyPairs.has(pair.pairIndex)) return;
        this.busyPairs.add(pair.pairIndex);
        try {
          await this.checkPair(pair);
        } finally {
          this.busyPairs.delete(pair.pairIndex);
        }
      }),
    );
  }

  private async probe(address: string): Promise<StatusResponseMsg | undefined> {
    let health = this.health.get(address);
    if (health === undefined) this.health.set(address, (health = { lastOkMs: this.now(), status: undefined, error: '' }));
    try {
      const status = await this.pool.status(address, this.settings.healthTimeoutMs);
      if (!status.ready) throw new Error('not ready');
      health.lastOkMs = this.now();
      health.status = status;
      health.error = '';
      return status;
    } catch (error) {
      health.status = undefined;
      health.error = (error as Error).message;
      return undefined;
    }
  }

  private silentForMs(address: string): number {
    return this.now() - (this.health.get(address)?.lastOkMs ?? this.now());
  }

  private async checkPair(pair: PairInfo): Promise<void> {
    const [primary, follower] = await Promise.all([this.probe(pair.primary), this.probe(pair.follower)]);

    if (primary === undefined) {
      if (pair.inSync && follower !== undefined && this.silentForMs(pair.primary) >= this.settings.failoverTimeoutMs) {
        await this.failover(pair);
      }
      return;
    }

    // The directory says in sync but the primary is not requiring its
    // follower (a delayed or lost SetRole): it may have acknowledged alone,
    // so the follower is no longer known to hold everything. Record that
    // first; the pair earns in sync again through markInSync.
    if (pair.inSync && primary.role === 'primary' && BigInt(primary.epoch) === pair.epoch && !primary.syncRequired) {
      await this.markOutOfSync(pair, 'primary was not requiring its follower');
      return;
    }
    // Bring each node in line with the directory (a restarted or deposed node, a missed push).
    const wantsSync = pair.inSync;
    if (primary.role !== 'primary' || BigInt(primary.epoch) !== pair.epoch || primary.peer !== pair.follower || primary.syncRequired !== wantsSync) {
      if (BigInt(primary.epoch) > pair.epoch) {
        this.logger.error('node is at a newer epoch than the directory', { pair: pair.pairIndex, node: pair.primary, nodeEpoch: primary.epoch, epoch: pair.epoch });
        return;
      }
      await this.assign(pair.primary, 'primary', pair, wantsSync);
    }
    if (follower !== undefined && (follower.role !== 'follower' || BigInt(follower.epoch) !== pair.epoch || follower.peer !== pair.primary)) {
      await this.assign(pair.follower, 'follower', pair, false);
    }

    if (pair.inSync) {
      const lagMs = Number(primary.replicationLagMs);
      if (this.silentForMs(pair.follower) >= this.settings.followerTimeoutMs || lagMs >= this.settings.followerTimeoutMs) {
        await this.markOutOfSync(pair, follower === undefined ? 'follower unreachable' : `follower lagging ${lagMs} ms`);
      }
    } else if (follower !== undefined && primary.followerCaughtUp && follower.role === 'follower' && BigInt(follower.epoch) === pair.epoch) {
      await this.markInSync(pair);
    }
  }

  private async assign(address: string, role: 'primary' | 'follower', pair: PairInfo, syncRequired: boolean): Promise<StatusResponseMsg | undefined> {
    try {
      return await this.pool.setRole(
        address,
        { role, epoch: pair.epoch.toString(), peer: role === 'primary' ? pair.follower : pair.primary, syncRequired, catchUpTimeoutMs: this.settings.catchUpTimeoutMs },
        this.settings.catchUpTimeoutMs + this.settings.healthTimeoutMs,
      );
    } catch (error) {
      this.logger.warn('role assignment failed', { pair: pair.pairIndex, node: address, role, epoch: pair.epoch, error: (error as Error).message });
      return undefined;
    }
  }

  private async markInSync(pair: PairInfo): Promise<void> {
    // The primary first starts requiring the follower (and waits until the
    // follower holds its whole log); only then may the directory say in sync.
    const status = await this.assign(pair.primary, 'primary', pair, true);
    if (status === undefined || !status.syncRequired || BigInt(status.epoch) !== pair.epoch) return;
    this.directory.updatePair(pair.pairIndex, { primary: pair.primary, follower: pair.follower, epoch: pair.epoch, inSync: true });
    this.metrics.pairInSync.set({ pair: String(pair.pairIndex) }, 1);
    this.logger.info('in sync', { pair: pair.pairIndex, primary: pair.primary, follower: pair.follower, epoch: pair.epoch, lastLsn: status.lastLsn });
  }

  private async markOutOfSync(pair: PairInfo, reason: string): Promise<void> {
    // Directory first: from here on the follower is neither read nor promoted.
    this.directory.updatePair(pair.pairIndex, { primary: pair.primary, follower: pair.follower, epoch: pair.epoch, inSync: false });
    this.metrics.pairInSync.set({ pair: String(pair.pairIndex) }, 0);
    this.metrics.outOfSync.inc({ pair: String(pair.pairIndex) });
    this.logger.warn('out of sync', { pair: pair.pairIndex, primary: pair.primary, follower: pair.follower, epoch: pair.epoch, reason });
    await this.assign(pair.primary, 'primary', pair, false);
  }

  private async failover(pair: PairInfo): Promise<void> {
    const deposed = pair.primary;
    const promoted = pair.follower;
    const epoch = pair.epoch + 1n;
    // Persisted before anyone is told: a router restart keeps the decision.
    const next = this.directory.updatePair(pair.pairIndex, { primary: promoted, follower: deposed, epoch, inSync: false });
    this.metrics.failovers.inc({ pair: String(pair.pairIndex) });
    this.metrics.pairInSync.set({ pair: String(pair.pairIndex) }, 0);
    this.logger.warn('promotion', { pair: pair.pairIndex, promoted, deposed, epoch, silentMs: this.silentForMs(deposed) });
    await this.assign(promoted, 'primary', next, false);
    // Best effort: a deposed primary that is merely paused learns it at once;
    // a dead one is told when it returns (checkPair).
    void this.assign(deposed, 'follower', next, false);
  }
}
