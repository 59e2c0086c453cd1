// This router's presence in the etcd directory: a lease kept alive and the
// key routers/<id> bound to it, whose seenRevision acknowledges announced
// growth (every revision the directory's memory has applied). It tells
// whether the lease can still be vouched for; it never changes the
// directory's memory, and renews only while the directory's watch is up: a
// router that cannot follow the directory must let its presence go.
import { performance } from 'node:perf_hooks';
import type { Etcd3, Namespace } from 'etcd3';
import { ErrorCode, TallyError, etcdCallTimeoutMs, etcdRetryDelayMs, growthActivationMarginMs, type Logger } from '../common/index.ts';

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
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

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
   * Grants a lease and creates the presence key on it, then keeps the lease
   * alive. The key must be absent: a live router with the same id would be
   * taken for this one; a crashed predecessor's lease is waited out (up to
   * a lease TTL and a margin), then FAILED_PRECONDITION.
   */
  async start(): Promise<void> {
    await this.register();
    this.timer = setInterval(() => void this.renew(), Math.max(100, Math.floor(this.options.leaseTtlMs / 6)));
    this.timer.unref();
  }

  /** Why the lease cannot be vouched for now, or undefined when it can. */
  staleReason(): string | undefined {
    if (this.leaseId === undefined) return 'this router has no etcd lease (it is registering again)';
    // Monotonic: a wall-clock step back must not keep a cut-off router fresh.
    const sinceRenewMs = Math.round(performance.now() - this.lastRenewSentMs);
    // Past half the TTL the lease may be close to expiring unseen: other routers may then act without this one.
    if (sinceRenewMs >= this.options.leaseTtlMs / 2) return `no lease keepalive has succeeded for ${sinceRenewMs} ms`;
    if (this.options.appliedRevision() < this.createdRevision) return 'this router is catching up with etcd';
    return undefined;
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
    const leaseId = this.leaseId;
    this.leaseId = undefined;
    if (leaseId === undefined) return;
    try {
      await this.options.client.leaseClient.leaseRevoke({ ID: leaseId }, { deadline: Date.now() + etcdCallTimeoutMs });
    } catch (error) {
      // Not revoked: it expires by itself within the TTL.
      this.options.logger.debug('directory lease revoke failed', { router: this.options.routerId, error: (error as Error).message });
    }
  }

  private async register(): Promise<void> {
    const { client, leaseTtlMs, logger } = this.options;
    const untilMs = Date.now() + this.grantedTtlMs + growthActivationMarginMs;
    const ttlSeconds = Math.ceil(leaseTtlMs / 1_000);
    for (;;) {
      const sentMs = performance.now();
      const deadline = Date.now() + etcdCallTimeoutMs;
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
        return;
      }
      void client.leaseClient.leaseRevoke({ ID: grant.ID }, { deadline: Date.now() + etcdCallTimeoutMs }).catch(() => undefined);
      if (Date.now() >= untilMs)
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
    const sentMs = performance.now();
    try {
      const stream = await this.options.client.leaseClient.leaseKeepAlive({ deadline: Date.now() + this.options.leaseTtlMs / 2 });
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

  /** One write at a time, each of what memory has applied by then. */
  private writeSoon(): void {
    if (this.writing || this.closed || this.leaseId === undefined || this.seenRevision >= this.wantedRevision) return;
    this.writing = true;
    void (async () => {
      try {
        while (!this.closed && this.leaseId !== undefined && this.seenRevision < this.wantedRevision) {
          const seenRevision = this.options.appliedRevision();
          await this.options.client.kv.put(
            { key: this.keyBytes, value: Buffer.from(JSON.stringify({ seenRevision })), lease: this.leaseId },
            { deadline: Date.now() + etcdCallTimeoutMs },
          );
          this.seenRevision = Math.max(this.seenRevision, seenRevision);
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
}
