// Between the client's shapes and the wire's: int64s, keys, members and TTLs
// out; reads, descriptions, pair statuses and the admin reports in.
import { randomBytes } from 'node:crypto';
// Specific files, never ../common/index.ts: that re-exports server code
// (pino, prom-client, health, reflection) the client package must not carry.
import { ErrorCode, TallyError, parseInt64, toWireInt64, parseMemberId } from '../wire/index.ts';
import type { LeanReadResponse } from '../wire/index.ts';
import type { counterV1 } from './counter-proto.ts';

import type {
  ClusterStatus,
  CounterDescription,
  Int64Input,
  MemberId,
  PairStatus,
  ReadResult,
  RebuildReport,
  ReconcileReport,
} from './types.ts';

export function pairStatusOf(pair: counterV1.PairStatus__Output): PairStatus {
  return {
    pair: pair.pair,
    primary: pair.primary,
    follower: pair.follower,
    epoch: Number(pair.epoch),
    inSync: pair.inSync,
    draining: pair.draining,
    shardCount: Number(pair.shardCount),
    zoneWarning: pair.zoneWarning ?? '',
  };
}

/** A member id on the wire; anything but an unsigned 64-bit integer fails here, before a call. */
export function toWireMember(member: MemberId): string {
  return parseMemberId(member).toString();
}

/** A number when it is exact as one: protobufjs encodes that without parsing a decimal string. */
export function toWireAmount(amount: Int64Input): string | number {
  if (typeof amount === 'number' && Number.isSafeInteger(amount)) return amount;
  refuseUnsafeNumber(amount);
  return toWireInt64(parseInt64(amount, 'amount'));
}

/**
 * A whole number past 2^53 - 1 that is still within int64: as a JavaScript
 * number it may already have lost its last digits (2**60 + 1 === 2**60), so
 * it is refused with what to pass instead. Beyond int64 is OUT_OF_RANGE, as
 * the router says.
 */
export function refuseUnsafeNumber(amount: unknown): void {
  if (typeof amount !== 'number' || !Number.isInteger(amount) || Number.isSafeInteger(amount) || Math.abs(amount) >= 2 ** 63) return;
  throw new TallyError(
    ErrorCode.invalidArgument,
    `amount ${amount} is not a safe integer (beyond ±(2^53 - 1) a number may have lost digits): pass a bigint (${BigInt(amount)}n) or a decimal string`,
  );
}

/** No key: one empty Buffer for every unkeyed increment (zero bytes: nothing to overwrite). */
const noKey: Buffer = Buffer.alloc(0);

/** A key for an increment: the caller's, a fresh random one when omitted, none when null. */
export function toWireKey(key: string | Uint8Array | null | undefined): Buffer {
  if (key === null) return noKey;
  if (key === undefined) return randomBytes(16);
  return typeof key === 'string' ? Buffer.from(key, 'utf8') : Buffer.from(key);
}

/** ConfigureOptions.ttlMs as the wire's TtlSetting; bounds are the router's to check. */
export function toWireTtl(ttlMs: number | 'never' | 'default'): counterV1.TtlSetting {
  if (ttlMs === 'never') return { ttlMs: 0, never: true };
  if (ttlMs === 'default') return { ttlMs: 0, never: false };
  // 0 would silently mean 'default' on the wire: say which.
  if (!Number.isSafeInteger(ttlMs) || ttlMs <= 0)
    throw new TallyError(ErrorCode.invalidArgument, `ttlMs must be a positive whole number of ms, 'never' or 'default', got ${ttlMs}`);
  return { ttlMs, never: false };
}

/** From proto-loader's decode (int64s as decimal strings) or the lean codec's (numbers or bigints). */
export function fromReadResponse(response: counterV1.ReadResponse__Output | LeanReadResponse): ReadResult {
  return {
    counter: response.counter,
    total: BigInt(response.total),
    exact: response.exact,
    asOfUnixMs: Number(response.asOfUnixMs),
    stalenessMs: Number(response.stalenessMs),
    shards: response.shards,
    ...(response.regions === undefined || response.regions.length === 0
      ? {}
      : {
          regions: response.regions.map((part) => ({
            region: part.region,
            total: BigInt(part.total),
            asOfUnixMs: Number(part.asOfUnixMs),
            stalenessMs: Number(part.stalenessMs),
            home: part.home,
          })),
        }),
  };
}

export function fromDescribeResponse(response: counterV1.DescribeResponse__Output): CounterDescription {
  return {
    counter: response.counter,
    shards: response.shards,
    placements: response.placements.map((placement) => ({
      shard: placement.shard,
      shardId: Number(placement.shardId),
      pair: placement.pair,
      primary: placement.primary,
      follower: placement.follower,
      epoch: Number(placement.epoch),
    })),
    heatPerSec: response.heatPerSec,
    peakPerSec: response.peakPerSec,
    shardRates: response.shardRates,
    skew: response.skew,
    createdUnixMs: Number(response.config?.createdUnixMs ?? 0),
    autoscale: response.config?.autoscale ?? true,
    kind: response.config?.kind ?? 'total',
    windowBucketMs: Number(response.config?.windowBucketMs ?? 0),
    windowRetentionMs: Number(response.config?.windowRetentionMs ?? 0),
    ttlMs: Number(response.config?.ttlMs ?? 0),
    ttlFrom: response.config?.ttlFrom ?? 'none',
    idleMs: Number(response.config?.idleMs ?? 0),
  };
}

export function fromRebuildResponse(response: counterV1.RebuildResponse__Output): RebuildReport {
  return {
    counter: response.counter,
    members: BigInt(response.members),
    storedCount: BigInt(response.storedCount),
    drift: BigInt(response.drift),
    repaired: response.repaired,
    partitions: response.partitions.map((partition) => ({
      partition: partition.partition,
      shardId: Number(partition.shardId),
      pair: partition.pair,
      members: BigInt(partition.members),
      storedCount: BigInt(partition.storedCount),
      drift: BigInt(partition.drift),
      repaired: BigInt(partition.repaired),
      followerDrift: partition.followerChecked ? BigInt(partition.followerDrift) : undefined,
    })),
  };
}

export function fromClusterStatusResponse(response: counterV1.ClusterStatusResponse__Output): ClusterStatus {
  return {
    counters: Number(response.counters),
    nodes: response.nodes.map((node) => ({
      address: node.address,
      role: node.role,
      pair: node.pair,
      health: node.health,
      lastLsn: BigInt(node.lastLsn),
      pid: node.pid,
      shardCount: Number(node.shardCount),
      replicationLagEntries: BigInt(node.replicationLagEntries),
      replicationLagMs: Number(node.replicationLagMs),
      epoch: Number(node.epoch),
      inSync: node.inSync,
      nodeId: node.nodeId,
      installing: node.installing,
      error: node.error,
      zone: node.zone ?? '',
      replicationAddress: node.replicationAddress ?? '',
      protocolVersion: node.protocolVersion ?? 0,
    })),
    pairs: response.pairs.map(pairStatusOf),
    directoryStore: response.directoryStore,
    routers: response.routers,
    supervisor: response.supervisor,
    router: response.router,
    dedupWindowMs: Number(response.dedupWindowMs ?? 0),
    region: response.region ?? '',
    peerRegions: (response.peerRegions ?? []).map((peer) => ({
      region: peer.region,
      link: peer.link,
      address: peer.address,
      componentsPending: Number(peer.componentsPending),
      lagSeconds: peer.lagSeconds,
      error: peer.error,
    })),
  };
}

export function fromReconcileResponse(response: counterV1.ReconcileResponse__Output): ReconcileReport {
  return {
    pairs: response.pairs.map((pair) => ({
      pair: pair.pair,
      primaryLsn: BigInt(pair.primaryLsn),
      followerLsn: BigInt(pair.followerLsn),
      followerChecked: pair.followerChecked,
      note: pair.note,
    })),
    shards: response.shards.map((shard) => ({
      pair: shard.pair,
      shardId: Number(shard.shardId),
      counter: shard.counter,
      primaryMemory: BigInt(shard.primaryMemory),
      primaryLog: BigInt(shard.primaryLog),
      followerMemory: BigInt(shard.followerMemory),
      followerLog: BigInt(shard.followerLog),
      primaryDrift: BigInt(shard.primaryDrift),
      followerDrift: BigInt(shard.followerDrift),
      replicaDrift: BigInt(shard.replicaDrift),
    })),
    shardsChecked: Number(response.shardsChecked),
    shardsDrifting: Number(response.shardsDrifting),
  };
}
