// Primary side of replication: ships the log to the pair's follower in
// frames on one long-lived ReplicateStream, in lsn order, several in flight
// (bounded by frames and bytes) while the follower's log matches ours, and
// tells group commit when the follower has committed an lsn. A frame carries
// the commit records and rows as this log stored them (commit-wire.ts): the
// commits just written are shipped from memory as those bytes (bounded); the
// log is read back only for a follower further behind than memory reaches.
// A frame unanswered within callTimeoutMs abandons its stream (and
// connection; frame-deadline.ts); the next one starts by asking where the
// follower's log ends. A follower of a wire version before streams gets
// unary AppendEntries with entry columns, one call at a time. A follower is
// known by its log's identity: a new identity is a new, empty log, and
// nothing it confirmed before counts. Entries go only where the follower's
// log matches ours (lsn and epoch of the previous entry); a deposed
// primary's tail is dropped; a follower that is empty, diverged, or behind
// our checkpoint is refilled by snapshot install. It never decides on its
// own to stop waiting for the follower: only the router may (SetRole with
// syncRequired=false).
import { status, type ServiceError } from '@grpc/grpc-js';
import { ErrorCode, TallyError, deadlineIn, monotonicNowMs, steadyWallClock, type MonotonicClock } from '../../wire/index.ts';
import {
  Fifo,
  replicationUnconfirmedCommitsMax,
  replicationFramesInFlightMax,
  replicationBytesInFlightMax,
  catchUpTrailEntriesMax,
  catchUpPaceMaxMs,
  type Logger,
  type shardV1,
} from '../../common/index.ts';
import { packedComponentsProtocol, peerProtocolOf } from '../../wire/internal/index.ts';
import type { LogEntry, LogView, ShardLog } from '../log/index.ts';
import type { RoleState } from '../state/index.ts';
import { AckWaiters } from './ack-waiters.ts';
import { withColumns } from './entry-wire.ts';
import type { ReplicationStatus, ReplicatorClocks, ReplicatorSettings } from './replicator-types.ts';
import { closeInstall, installCallTimeoutMinMs, installedHoldMs, nextChunkRequest, openInstall, type Install } from './snapshot-sender.ts';
import { FollowerChannel } from './follower-channel.ts';
import { FrameDeadline } from './frame-deadline.ts';
import { Shipments, type Shipment } from './shipments.ts';
import { ReplicationStream, type FrameInFlight } from './replicate-stream.ts';

export type { ReplicationStatus, ReplicatorClocks, ReplicatorSettings } from './replicator-types.ts';

export class Replicator {
  /** The connection to the follower. */
  private readonly channel: FollowerChannel;
  /** What the follower last told us; undefined until this session's first answer. */
  private followerLastLsn: bigint | undefined;
  private followerLastEpoch = 0n;
  private followerId = '';
  /** The protocol the follower last said it speaks; undefined until it answers in this process. */
  private followerProtocol: number | undefined;
  /** Whether the last order this primary obeyed required its follower (onRoleChange notices it dropped). */
  private syncWasRequired = false;
  /** The follower's last lsn when it answered holding more of this epoch than this log: see refusal(). */
  private followerAheadLsn: bigint | undefined;
  /** The follower's log equals ours up to followerLastLsn. */
  private matched = false;
  /** A truncation was refused: the follower's log cannot be mended entry by entry. */
  private truncateRefused = false;
  private ackedLsn = 0n;
  /** Set while the follower (same identity) holds less than it once confirmed: the lsn it must reach again. */
  private lostEntriesUntilLsn: bigint | undefined;
  /** A unary call (an install chunk, or an append to a follower before streams) is in flight. */
  private inFlight = false;
  /** The stream to the follower, when open. */
  private stream: ReplicationStream | undefined;
  /** False once the peer answered that it has no ReplicateStream (a node of an older wire version): unary from then on. */
  private peerStreams = true;
  /** The deadline of the oldest frame in flight on the stream. */
  private readonly deadline: FrameDeadline;
  /** Frames on the stream up to this seq were sent behind a refused one: nothing is sent until they are answered. */
  private refusedThroughSeq = 0;
  private retryTimer: NodeJS.Timeout | undefined;
  private readonly waiters = new AckWaiters();
  private lastError = '';
  private install: Install | undefined;
  /** After an install: the snapshot's lsn, kept unfolded until the follower answers again (or a while passes). */
  private installedHold: { lsn: bigint; untilMs: number } | undefined;
  /** Commits not yet confirmed, oldest first: the lag is the age of the first (committedMs on the monotonic clock). */
  private readonly unconfirmed = new Fifo<{ lsn: bigint; committedMs: number }>();
  private sessionKey = '';
  private stopped = false;
  /** What the follower is sent next, and the commits kept in memory to send it. */
  private readonly shipments: Shipments;
  /** Entries shipped from memory and read back from the log (exported by housekeeping as tally_replication_entries_shipped_total). */
  readonly shipped: Shipments['shipped'];

  constructor(
    private readonly log: ShardLog,
    private readonly role: () => RoleState,
    private readonly settings: ReplicatorSettings,
    private readonly onAcked: (lagEntries: bigint) => void = () => undefined,
    private readonly logger?: Logger,
    clocks: ReplicatorClocks = {},
  ) {
    this.monotonicNow = clocks.monotonicNow ?? monotonicNowMs;
    this.logClock = clocks.logClock ?? steadyWallClock();
    this.channel = new FollowerChannel(settings.channelCredentials);
    this.shipments = new Shipments(log, settings);
    this.shipped = this.shipments.shipped;
    this.deadline = new FrameDeadline(
      settings.callTimeoutMs,
      this.monotonicNow,
      () => this.stream?.oldest(),
      () => this.onStalled(),
    );
  }

  private readonly monotonicNow: MonotonicClock;
  private readonly logClock: () => number;

  /** The router changed our role, epoch, peer or sync requirement. */
  onRoleChange(): void {
    const role = this.role();
    const sessionKey = `${role.role}/${role.epoch}/${role.peer}`;
    if (sessionKey !== this.sessionKey) {
      // A new session: nothing the follower said before is trusted.
      this.sessionKey = sessionKey;
      this.followerLastLsn = undefined;
      this.matched = false;
      this.truncateRefused = false;
      this.ackedLsn = 0n;
      this.lostEntriesUntilLsn = undefined;
      this.unconfirmed.clear();
      this.installedHold = undefined;
      this.followerAheadLsn = undefined;
      this.abortInstall();
      this.abandonStream();
      this.shipments.recent.forget();
    } else if (this.syncWasRequired && !role.syncRequired && this.matched) {
      // The supervisor stopped requiring the follower: it saw it gone, silent
      // or replaced. Ask it where its log ends again rather than trust the
      // last answer: on an idle pair nothing else would send a call, and a
      // follower back empty under a new identity would never be refilled.
      // Frames in flight go on: their answers say it as well as a probe would.
      this.followerLastLsn = undefined;
      this.matched = false;
    }
    this.syncWasRequired = role.role === 'primary' && role.syncRequired;
    if (role.role !== 'primary') this.waiters.rejectAll(new TallyError(ErrorCode.unavailable, 'no longer primary'));
    // The router no longer asks for the follower (its directory already says
    // so): what waits on it is committed here, and that is the promise now.
    else if (!role.syncRequired) this.waiters.resolveUpTo(this.log.lastLsn);
    if (this.channel.peer !== role.peer) {
      this.abandonStream();
      this.channel.close();
      this.channel.peer = role.peer;
      this.peerStreams = true;
    }
    this.kick();
  }

  /** A local commit of rows (ending at lastLsn, written under epoch at atMs): ship it. */
  onCommit(rows: readonly LogEntry[], lastLsn: bigint, epoch: bigint, atMs: number): void {
    // Bounded: one entry per commit; a follower away for long is measured by its oldest.
    if (this.unconfirmed.length < replicationUnconfirmedCommitsMax)
      this.unconfirmed.push({ lsn: lastLsn, committedMs: this.monotonicNow() });
    this.shipments.recent.remember(this.log.takeCommitWire(), lastLsn - BigInt(rows.length) + 1n, lastLsn, epoch, this.ackedLsn);
    void atMs;
    this.kick();
  }

  /**
   * While the pair is out of sync and its follower streams (matched, no
   * install under way) more than catchUpTrailEntriesMax behind: resolves once
   * it comes within that of lsn, or after catchUpPaceMaxMs, whichever is
   * first. Undefined when there is nothing to wait for. A primary answering
   * faster than its follower can confirm would keep a follower that only
   * keeps pace out of sync for good (the pair never regains its second
   * copy); pacing answers, never commits, lets it close the gap under load,
   * and costs a caller at most catchUpPaceMaxMs per call while it does.
   */
  paceWhileCatchingUp(lsn: bigint): Promise<void> | undefined {
    if (!this.matched || this.install !== undefined || this.ackedLsn === 0n) return undefined;
    const target = lsn - BigInt(catchUpTrailEntriesMax);
    if (this.ackedLsn >= target) return undefined;
    return this.waitForAck(target, catchUpPaceMaxMs).catch(() => undefined);
  }

  /** Resolves once the follower has committed everything up to lsn; rejects after timeoutMs. */
  waitForAck(lsn: bigint, timeoutMs: number): Promise<void> {
    if (this.matched && this.ackedLsn >= lsn) return Promise.resolve();
    const acked = this.waiters.wait(lsn, timeoutMs, () => this.lastError);
    this.kick();
    return acked;
  }

  status(): ReplicationStatus {
    const caughtUp = this.matched && this.install === undefined && this.ackedLsn >= this.log.lastLsn;
    const oldest = this.unconfirmed.peek();
    return {
      ackedLsn: this.ackedLsn,
      caughtUp,
      lastError: this.lastError,
      // Monotonic: never negative, never hours long because a clock stepped.
      lagMs: caughtUp || oldest === undefined ? 0 : Math.max(0, this.monotonicNow() - oldest.committedMs),
      followerId: this.followerId,
      installing: this.install !== undefined,
      followerLostEntries: this.lostEntriesUntilLsn !== undefined,
      followerAhead: this.followerAheadLsn !== undefined,
    };
  }

  /**
   * Whether the follower has said it holds packed component entries: a
   * follower one release older refuses a log with one, which would stall the
   * pair's replication until it is upgraded.
   */
  followerHoldsPackedComponents(): boolean {
    return this.followerProtocol !== undefined && this.followerProtocol >= packedComponentsProtocol;
  }

  /**
   * Why this primary may neither commit nor answer a read, or undefined: its
   * follower holds entries of this epoch past this log's end (followerAhead).
   */
  refusal(): string | undefined {
    if (this.followerAheadLsn === undefined) return undefined;
    return `this primary's log ends at lsn ${this.log.lastLsn}, before its follower's ${this.followerAheadLsn} at its own epoch: it lost entries it wrote (an old copy of its disk?) and serves nothing until the pair fails over`;
  }

  /**
   * The highest lsn the checkpointer may fold while this primary is not
   * required to wait for its follower (undefined: no limit from here). A
   * follower being filled or catching up keeps what it still needs: nothing
   * past an install's snapshot, nothing past what an answering follower
   * holds, and just after an install, nothing past its snapshot while the
   * follower rebuilds its memory (else the next fold would send it another
   * snapshot, and another, while writes go on). Only a follower that stopped
   * answering leaves the log to the retainEntries rule.
   */
  foldLimitLsn(): bigint | undefined {
    if (this.install !== undefined) return this.install.view.checkpointLsn;
    if (this.followerLastLsn !== undefined && this.matched) return this.ackedLsn;
    if (this.installedHold !== undefined && this.monotonicNow() < this.installedHold.untilMs) return this.installedHold.lsn;
    return undefined;
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    this.abandonStream();
    this.abortInstall();
    this.waiters.rejectAll(new TallyError(ErrorCode.unavailable, 'node is shutting down'));
    this.channel.close();
  }

  private kick(): void {
    const role = this.role();
    if (this.stopped || this.inFlight || this.retryTimer !== undefined || role.role !== 'primary' || role.peer === '') return;
    const framesMax = this.settings.framesInFlightMax ?? replicationFramesInFlightMax;
    const bytesMax = this.settings.bytesInFlightMax ?? replicationBytesInFlightMax;
    // Bounded: each pass sends one frame, and at most framesMax are in flight.
    for (let pass = 0; pass <= framesMax; pass++) {
      const frames = this.stream?.framesInFlight ?? 0;
      if (this.install !== undefined) {
        // Chunks go one at a time, by unary call, once no frame is in flight.
        if (frames === 0) this.sendChunk(role);
        return;
      }
      // Frames go back to back only to a follower whose log matches ours: a
      // probe or a truncation waits for its answer, and so does what was
      // sent behind a refused frame.
      if (frames > 0 && (!this.matched || this.stream!.oldest()!.seq <= this.refusedThroughSeq)) return;
      if (frames >= framesMax || (this.stream?.bytesInFlight ?? 0) >= bytesMax) return;
      // Near the head, one frame at a time: what commits meanwhile goes in
      // the next one, so the follower writes (and fsyncs) fewer, larger
      // frames. Further behind, frames go back to back.
      if (frames > 0 && this.log.lastLsn - this.shippedLsn()! < BigInt(this.settings.batchEntriesMax)) return;
      const shipment = this.shipments.next(role, {
        lastLsn: this.followerLastLsn,
        lastEpoch: this.followerLastEpoch,
        matched: this.matched,
        truncateRefused: this.truncateRefused,
        shippedLsn: this.shippedLsn(),
        streams: this.peerStreams,
      });
      if (shipment === 'install') {
        if (frames === 0 && this.startInstall(role)) this.sendChunk(role);
        return;
      }
      if (shipment === undefined) return;
      if (!this.peerStreams) {
        this.send(withColumns(shipment.request), role);
        return;
      }
      this.sendFrame(shipment, role);
      // A frame read back from the log costs a read transaction: one per turn of the event loop, so calls and commits go on between.
      if (shipment.fromLog) {
        setImmediate(() => this.kick());
        return;
      }
    }
  }

  /** Where the next frame starts: after the last one in flight, or where the follower's log ends. */
  private shippedLsn(): bigint | undefined {
    return this.stream?.newest()?.lastLsn ?? this.followerLastLsn;
  }

  /** Sends a frame on the stream, opening one first when there is none. */
  private sendFrame(shipment: Shipment, role: RoleState): void {
    if (this.stream === undefined || !this.stream.usable) {
      this.abandonStream();
      const client = this.channel.to(role.peer);
      const stream: ReplicationStream = new ReplicationStream(client.ReplicateStream(), {
        onAnswer: (frame, answer) => {
          if (stream === this.stream) this.onFrameAnswer(frame, answer, client);
        },
        onBroken: (error) => {
          if (stream === this.stream) this.onStreamBroken(error);
        },
      });
      this.stream = stream;
    }
    // Catching up: more frames are ready behind this one, so the follower may commit them together.
    shipment.request.moreFollows = this.log.lastLsn - shipment.lastLsn >= BigInt(this.settings.batchEntriesMax);
    this.stream.send(shipment.request, {
      lastLsn: shipment.lastLsn,
      sizeBytes: shipment.sizeBytes,
      sentMs: this.monotonicNow(),
      truncate: shipment.request.truncate === true,
    });
    this.deadline.arm();
  }

  private onFrameAnswer(
    frame: FrameInFlight,
    answer: { response: shardV1.AppendEntriesResponse__Output } | { error: ServiceError },
    client: shardV1.ShardNodeClient,
  ): void {
    this.deadline.answered();
    if (this.role().role !== 'primary') return;
    if ('error' in answer) {
      this.abandonStream();
      this.failed(answer.error);
      return;
    }
    this.channel.answeredOn(client);
    const response = answer.response;
    if (frame.truncate && !response.ok && frame.seq > this.refusedThroughSeq) this.truncateRefused = true;
    // A frame behind a refused one still tells where the follower's log ends.
    this.onPosition(response);
    // A refused frame: the ones behind it continue a log the follower does
    // not have and will be refused too (one stream, handled in order). No
    // frame follows until they are answered; the next one starts from the
    // position learned.
    if (!response.ok) this.refusedThroughSeq = this.stream?.newest()?.seq ?? frame.seq;
    this.kick();
  }

  private onStreamBroken(error: ServiceError): void {
    this.stream = undefined;
    this.refusedThroughSeq = 0;
    this.deadline.clear();
    if (error.code === status.UNIMPLEMENTED) {
      // A follower of a wire version before streams: unary calls from now on (until the peer changes).
      this.peerStreams = false;
      this.logger?.info('follower has no replication stream: unary AppendEntries', { follower: this.channel.peer });
      this.followerLastLsn = undefined;
      this.matched = false;
      this.kick();
      return;
    }
    this.failed(error);
  }

  /** The oldest frame's deadline passed unanswered: its stream and connection are abandoned. */
  private onStalled(): void {
    this.abandonStream();
    this.failed(
      Object.assign(new Error('replication frame unanswered'), {
        code: status.DEADLINE_EXCEEDED,
        details: `replication frame unanswered for ${this.settings.callTimeoutMs} ms`,
        metadata: undefined as never,
      }),
    );
  }

  /** Drops the stream and whatever it has in flight (answers to it are no longer read). */
  private abandonStream(): void {
    const stream = this.stream;
    this.stream = undefined;
    this.refusedThroughSeq = 0;
    this.deadline.clear();
    stream?.cancel();
  }

  private send(request: shardV1.AppendEntriesRequest, role: RoleState): void {
    this.inFlight = true;
    const session = this.sessionKey;
    const client = this.channel.to(role.peer);
    client.AppendEntries(
      request,
      { deadline: deadlineIn(this.settings.callTimeoutMs) },
      (error: ServiceError | null, response?: shardV1.AppendEntriesResponse__Output) => {
        this.inFlight = false;
        if (!this.sameSession(session)) return;
        if (error || response === undefined) {
          this.failed(error);
          return;
        }
        this.channel.answeredOn(client);
        if (request.truncate && !response.ok) this.truncateRefused = true;
        this.onPosition(response);
        setImmediate(() => this.kick());
      },
    );
  }

  /** A reply belongs to the session it was sent in (role, epoch and peer); one from an older session only frees the way for the next call. */
  private sameSession(session: string): boolean {
    if (session === this.sessionKey && this.role().role === 'primary') return true;
    setImmediate(() => this.kick());
    return false;
  }

  private failed(error: ServiceError | null): void {
    this.lastError = error ? `${status[error.code] ?? error.code}: ${error.details}` : 'empty response';
    if (error?.code === status.DEADLINE_EXCEEDED && !this.channel.holdsUnansweredChunk) {
      // A call that ran out its deadline may sit on a connection whose
      // packets were silently dropped: TCP retransmits on a backoff that
      // doubles (seconds after a partition of seconds) and grpc-js keeps the
      // connection until keepalive gives up on it, so the follower would stay
      // behind long after the network healed. The next call opens a new one.
      this.channel.close();
    }
    this.followerLastLsn = undefined;
    this.matched = false;
    this.abortInstall();
    if (error?.code === status.FAILED_PRECONDITION && error.details.startsWith('stale epoch')) {
      // The follower knows a newer epoch: we have been deposed. Nothing
      // waiting here may be acknowledged.
      // (UNAVAILABLE, not FAILED_PRECONDITION: these entries are committed
      // here, so to the caller their outcome is unknown.)
      this.waiters.rejectAll(new TallyError(ErrorCode.unavailable, `deposed: ${error.details}`));
    }
    this.retryLater();
  }

  /** Where the follower's log ends: decides what it is sent next, and what it has confirmed. */
  private onPosition(response: shardV1.AppendEntriesResponse__Output): void {
    this.followerProtocol = peerProtocolOf(response.protocol).current;
    if (response.nodeId !== this.followerId) {
      // Another log answers at the peer's address (a new or wiped disk):
      // nothing the previous one confirmed is held by this one.
      if (this.followerId !== '')
        this.logger?.warn('follower identity changed', { previous: this.followerId, current: response.nodeId, lastLsn: response.lastLsn });
      this.followerId = response.nodeId;
      this.ackedLsn = 0n;
      this.lostEntriesUntilLsn = undefined;
      this.truncateRefused = false;
    }
    const lastLsn = BigInt(response.lastLsn);
    // The same log confirmed more than it now holds: a crash never loses
    // what was fsync'd, so this is an old copy of its disk. Until it holds
    // that much again, what we acknowledged lives here alone.
    if (lastLsn < this.ackedLsn && (this.lostEntriesUntilLsn === undefined || this.ackedLsn > this.lostEntriesUntilLsn)) {
      this.lostEntriesUntilLsn = this.ackedLsn;
      this.logger?.error('follower lost entries it had confirmed (an old copy of its disk?)', {
        follower: this.followerId,
        confirmedLsn: this.ackedLsn,
        lastLsn,
      });
    }
    if (this.lostEntriesUntilLsn !== undefined && lastLsn >= this.lostEntriesUntilLsn) this.lostEntriesUntilLsn = undefined;
    const lastEpoch = BigInt(response.lastEpoch);
    // Entries of our own epoch past our end: a primary commits before it
    // ships, and no one else writes this epoch, so this log lost them.
    const role = this.role();
    if (lastLsn > this.log.lastLsn && role.role === 'primary' && lastEpoch === role.epoch && this.followerAheadLsn === undefined) {
      this.followerAheadLsn = lastLsn;
      this.logger?.error('follower holds entries of this epoch past this log: stepping down from serving', {
        follower: this.followerId,
        followerLastLsn: lastLsn,
        lastLsn: this.log.lastLsn,
        epoch: role.epoch,
      });
    }
    this.followerLastLsn = lastLsn;
    this.followerLastEpoch = lastEpoch;
    // Log matching: equal epochs at the same lsn mean equal logs up to there
    // (one primary per epoch writes each lsn once).
    this.matched = lastLsn <= this.log.lastLsn && this.shipments.epochAt(lastLsn) === lastEpoch;
    if (!this.matched) {
      this.lastError = `follower log (lsn ${lastLsn}, epoch ${lastEpoch}) does not match this primary's`;
      return;
    }
    this.lastError = '';
    // Taking entries past the snapshot: it is through its rebuild, and what it holds bounds the fold from now on.
    if (this.installedHold !== undefined && lastLsn > this.installedHold.lsn) this.installedHold = undefined;
    this.confirm(lastLsn);
  }

  /** The follower's log now matches ours up to lsn. */
  private confirm(lsn: bigint): void {
    this.ackedLsn = lsn;
    // Bounded by the queue's length; O(1) per commit confirmed.
    for (let oldest = this.unconfirmed.peek(); oldest !== undefined && oldest.lsn <= lsn; oldest = this.unconfirmed.peek()) {
      this.unconfirmed.shift();
    }
    this.onAcked(this.log.lastLsn - this.ackedLsn);
    this.shipments.recent.trim(this.ackedLsn);
    this.waiters.resolveUpTo(this.ackedLsn);
  }

  /** Opens a view of our log and reads its first chunk; false (and a retry later) when the log cannot be read. */
  private startInstall(role: RoleState): boolean {
    let view: LogView | undefined;
    try {
      view = this.log.openView();
      this.install = openInstall(view, this.logClock() - this.settings.dedupWindowMs, this.monotonicNow());
    } catch (error) {
      if (this.install === undefined) view?.close();
      this.installFailed(error);
      return false;
    }
    this.logger?.warn('snapshot install', {
      follower: role.peer,
      followerId: this.followerId,
      followerLastLsn: this.followerLastLsn,
      snapshotLsn: view.checkpointLsn,
      snapshotId: this.install.snapshotId,
    });
    return true;
  }

  /** Reading the snapshot failed: nothing partial is ever sent as complete; start over later. */
  private installFailed(error: unknown): void {
    this.lastError = `snapshot could not be read: ${(error as Error).message}`;
    this.logger?.error('snapshot install failed', { error: (error as Error).message });
    this.abortInstall();
    this.followerLastLsn = undefined;
    this.retryLater();
  }

  private abortInstall(): void {
    const install = this.install;
    if (install === undefined) return;
    this.install = undefined;
    closeInstall(install);
  }

  private sendChunk(role: RoleState): void {
    const install = this.install!;
    let chunk: ReturnType<typeof nextChunkRequest>;
    try {
      chunk = nextChunkRequest(install, role.epoch);
    } catch (error) {
      this.installFailed(error);
      return;
    }
    const { request, done } = chunk;
    this.inFlight = true;
    const session = this.sessionKey;
    const timeoutMs = Math.max(this.settings.callTimeoutMs, installCallTimeoutMinMs);
    const client = this.channel.to(role.peer);
    this.channel.holdsUnansweredChunk = true;
    client.InstallSnapshot(
      request,
      { deadline: deadlineIn(timeoutMs) },
      (error: ServiceError | null, response?: shardV1.AppendEntriesResponse__Output) => {
        this.inFlight = false;
        if (this.install !== install || !this.sameSession(session)) {
          setImmediate(() => this.kick());
          return;
        }
        if (error || response === undefined) {
          this.failed(error);
          return;
        }
        this.channel.answeredOn(client);
        install.chunkIndex++;
        if (done) {
          const snapshotLsn = install.view.checkpointLsn;
          this.logger?.info('snapshot installed', {
            follower: role.peer,
            snapshotLsn,
            chunks: install.chunkIndex,
            durationMs: Math.round(this.monotonicNow() - install.startedMs),
          });
          this.abortInstall();
          this.installedHold = { lsn: snapshotLsn, untilMs: this.monotonicNow() + installedHoldMs };
          this.onPosition(response);
        }
        setImmediate(() => this.kick());
      },
    );
  }

  private retryLater(): void {
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.kick();
    }, this.settings.retryDelayMs);
    this.retryTimer.unref();
  }
}
