// This router's presence in the etcd directory: a lease kept alive and the
// key routers/<id> bound to it, whose seenRevision acknowledges announced
// growth (every revision the directory's memory has applied). It tells
// whether the lease can still be vouched for, and whether memory can be
// proven current (see "Proof of currency" below); it never changes the
// directory's memory, and renews only while the directory's watch is up: a
// router that cannot follow the directory must let its presence go.
//
// Proof of currency. A live lease and a connected watch do not show that
// the watch keeps up: a watch lagging behind etcd (a slow or partitioned
// member, a starved process) would let this router serve exact reads from
// an old directory while another router, its acknowledgement wait given up,
// acts on a change this one has not applied. So every presence write
// (register, acknowledgements, and a heartbeat every lease TTL /
// currencyProofsPerLeaseTtl) is a proof: etcd gives it a revision R greater
// than that of every change committed before it was sent, and the watch
// delivers the prefix's events in revision order, so once memory has
// applied R it holds every such change. The router vouches for its copy
// only while memory has applied a proof sent less than currencyBoundMs
// (the lease TTL asked) ago on the monotonic clock.
//
// Why that suffices: a router that changes the directory and then waits for
// every live router to acknowledge gives up no sooner than
// acknowledgementWaitMs = granted TTL + growthActivationMarginMs after the
// change committed (its timer starts once the commit came back). Let t be
// any moment at or after the give-up, and suppose this router vouches at t:
// its proof was sent after t − currencyBoundMs ≥ commit + (granted TTL −
// asked TTL) + growthActivationMarginMs > commit, so its R is past the
// change and memory has applied it. Hence every change whose wait gave up
// is seen, or refused, by every router still serving. The margin
// (growthActivationMarginMs, 2 s) absorbs the two monotonic clocks' rate
// difference; nothing here compares clocks of two machines. Writes rather
// than linearizable reads with watch progress requests: etcd before 3.4.25
// and 3.5.8 can send a requested progress notification ahead of events
// still queued on the stream (https://github.com/etcd-io/etcd/issues/15220), which would prove a lagging
// watch current; a write's own event cannot overtake the events before it.
// The cost: each router writes its presence key about every lease TTL / 3
// (about 0.6 writes/s at the default 5 s), so etcd's history grows by that
// and must be compacted (etcd --auto-compaction-retention), as any etcd
// written to must be.
import assert from 'node:assert';
import type { Etcd3, Namespace } from 'etcd3';
import { ErrorCode, TallyError, deadlineIn, monotonicNowMs } from '../../../wire/index.ts';
import {
  currencyProofsPerLeaseTtl,
  etcdCallTimeoutMs,
  etcdRetryDelayMs,
  growthActivationMarginMs,
  type Logger,
} from '../../../common/index.ts';

export interface PresenceOptions {
  client: Etcd3;
  /** The directory's prefix: the presence key is <prefix>routers/<routerId>. */
  prefix: string;
  routerId: string;
  leaseTtlMs: number;
  logger: Logger;
  /** The revision the directory's memory has applied. */
  appliedRevision: () => number;
  /** False while the directory's watch is down; undefined before it starts (the first read is under way). */
  watchConnected: () => boolean | undefined;
  /**
   * A presence write committed half a currency bound ago has not come back
   * through the watch, which says it is connected: its stream may be dead
   * without knowing it (a silently dropped connection to one etcd member).
   * The directory opens it again; freshness does not wait for this.
   */
  watchStalled?: (reason: string) => void;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Proofs of currency whose write memory has not applied yet, kept at most (the oldest are dropped: only a proof is lost). */
const pendingProofsMax = 16;

export class RouterPresence {
  private readonly ns: Namespace;
  private readonly key: string;
  private readonly keyBytes: Buffer;
  private leaseId: string | undefined;
  /**
   * How long this router's presence outlives it: the TTL etcd granted,
   * which may be longer than asked (etcd's minimum is about 2 s).
   */
  private grantedTtlMs: number;
  /** Real time the last successful keepalive (or the grant) was sent: etcd's expiry is at least this plus the TTL. */
  private lastRenewSentMs = 0;
  /** Revision of the presence key's creation: the directory is fresh only once it has applied it. */
  private createdRevision = Number.POSITIVE_INFINITY;
  /** The seenRevision the key holds, and the one announcements applied ask for. */
  private seenRevision = 0;
  private wantedRevision = 0;
  private writing = false;
  private renewing = false;
  private reregistering = false;
  private closed = false;
  private timer: NodeJS.Timeout | undefined;
  /** Presence writes whose revision memory has not applied yet, oldest first: revision and monotonic time sent. */
  private readonly pendingProofs: Array<{ revision: number; sentMs: number }> = [];
  /** Monotonic time the newest presence write that memory has applied was sent: the age of the proof of currency. */
  private provenSentMs = Number.NEGATIVE_INFINITY;
  /** A heartbeat is due: the next presence write goes out even if there is nothing to acknowledge. */
  private proofWanted = false;
  private proofTimer: NodeJS.Timeout | undefined;

  constructor(private readonly options: PresenceOptions) {
    this.ns = options.client.namespace(options.prefix);
    this.key = `routers/${options.routerId}`;
    this.keyBytes = Buffer.from(options.prefix + this.key, 'utf8');
    this.grantedTtlMs = options.leaseTtlMs;
  }

  /** How long a dead router's presence may hold growth back: the lease etcd granted. */
  get leaseExpiryMs(): number {
    return this.grantedTtlMs;
  }

  /**
   * How long a change waits for every live router to acknowledge it before
   * giving up (the change stands): a dead router's lease expires within it,
   * and a live one that has not applied the change stops vouching for its
   * copy within it (currencyBoundMs is below it; see the file's opening).
   */
  get acknowledgementWaitMs(): number {
    return this.grantedTtlMs + growthActivationMarginMs;
  }

  /** The oldest a proof of currency may be while this router vouches for its copy: the lease TTL asked. */
  get currencyBoundMs(): number {
    return this.options.leaseTtlMs;
  }

  /**
   * Grants a lease and creates the presence key on it, then keeps the lease
   * alive. The key must be absent: a live router with the same id would be
   * taken for this one; a crashed predecessor's lease is waited out (up to
   * a lease TTL and a margin), then FAILED_PRECONDITION.
   */
  async start(): Promise<void> {
    await this.register();
    this.timer = setInterval(() => void this.renew(), Math.max(100, Math.floor(this.options.leaseTtlMs / 6)));
    this.timer.unref();
    this.proofTimer = setInterval(() => this.proveSoon(), Math.floor(this.currencyBoundMs / currencyProofsPerLeaseTtl));
    this.proofTimer.unref();
  }

  /** Why the lease cannot be vouched for now, or undefined when it can. */
  staleReason(): string | undefined {
    if (this.leaseId === undefined) return 'this router has no etcd lease (it is registering again)';
    // Monotonic: a wall-clock step back must not keep a cut-off router fresh.
    const sinceRenewMs = Math.round(monotonicNowMs() - this.lastRenewSentMs);
    // Past half the TTL the lease may be close to expiring unseen: other routers may then act without this one.
    if (sinceRenewMs >= this.options.leaseTtlMs / 2) return `no lease keepalive has succeeded for ${sinceRenewMs} ms`;
    if (this.options.appliedRevision() < this.createdRevision) return 'this router is catching up with etcd';
    return this.currencyReason();
  }

  /** Why memory cannot be proven current now (see "Proof of currency"), or undefined when it can. */
  private currencyReason(): string | undefined {
    const appliedRevision = this.options.appliedRevision();
    while (this.pendingProofs.length > 0 && this.pendingProofs[0]!.revision <= appliedRevision) {
      this.provenSentMs = Math.max(this.provenSentMs, this.pendingProofs.shift()!.sentMs);
    }
    const ageMs = monotonicNowMs() - this.provenSentMs;
    if (ageMs < this.currencyBoundMs) return undefined;
    const waiting = this.pendingProofs[this.pendingProofs.length - 1];
    const behind = waiting === undefined ? 'no presence write has succeeded' : `etcd was at revision ${waiting.revision}`;
    return (
      `its watch has applied revision ${appliedRevision} and no presence write of the last ${this.currencyBoundMs} ms has come back ` +
      `through it (${behind}): the watch may be lagging behind etcd`
    );
  }

  /** Tells the directory when its connected watch has not brought back a committed presence write in half a bound. */
  private checkWatchProgress(): void {
    this.currencyReason();
    const oldest = this.pendingProofs[0];
    if (oldest === undefined) return;
    const waitedMs = monotonicNowMs() - oldest.sentMs;
    if (waitedMs < this.currencyBoundMs / 2) return;
    // Once per stall: the reopened watch resumes from its last event, and the next proofs are fresh ones.
    this.pendingProofs.length = 0;
    this.options.watchStalled?.(
      `presence write at revision ${oldest.revision} not seen through the watch after ${Math.round(waitedMs)} ms (applied ${this.options.appliedRevision()})`,
    );
  }

  /** A presence write went out at `sentMs` (monotonic) and etcd committed it at `revision`. */
  private recordProof(revision: number, sentMs: number): void {
    assert(Number.isSafeInteger(revision) && revision > 0, `proof revision ${revision}`);
    // Revisions of one router's writes rise with their send times (one write at a time).
    const last = this.pendingProofs[this.pendingProofs.length - 1];
    if (last !== undefined && last.revision >= revision) return;
    this.pendingProofs.push({ revision, sentMs });
    if (this.pendingProofs.length > pendingProofsMax) this.pendingProofs.shift();
  }

  /** A heartbeat: a presence write, whose coming back through the watch proves memory current. */
  private proveSoon(): void {
    if (this.closed || this.options.watchConnected() === false) return;
    this.checkWatchProgress();
    this.proofWanted = true;
    this.writeSoon();
  }

  /** Moves seenRevision to what memory has applied, once memory holds `revision` (an announcement). */
  acknowledge(revision: number): void {
    if (revision > this.wantedRevision) this.wantedRevision = revision;
    this.writeSoon();
  }

  /** The watch is back: renew now rather than at the next tick. */
  renewSoon(): void {
    void this.renew();
  }

  /** Stops the keepalive and revokes the lease: the presence key goes at once. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer !== undefined) clearInterval(this.timer);
    if (this.proofTimer !== undefined) clearInterval(this.proofTimer);
    const leaseId = this.leaseId;
    this.leaseId = undefined;
    if (leaseId === undefined) return;
    try {
      await this.options.client.leaseClient.leaseRevoke({ ID: leaseId }, { deadline: deadlineIn(etcdCallTimeoutMs) });
    } catch (error) {
      // Not revoked: it expires by itself within the TTL.
      this.options.logger.debug('directory lease revoke failed', { router: this.options.routerId, error: (error as Error).message });
    }
  }

  private async register(): Promise<void> {
    const { client, leaseTtlMs, logger } = this.options;
    const untilMs = monotonicNowMs() + this.grantedTtlMs + growthActivationMarginMs;
    const ttlSeconds = Math.ceil(leaseTtlMs / 1_000);
    for (;;) {
      const sentMs = monotonicNowMs();
      const deadline = deadlineIn(etcdCallTimeoutMs);
      const grant = await client.leaseClient.leaseGrant({ TTL: ttlSeconds }, { deadline });
      if (Number(grant.TTL) * 1_000 > this.grantedTtlMs) {
        logger.info('etcd granted a longer router lease than asked', { askedSeconds: ttlSeconds, grantedSeconds: grant.TTL });
        this.grantedTtlMs = Number(grant.TTL) * 1_000;
      }
      const seenRevision = this.options.appliedRevision();
      const response = await this.ns
        .if(this.key, 'Create', '==', 0)
        .then({ request_put: { key: this.keyBytes, value: Buffer.from(JSON.stringify({ seenRevision })), lease: grant.ID } })
        .options({ deadline })
        .commit();
      if (response.succeeded) {
        this.leaseId = grant.ID;
        this.lastRenewSentMs = sentMs;
        this.createdRevision = Number(response.header.revision);
        this.seenRevision = seenRevision;
        this.recordProof(this.createdRevision, sentMs);
        return;
      }
      void client.leaseClient.leaseRevoke({ ID: grant.ID }, { deadline: deadlineIn(etcdCallTimeoutMs) }).catch(() => undefined);
      if (monotonicNowMs() >= untilMs)
        throw new TallyError(
          ErrorCode.failedPrecondition,
          `router id ${this.options.routerId} is held by a live router (etcd key ${this.options.prefix}${this.key}): give each router its own --router-id`,
        );
      await sleep(etcdRetryDelayMs);
    }
  }

  /** One keepalive, only while the watch is connected. */
  private async renew(): Promise<void> {
    const leaseId = this.leaseId;
    if (this.renewing || this.closed || leaseId === undefined || this.options.watchConnected() === false) return;
    this.renewing = true;
    const sentMs = monotonicNowMs();
    try {
      const stream = await this.options.client.leaseClient.leaseKeepAlive({ deadline: deadlineIn(this.options.leaseTtlMs / 2) });
      let ttlSeconds: number;
      try {
        ttlSeconds = await new Promise<number>((resolve, reject) => {
          stream.on('data', (response) => resolve(Number(response.TTL)));
          stream.on('error', reject);
          stream.on('end', () => reject(new Error('the keepalive stream ended')));
          stream.write({ ID: leaseId });
        });
      } finally {
        stream.end();
      }
      if (leaseId !== this.leaseId) return;
      if (ttlSeconds <= 0) this.lost('etcd says the lease has expired');
      else this.lastRenewSentMs = Math.max(this.lastRenewSentMs, sentMs);
    } catch (error) {
      // Not renewed: freshness lapses by itself at half the TTL.
      this.options.logger.debug('directory lease keepalive failed', { router: this.options.routerId, error: (error as Error).message });
    } finally {
      this.renewing = false;
    }
  }

  /** The lease expired (etcd says so): register again, with a new lease, until it works or the directory closes. */
  private lost(reason: string): void {
    if (this.closed || this.reregistering) return;
    const { logger, routerId } = this.options;
    logger.warn('directory presence lost: registering again', { router: routerId, reason });
    this.leaseId = undefined;
    this.createdRevision = Number.POSITIVE_INFINITY;
    this.reregistering = true;
    void (async () => {
      while (!this.closed) {
        try {
          await this.register();
          logger.info('directory presence registered again', { router: routerId });
          break;
        } catch (error) {
          logger.debug('directory registration failed', { router: routerId, error: (error as Error).message });
          await sleep(etcdRetryDelayMs);
        }
      }
      this.reregistering = false;
      this.writeSoon();
    })();
  }

  /** One write at a time, each of what memory has applied by then; each a proof of currency. */
  private writeSoon(): void {
    if (this.writing || this.closed || this.leaseId === undefined || !this.writeWanted()) return;
    this.writing = true;
    void (async () => {
      try {
        while (!this.closed && this.leaseId !== undefined && this.writeWanted()) {
          this.proofWanted = false;
          const seenRevision = this.options.appliedRevision();
          const sentMs = monotonicNowMs();
          const response = await this.options.client.kv.put(
            { key: this.keyBytes, value: Buffer.from(JSON.stringify({ seenRevision })), lease: this.leaseId },
            { deadline: deadlineIn(etcdCallTimeoutMs) },
          );
          this.seenRevision = Math.max(this.seenRevision, seenRevision);
          this.recordProof(Number(response.header.revision), sentMs);
        }
        this.writing = false;
      } catch (error) {
        const message = (error as Error).message;
        this.options.logger.debug('directory presence write failed', { router: this.options.routerId, error: message });
        if (/lease not found|expired or revoked/.test(message)) this.lost(message);
        await sleep(etcdRetryDelayMs);
        this.writing = false;
        this.writeSoon();
      }
    })();
  }

  private writeWanted(): boolean {
    return this.proofWanted || this.seenRevision < this.wantedRevision;
  }
}
