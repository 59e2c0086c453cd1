// Which router supervises the pairs (health, failover, sync changes): exactly
// one at a time. The embedded directory has one router, always the supervisor;
// with etcd the routers elect one through a lease-bound key. A router must
// never act as supervisor once its lease may have run out on etcd's side.
//
// The etcd protocol (key <prefix>supervisor, value = the holder's router id):
// - Every router holds a lease of --router-lease-ttl-ms and campaigns with one
//   transaction: if the key's create revision is 0 (no key) put it bound to
//   our lease, else read it. The winner holds the key incarnation created at
//   revision R; nobody else can create the key while it exists.
// - The holder leads only while the last keepalive etcd confirmed was SENT
//   less than TTL/2 ago. etcd refreshed the lease after that send, so it can
//   expire it no sooner than send + TTL: a holder cut off from etcd stops
//   acting at least TTL/2 before its key can vanish and another router win.
// - The others watch the key and campaign the moment it is deleted (lease
//   expired or revoked), and once per TTL/supervisorKeepalivesPerTtl in case
//   a watch event was missed.
// - stop() steps down, then revokes the lease: etcd deletes the key with it
//   and the next router takes over at once instead of after a TTL.
//
// Fencing: stepping down bounds when a deposed supervisor stops acting, but a
// process stalled past TTL/2 (GC, a starved CPU) could still wake up and
// write. So every role change in the etcd directory is a transaction that
// also compares the supervisor key's create revision with R (leaderFence(),
// requireSupervisor()): once the key has expired or been taken over, R no
// longer exists and the change is refused, whatever the stalled router
// believes. Nodes refusing stale epochs is the last line behind that.
import { performance } from 'node:perf_hooks';
import { EtcdLeaseInvalidError, type ComparatorBuilder, type Etcd3, type IKeyValue, type Lease, type Watcher } from 'etcd3';
import { ErrorCode, TallyError, deadlineIn } from '../../wire/index.ts';
import { routerLeaseTtlMsMin, supervisorKeepalivesPerTtl, type Logger } from '../../common/index.ts';

export interface SupervisorElection {
  /** True while this router may supervise: act on pairs only while it holds. */
  readonly isLeader: boolean;
  /** Called with true when this router becomes the supervisor and false when it stops being it. */
  onChange(listener: (leader: boolean) => void): void;
  start(): Promise<void>;
  /** Stops supervising (listeners hear false) and hands the role over at once. */
  stop(): Promise<void>;
  /** who holds it now, for tally status */
  readonly leaderId: string | undefined;
}

/** The embedded directory's single router: the supervisor from construction until stop(). */
export class SoleSupervisor implements SupervisorElection {
  private leading = true;
  private readonly listeners: ((leader: boolean) => void)[] = [];

  constructor(private readonly routerId: string) {}

  get isLeader(): boolean {
    return this.leading;
  }

  get leaderId(): string | undefined {
    return this.leading ? this.routerId : undefined;
  }

  onChange(listener: (leader: boolean) => void): void {
    this.listeners.push(listener);
  }

  async start(): Promise<void> {}

  async stop(): Promise<void> {
    if (!this.leading) return;
    this.leading = false;
    for (const listener of this.listeners) listener(false);
  }
}

/**
 * What a role change must carry to be refused once this router is no longer
 * the supervisor: the supervisor key and the create revision of the
 * incarnation this router created. `key` is the full key (with the prefix).
 */
export interface SupervisorFence {
  readonly key: string;
  readonly createRevision: string;
}

/**
 * Adds "the caller still holds the supervisor key" to a transaction:
 * `requireSupervisor(client.if(pairKey, 'Mod', '==', readRevision), fence).then(put...).commit()`.
 * The builder must come from the root client (fence.key is a full key); on a
 * client.namespace(prefix) builder, compare fence.key without the prefix.
 * A failed commit (succeeded: false) may mean either compare failed: re-read
 * the pair, and check election.isLeader before trying again.
 */
export function requireSupervisor(builder: ComparatorBuilder, fence: SupervisorFence): ComparatorBuilder {
  return builder.and(fence.key, 'Create', '==', fence.createRevision);
}

/** The supervisor key under a directory prefix. */
export function supervisorKey(prefix: string): string {
  return `${prefix}supervisor`;
}

/** A monotonic clock: a wall-clock step must not stretch or shrink the step-down margin. */
function nowMs(): number {
  return performance.now();
}

/** Rejects after timeoutMs: an etcd call that never settles must not stall the election's rounds. */
async function withTimeout<T>(promise: Promise<T>, timeoutMs: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took longer than ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export class EtcdSupervisorElection implements SupervisorElection {
  private readonly key: string;
  private readonly ttlSeconds: number;
  /** A holder whose last confirmed keepalive was sent this long ago steps down. */
  private readonly stepDownAfterMs: number;
  private readonly roundIntervalMs: number;
  /** Deadline of one etcd call: a later answer is not waited for (a late keepalive still counts from its send). */
  private readonly callTimeoutMs: number;
  private readonly listeners: ((leader: boolean) => void)[] = [];

  private running = false;
  private lease: Lease | undefined;
  private leaseId: string | undefined;
  /** Monotonic time the last keepalive (or the grant) that etcd answered was sent. */
  private confirmedAtMs = -Infinity;
  /** Create revision of the supervisor key incarnation this router made; undefined when it holds none. */
  private heldRevision: string | undefined;
  /** The published state: listeners have heard it. */
  private leading = false;
  private otherLeaderId: string | undefined;
  private watcher: Watcher | undefined;
  private roundTimer: NodeJS.Timeout | undefined;
  private stepDownTimer: NodeJS.Timeout | undefined;
  private roundRunning = false;
  private roundAgain = false;
  private firstRound: Promise<void> | undefined;
  /** For logging etcd trouble once per outage, not once per round. */
  private etcdFailing = false;

  constructor(
    private readonly client: Etcd3,
    prefix: string,
    private readonly routerId: string,
    private readonly leaseTtlMs: number,
    private readonly logger: Logger,
  ) {
    if (!(leaseTtlMs >= routerLeaseTtlMsMin)) throw new RangeError(`leaseTtlMs must be at least ${routerLeaseTtlMsMin}, got ${leaseTtlMs}`);
    this.key = supervisorKey(prefix);
    // Rounded up: a longer lease on etcd's side only widens the step-down margin (etcd itself lengthens
    // a lease to its minimum, 2 s with default timings: a takeover then takes that long).
    this.ttlSeconds = Math.ceil(leaseTtlMs / 1_000);
    this.stepDownAfterMs = leaseTtlMs / 2;
    this.roundIntervalMs = leaseTtlMs / supervisorKeepalivesPerTtl;
    this.callTimeoutMs = leaseTtlMs / 4;
  }

  get isLeader(): boolean {
    // Also checked here: a step-down timer firing late must not let a caller act in between.
    return this.leading && this.fresh();
  }

  get leaderId(): string | undefined {
    return this.isLeader ? this.routerId : this.otherLeaderId;
  }

  /** The compare a role change must carry; undefined while this router is not the supervisor. */
  leaderFence(): SupervisorFence | undefined {
    if (!this.isLeader || this.heldRevision === undefined) return undefined;
    return { key: this.key, createRevision: this.heldRevision };
  }

  /**
   * The compare every pair change the supervisor makes carries (the etcd
   * directory's pairUpdateFence): it commits only while this router still
   * holds the supervisor key it won. `prefix`: the directory's, which its
   * transactions' keys are relative to.
   */
  pairUpdateFence(prefix: string): (txn: ComparatorBuilder) => void {
    return (txn) => {
      const fence = this.leaderFence();
      if (fence === undefined) throw new TallyError(ErrorCode.failedPrecondition, `router ${this.routerId} is no longer the supervisor`);
      requireSupervisor(txn, { key: fence.key.slice(prefix.length), createRevision: fence.createRevision });
    };
  }

  onChange(listener: (leader: boolean) => void): void {
    this.listeners.push(listener);
  }

  /** Starts campaigning; resolves after the first round, leader or not. etcd being down is not an error: rounds go on. */
  async start(): Promise<void> {
    if (this.running) return;
    this.running = true;
    this.firstRound = undefined;
    this.watch();
    this.roundTimer = setInterval(() => this.kick(), this.roundIntervalMs);
    this.roundTimer.unref();
    this.kick();
    await this.firstRound;
  }

  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    clearInterval(this.roundTimer);
    clearTimeout(this.stepDownTimer);
    // Step down before handing over: never both supervising.
    this.publish();
    const watcher = this.watcher;
    this.watcher = undefined;
    const lease = this.lease;
    this.dropLease();
    await Promise.all([
      watcher === undefined ? undefined : withTimeout(watcher.cancel(), this.callTimeoutMs, 'cancelling the watch').catch(() => undefined),
      // Revoking deletes the key with the lease: the next router campaigns on the delete at once.
      lease === undefined
        ? undefined
        : withTimeout(lease.revoke({ deadline: deadlineIn(this.callTimeoutMs) }), this.callTimeoutMs, 'revoking the lease').catch(
            (error: unknown) =>
              this.logger.warn('supervisor lease not revoked; it expires by itself', {
                error: messageOf(error),
                leaseTtlMs: this.leaseTtlMs,
              }),
          ),
    ]);
  }

  private fresh(): boolean {
    return nowMs() - this.confirmedAtMs < this.stepDownAfterMs;
  }

  /** Runs a round now, or right after the one under way. */
  private kick(): void {
    if (!this.running) return;
    if (this.roundRunning) {
      this.roundAgain = true;
      return;
    }
    this.roundRunning = true;
    const rounds = (async () => {
      try {
        do {
          this.roundAgain = false;
          await this.round();
        } while (this.roundAgain && this.running);
      } finally {
        this.roundRunning = false;
      }
    })();
    this.firstRound ??= rounds;
  }

  /** Keeps the lease alive (or gets one), then checks or takes the key. */
  private async round(): Promise<void> {
    try {
      if (this.lease === undefined) await this.grantLease();
      else await this.keepalive();
      if (this.lease !== undefined && this.running) await this.campaign();
      if (this.etcdFailing) {
        this.etcdFailing = false;
        this.logger.info('supervisor election reaches etcd again', { routerId: this.routerId });
      }
    } catch (error) {
      if (error instanceof EtcdLeaseInvalidError) {
        this.logger.warn('supervisor lease expired on etcd; taking a new one', { routerId: this.routerId, leaseId: this.leaseId });
        this.dropLease();
      } else if (!this.etcdFailing) {
        this.etcdFailing = true;
        this.logger.warn('supervisor election cannot reach etcd; a supervisor steps down within half its lease', {
          routerId: this.routerId,
          error: messageOf(error),
          stepDownAfterMs: this.stepDownAfterMs,
        });
      }
    }
    this.publish();
  }

  private async grantLease(): Promise<void> {
    const sentAtMs = nowMs();
    const lease = this.client.lease(this.ttlSeconds, { autoKeepAlive: false, deadline: deadlineIn(this.callTimeoutMs) });
    let leaseId: string;
    try {
      leaseId = await withTimeout(lease.grant(), this.callTimeoutMs, 'granting the supervisor lease');
    } catch (error) {
      // A grant answered after our timeout leaves a lease with no key; it expires by itself.
      lease.release();
      throw error;
    }
    if (!this.running) {
      void lease.revoke().catch(() => undefined);
      return;
    }
    this.lease = lease;
    this.leaseId = leaseId;
    this.confirmedAtMs = sentAtMs;
  }

  private async keepalive(): Promise<void> {
    const lease = this.lease!;
    const sentAtMs = nowMs();
    // Throws EtcdLeaseInvalidError when etcd answers that the lease is gone.
    await withTimeout(lease.keepaliveOnce({ deadline: deadlineIn(this.callTimeoutMs) }), this.callTimeoutMs, 'a supervisor keepalive');
    if (lease === this.lease) this.confirmedAtMs = Math.max(this.confirmedAtMs, sentAtMs);
  }

  /**
   * One transaction: take the key if there is none, else read who holds it.
   * Run every round, also by the holder: it confirms that the key is still
   * the incarnation this router made, even if a watch event was lost.
   */
  private async campaign(): Promise<void> {
    const leaseId = this.leaseId!;
    const result = await withTimeout(
      this.client
        .if(this.key, 'Create', '==', 0)
        .then(this.client.put(this.key).value(this.routerId).lease(leaseId))
        .else(this.client.get(this.key))
        .options({ deadline: deadlineIn(this.callTimeoutMs) })
        .commit(),
      this.callTimeoutMs,
      'a supervisor campaign',
    );
    if (leaseId !== this.leaseId || !this.running) return;
    if (result.succeeded) {
      if (this.heldRevision !== undefined) this.loseKey('the supervisor key vanished while held');
      this.takeKey(result.header.revision);
      return;
    }
    const holder: IKeyValue | undefined = result.responses[0]?.response_range.kvs[0];
    // The compare failed, so the key existed when the transaction ran.
    if (holder === undefined) throw new Error('supervisor campaign: the key neither absent nor read');
    if (holder.lease === leaseId) {
      // Ours: a campaign answered after its timeout, or etcd came back with our lease alive.
      if (this.heldRevision !== undefined && this.heldRevision !== holder.create_revision) this.loseKey('the supervisor key was remade');
      this.takeKey(holder.create_revision);
      return;
    }
    if (this.heldRevision !== undefined) this.loseKey('another router holds the supervisor key');
    this.otherLeaderId = holder.value.toString();
  }

  private takeKey(createRevision: string): void {
    if (this.heldRevision === createRevision) return;
    this.heldRevision = createRevision;
    this.otherLeaderId = undefined;
    this.logger.info('supervisor key taken', { routerId: this.routerId, createRevision, leaseId: this.leaseId });
  }

  /** Forgets the key and steps down at once. */
  private loseKey(reason: string): void {
    this.logger.warn(reason, { routerId: this.routerId, createRevision: this.heldRevision });
    this.heldRevision = undefined;
    this.publish();
  }

  private dropLease(): void {
    this.lease?.release();
    this.lease = undefined;
    this.leaseId = undefined;
    this.heldRevision = undefined;
    this.confirmedAtMs = -Infinity;
  }

  private watch(): void {
    const watcher = this.client.watch().key(this.key).watcher();
    this.watcher = watcher;
    watcher.on('put', (kv: IKeyValue) => {
      if (kv.lease !== this.leaseId) this.otherLeaderId = kv.value.toString();
    });
    watcher.on('delete', (kv: IKeyValue) => {
      this.otherLeaderId = undefined;
      // A delete after our incarnation was created is the delete of ours.
      if (this.heldRevision !== undefined && BigInt(kv.mod_revision) > BigInt(this.heldRevision))
        this.loseKey('the supervisor key was deleted');
      this.kick();
    });
    // Canceled by etcd (e.g. compaction): the rounds still campaign; a new watch restores the quick takeover.
    watcher.on('error', (error: Error) => {
      this.logger.warn('supervisor watch ended; watching again', { routerId: this.routerId, error: error.message });
      if (this.watcher === watcher && this.running)
        setTimeout(() => this.running && this.watcher === watcher && this.watch(), this.roundIntervalMs);
    });
  }

  /** Tells listeners when leading changes; arms the step-down for the moment the lease may no longer be ours. */
  private publish(): void {
    clearTimeout(this.stepDownTimer);
    const leader = this.running && this.heldRevision !== undefined && this.fresh();
    if (leader) {
      // +1: fire just past the bound, so fresh() is false when it runs.
      this.stepDownTimer = setTimeout(() => this.publish(), this.confirmedAtMs + this.stepDownAfterMs - nowMs() + 1);
      this.stepDownTimer.unref();
    }
    if (leader === this.leading) return;
    this.leading = leader;
    if (leader) this.logger.info('supervising: this router holds the supervisor lease', { routerId: this.routerId, leaseId: this.leaseId });
    else
      this.logger.warn('not supervising any more', {
        routerId: this.routerId,
        sinceConfirmedMs: Math.round(nowMs() - this.confirmedAtMs),
        stopping: !this.running,
      });
    for (const listener of this.listeners) listener(leader);
  }
}
