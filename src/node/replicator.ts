// Primary side of replication: ships the log to the pair's follower in
// batches, in lsn order, one AppendEntries in flight at a time, and tells
// group commit when the follower has committed an lsn. It never decides on
// its own to stop waiting for the follower: only the router may (SetRole with
// syncRequired=false), so a follower it can't reach is never silently dropped.
import { credentials, status, type ServiceError, type CallOptions, type requestCallback, type Client, type ChannelCredentials } from '@grpc/grpc-js';
import { ErrorCode, TallyError, ShardNodeClient, toWireInt64, nodeCallBytesMax, clientChannelOptions, type AppendEntriesRequestMsg, type AppendEntriesResponseMsg, type LogEntryWire } from '../common/index.ts';
import type { ShardLog, StoredEntry } from './shard-log.ts';
import type { RoleState } from './node-role.ts';

interface AppendRpc extends Client {
  AppendEntries(request: AppendEntriesRequestMsg, options: CallOptions, callback: requestCallback<AppendEntriesResponseMsg>): void;
}

interface Waiter {
  lsn: bigint;
  resolve: () => void;
  reject: (error: TallyError) => void;
  timer: NodeJS.Timeout;
}

export interface ReplicatorSettings {
  batchEntriesMax: number;
  callTimeoutMs: number;
  retryDelayMs: number;
  /** Mutual TLS to the follower when the cluster runs TLS. */
  channelCredentials?: ChannelCredentials;
}

export interface ReplicationStatus {
  ackedLsn: bigint;
  caughtUp: boolean;
  lastError: string;
  lagMs: number;
}

export class Replicator {
  private client: AppendRpc | undefined;
  private clientPeer = '';
  /** What the follower last told us; undefined until this session's first answer. */
  private followerLastLsn: bigint | undefined;
  private followerLastEpoch = 0n;
  private ackedLsn = 0n;
  private inFlight = false;
  private retryTimer: NodeJS.Timeout | undefined;
  private waiters: Waiter[] = [];
  private lastError = '';
  /** Commits not yet confirmed, oldest first: the lag is the age of the first. */
  private unconfirmed: { lsn: bigint; atMs: number }[] = [];
  private stopped = false;

  constructor(
    private readonly log: ShardLog,
    private readonly role: () => RoleState,
    private readonly settings: ReplicatorSettings,
    private readonly onAcked: (lagEntries: bigint) => void = () => undefined,
  ) {}

  /** The router changed our role, epoch or peer: start a new session. */
  onRoleChange(): void {
    const role = this.role();
    this.followerLastLsn = undefined;
    this.ackedLsn = 0n;
    this.unconfirmed = [];
    if (role.role !== 'primary') this.rejectAll(new TallyError(ErrorCode.unavailable, 'no longer primary'));
    if (this.clientPeer !== role.peer) {
      this.client?.close();
      this.client = undefined;
      this.clientPeer = role.peer;
    }
    this.kick();
  }

  /** A local commit reached lsn: ship it. */
  onCommit(lsn: bigint): void {
    // Bounded: one entry per commit; a follower away for long is measured by its oldest.
    if (this.unconfirmed.length < 100_000) this.unconfirmed.push({ lsn, atMs: Date.now() });
    this.kick();
  }

  /** Resolves once the follower has committed everything up to lsn; rejects after timeoutMs. */
  waitForAck(lsn: bigint, timeoutMs: number): Promise<void> {
    if (this.followerLastLsn !== undefined && this.ackedLsn >= lsn) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        lsn,
        resolve,
        reject,
        timer: setTimeout(() => {
          this.waiters = this.waiters.filter((candidate) => candidate !== waiter);
          reject(new TallyError(ErrorCode.unavailable, `follower did not confirm lsn ${lsn} within ${timeoutMs} ms${this.lastError ? ` (${this.lastError})` : ''}`));
        }, timeoutMs),
      };
      this.waiters.push(waiter);
      this.kick();
    });
  }

  status(): ReplicationStatus {
    const caughtUp = this.followerLastLsn !== undefined && this.ackedLsn >= this.log.lastLsn;
    const oldest = this.unconfirmed[0];
    return { ackedLsn: this.ackedLsn, caughtUp, lastError: this.lastError, lagMs: caughtUp || oldest === undefined ? 0 : Date.now() - oldest.atMs };
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    this.rejectAll(new TallyError(ErrorCode.unavailable, 'node is shutting down'));
    this.client?.close();
  }

  private rejectAll(error: TallyError): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const waiter of waiters) {
      clearTimeout(waiter.timer);
      waiter.reject(error);
    }
  }

  private resolveUpTo(lsn: bigint): void {
    // Waiters are not in lsn order: a flush of duplicates waits on an older original.
    const waiting: Waiter[] = [];
    for (const waiter of this.waiters) {
      if (waiter.lsn <= lsn) {
        clearTimeout(waiter.timer);
        waiter.resolve();
      } else {
        waiting.push(waiter);
      }
    }
    this.waiters = waiting;
  }

  private kick(): void {
    const role = this.role();
    if (this.stopped || this.inFlight || this.retryTimer !== undefined || role.role !== 'primary' || role.peer === '') return;
    const request = this.nextRequest(role);
    if (request === undefined) return;
    this.send(request, role);
  }

  /** The next AppendEntries, or undefined when the follower has everything. */
  private nextRequest(role: RoleState): AppendEntriesRequestMsg | undefined {
    const base = { epoch: role.epoch.toString(), truncate: false, truncateAfterLsn: '0', entries: [] };
    // First contact in this session: an empty append, answered with the follower's position.
    if (this.followerLastLsn === undefined) return base;
    let fromLsn = this.followerLastLsn + 1n;
    let truncate = false;
    // The follower holds entries written by an older epoch past the point
    // where this epoch began: a deposed primary's tail that was never
    // acknowledged. It drops them and takes ours instead.
    if (this.followerLastEpoch < role.epoch && this.followerLastLsn > role.epochStartLsn) {
      truncate = true;
      fromLsn = role.epochStartLsn + 1n;
    } else if (this.followerLastLsn > this.log.lastLsn) {
      this.lastError = `follower is at lsn ${this.followerLastLsn}, past this primary's ${this.log.lastLsn}`;
      return undefined;
    }
    if (!truncate && fromLsn > this.log.lastLsn) return undefined;
    let entries;
    try {
      entries = this.log.readFrom(fromLsn, this.settings.batchEntriesMax);
    } catch (error) {
      // The follower is behind this log's checkpoint: the log alone cannot bring it level.
      this.lastError = `follower needs entries from lsn ${fromLsn}: ${(error as Error).message}`;
      return undefined;
    }
    // Bounded in bytes as well as entries: rows with sketch registers are large.
    let sizeBytes = 0;
    const fitting = entries.findIndex((entry) => (sizeBytes += entryWireBytes(entry)) > nodeCallBytesMax);
    if (fitting >= 0) entries = entries.slice(0, Math.max(1, fitting));
    return {
      ...base,
      truncate,
      truncateAfterLsn: (fromLsn - 1n).toString(),
      entries: entries.map((entry) => {
        // Numbers where exact: cheaper to encode than decimal strings.
        const message: LogEntryWire = {
          lsn: toWireInt64(entry.lsn),
          epoch: toWireInt64(entry.epoch),
          shardId: entry.shardId,
          amount: toWireInt64(entry.amount),
          idempotencyKey: entry.idempotencyKey,
          fenceShardCount: entry.fenceShardCount,
          atMs: entry.atMs,
        };
        // Only what the kind needs: every field set costs encoding, even a zero.
        if (entry.kind !== undefined) message.kind = entry.kind;
        if (entry.member !== undefined) message.member = entry.member.toString();
        if (entry.payload !== undefined) message.payload = entry.payload;
        return message;
      }),
    };
  }

  private rpc(peer: string): AppendRpc {
    if (this.client === undefined || this.clientPeer !== peer) {
      this.client?.close();
      this.client = new ShardNodeClient(peer, this.settings.channelCredentials ?? credentials.createInsecure(), clientChannelOptions) as unknown as AppendRpc;
      this.clientPeer = peer;
    }
    return this.client;
  }

  private send(request: AppendEntriesRequestMsg, role: RoleState): void {
    this.inFlight = true;
    const sentEpoch = role.epoch;
    this.rpc(role.peer).AppendEntries(request, { deadline: Date.now() + this.settings.callTimeoutMs }, (error: ServiceError | null, response?: AppendEntriesResponseMsg) => {
      this.inFlight = false;
      const current = this.role();
      if (current.epoch !== sentEpoch || current.role !== 'primary') {
        this.kick();
        return;
      }
      if (error || response === undefined) {
        this.lastError = error ? `${status[error.code] ?? error.code}: ${error.details}` : 'empty response';
        this.followerLastLsn = undefined;
        if (error?.code === status.FAILED_PRECONDITION) {
          // The follower knows a newer epoch: we have been deposed. Nothing
          // waiting here may be acknowledged.
          // (UNAVAILABLE, not FAILED_PRECONDITION: these entries are committed
          // here, so to the caller their outcome is unknown.)
          this.rejectAll(new TallyError(ErrorCode.unavailable, `deposed: ${error.details}`));
        }
        this.retryLater();
        return;
      }
      this.followerLastLsn = BigInt(response.lastLsn);
      this.followerLastEpoch = BigInt(response.lastEpoch);
      if (response.ok) this.confirm(this.followerLastLsn, current);
      this.lastError = '';
      setImmediate(() => this.kick());
    });
  }

  /** The follower's log now matches ours up to lsn. */
  private confirm(lsn: bigint, role: RoleState): void {
    // An answer to a probe only proves a match when the follower's tail is ours.
    // Folded entries are gone, but only what a follower had confirmed is ever
    // folded, so a follower at or below the checkpoint holds our prefix.
    const folded = lsn <= this.log.checkpointLsn;
    const ownEpochAtLsn = lsn === 0n || folded ? this.followerLastEpoch : this.log.epochAt(lsn);
    const divergent = this.followerLastEpoch < role.epoch && lsn > role.epochStartLsn;
    if (divergent || ownEpochAtLsn !== this.followerLastEpoch) return;
    if (lsn > this.ackedLsn) this.ackedLsn = lsn;
    let confirmed = 0;
    while (confirmed < this.unconfirmed.length && this.unconfirmed[confirmed]!.lsn <= this.ackedLsn) confirmed++;
    if (confirmed > 0) this.unconfirmed.splice(0, confirmed);
    this.onAcked(this.log.lastLsn - this.ackedLsn);
    this.resolveUpTo(this.ackedLsn);
  }

  private retryLater(): void {
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.kick();
    }, this.settings.retryDelayMs);
    this.retryTimer.unref();
  }
}

/** An upper estimate of one entry's encoded size. */
function entryWireBytes(entry: StoredEntry): number {
  return 64 + entry.idempotencyKey.length + (entry.payload?.length ?? 0);
}
