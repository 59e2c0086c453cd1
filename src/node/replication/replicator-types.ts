// What a replicator is given (its settings and clocks) and what it tells of
// itself (ReplicationStatus, shown in a node's Status). Types only.
import type { ChannelCredentials } from '@grpc/grpc-js';
import type { MonotonicClock } from '../../wire/index.ts';

export interface ReplicatorSettings {
  batchEntriesMax: number;
  callTimeoutMs: number;
  retryDelayMs: number;
  /** Keys a snapshot carries: those written within the window. */
  dedupWindowMs: number;
  /** Bounds on the entries kept in memory for shipping (replicationMemoryEntriesMax, replicationMemoryBytesMax). */
  memoryEntriesMax: number;
  memoryBytesMax: number;
  /** Mutual TLS to the follower when the cluster runs TLS. */
  channelCredentials?: ChannelCredentials;
  /** Pipelining bounds (defaults: replicationFrameEntriesMax, replicationFrameBytesMax, replicationFramesInFlightMax, replicationBytesInFlightMax). */
  frameEntriesMax?: number;
  frameBytesMax?: number;
  framesInFlightMax?: number;
  bytesInFlightMax?: number;
}

export interface ReplicationStatus {
  ackedLsn: bigint;
  caughtUp: boolean;
  lastError: string;
  lagMs: number;
  /** The identity of the follower log that ackedLsn is about ('' before its first answer). */
  followerId: string;
  /** A snapshot install to the follower is under way. */
  installing: boolean;
  /**
   * The follower's log (same identity) ended before what it had already
   * confirmed: an old copy of its disk was restored. Entries this primary
   * acknowledged are missing there until it catches up again, so it may not
   * be promoted meanwhile (the supervisor takes the pair out of sync).
   */
  followerLostEntries: boolean;
  /**
   * Its follower holds entries of this primary's epoch past where this log
   * ends: this log lost entries it wrote (an old copy of its disk, restored
   * under the same identity). It must serve nothing: the follower has more.
   */
  followerAhead: boolean;
}

/** The clocks a replicator reads (injected by tests). */
export interface ReplicatorClocks {
  /** Lag, holds and install durations: never the wall clock (a step would make the lag negative, or hours long). */
  monotonicNow?: MonotonicClock;
  /** The node's log clock (steadyWallClock): which keys a snapshot carries, as entries were stamped. */
  logClock?: () => number;
}
