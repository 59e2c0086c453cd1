// What runs on the elected supervisor alone: pair supervision (roles,
// failover, sync) and the duties handed in (the drops and clears owed to
// nodes; TTL expiry where it is supported). They start when this router
// becomes the supervisor and stop when it stops being it. The embedded
// directory's router is always the supervisor.
import type { Logger } from '../../common/index.ts';
import type { RouterMetrics } from '../metrics/index.ts';
import type { PairSupervisor } from './pair-supervisor.ts';
import type { SupervisorElection } from './supervisor-election.ts';

/** A piece of work that must run on one router at a time. */
export interface SupervisorDuty {
  start(): void;
  stop(): void;
}

export class SupervisorDuties {
  private supervising = false;

  constructor(
    private readonly election: SupervisorElection,
    private readonly supervisor: PairSupervisor,
    private readonly duties: readonly SupervisorDuty[],
    private readonly metrics: RouterMetrics,
    private readonly logger: Logger,
    private readonly routerId: string,
  ) {
    supervisor.mayAct = () => election.isLeader;
    election.onChange((leader) => {
      this.follow(leader).catch((error: unknown) => logger.error('supervision change failed', { error: (error as Error).message }));
    });
  }

  /** A node did not answer, or its pair was just added: the supervisor checks the pair now (on another router a no-op: the supervisor's own paths notice). */
  checkPairOf(address: string): void {
    if (this.election.isLeader) this.supervisor.nudge(address);
  }

  /** Starts campaigning, then supervises if elected. */
  async start(): Promise<void> {
    await this.election.start();
    await this.follow(this.election.isLeader);
  }

  /** Hands supervision over at once (etcd: the lease is revoked) rather than after a TTL, and stops every duty. */
  async stop(): Promise<void> {
    await this.election.stop();
    this.supervising = false;
    this.supervisor.stop();
    for (const duty of this.duties) duty.stop();
  }

  private async follow(leader: boolean): Promise<void> {
    this.metrics.supervisor.set(leader ? 1 : 0);
    if (leader === this.supervising) return;
    this.supervising = leader;
    if (leader) {
      this.logger.info('supervising', { router: this.routerId });
      // Tell every reachable node its role before acting on it; the supervisor keeps it so.
      // Whatever the first check met, the duties start (unless the lease went meanwhile):
      // a supervisor that believes it supervises must never be left with no ticker.
      try {
        await this.supervisor.checkAll();
      } catch (error) {
        this.logger.warn('first pair check failed; the ticker checks again', { error: (error as Error).message });
      }
      if (!this.supervising) return;
      this.supervisor.start();
      for (const duty of this.duties) duty.start();
    } else {
      this.logger.warn('not supervising', { router: this.routerId, supervisor: this.election.leaderId ?? '' });
      this.supervisor.stop();
      for (const duty of this.duties) duty.stop();
    }
  }
}
