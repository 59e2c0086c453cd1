// The checks and memory lookups both directory stores share, so they refuse the
// same things with the same status and words.
import { CapName, capRefusalDetails, ErrorCode, TallyError, newCountersPerCallMax, shardsPerCounterMax } from '../../wire/index.ts';
import { memberPartitionsMax } from '../../common/index.ts';
import type { CounterInfo, CounterKind, DirectoryLimits, PairAddresses, PairInfo } from './contract.ts';

/**
 * setShards' input against the counter as held (`heldShardCount`: every
 * shard, announced ones too): NOT_FOUND, INVALID_ARGUMENT for a count out
 * of range, FAILED_PRECONDITION for a membership counter's partitions or a
 * shrink. Returns the counter.
 */
export function checkShardCountChange(name: string, counter: CounterInfo | undefined, shardCount: number): CounterInfo {
  if (counter === undefined) throw new TallyError(ErrorCode.notFound, `counter "${name}" does not exist`);
  if (!Number.isInteger(shardCount) || shardCount < 1)
    throw new TallyError(ErrorCode.invalidArgument, `shard count must be at least 1, got ${shardCount}`);
  if (shardCount > shardsPerCounterMax)
    throw new TallyError(ErrorCode.invalidArgument, `shard count ${shardCount} exceeds the limit of ${shardsPerCounterMax}`);
  const heldShardCount = counter.shards.length;
  if (counter.kind === 'membership' && shardCount !== heldShardCount)
    throw new TallyError(
      ErrorCode.failedPrecondition,
      `${name} is a membership counter: its ${heldShardCount} partitions are fixed at creation`,
    );
  if (shardCount < heldShardCount)
    throw new TallyError(ErrorCode.failedPrecondition, `shrinking ${name} from ${heldShardCount} to ${shardCount} shards is not supported`);
  return counter;
}

/** What a directory holds now, against its caps (DirectoryLimits). */
export interface HeldCounts {
  counters: number;
  shards: number;
}

/**
 * The caps on creating `count` counters of `kind` on top of `held`:
 * partitions out of range INVALID_ARGUMENT, a call's or the directory's
 * counter cap and the shard cap RESOURCE_EXHAUSTED, naming the cap in the
 * ErrorInfo metadata (capRefusalDetails: waiting does not lift it, unlike a
 * busy refusal). Counters that exist are never refused.
 */
export function checkCreationCaps(count: number, kind: CounterKind, partitions: number, held: HeldCounts, limits: DirectoryLimits): void {
  if (!Number.isInteger(partitions) || partitions < 1 || partitions > memberPartitionsMax)
    throw new TallyError(ErrorCode.invalidArgument, `partitions must be 1..${memberPartitionsMax}, got ${partitions}`);
  if (count > newCountersPerCallMax)
    throw new TallyError(
      ErrorCode.resourceExhausted,
      `the call would create ${count} new counters; the limit is ${newCountersPerCallMax} new counters per call (newCountersPerCallMax): split it`,
      undefined,
      capRefusalDetails(CapName.newCountersPerCall),
    );
  if (held.counters + count > limits.countersMax)
    throw new TallyError(
      ErrorCode.resourceExhausted,
      `the directory holds ${held.counters} counters; ${count} new ones would pass the limit of ${limits.countersMax} counters (--counters-max)`,
      undefined,
      capRefusalDetails(CapName.countersMax),
    );
  checkShardsTotalCap(count * (kind === 'membership' ? partitions : 1), held.shards, limits);
}

/** Adding addCount shards to heldShards: RESOURCE_EXHAUSTED past --shards-total-max. */
export function checkShardsTotalCap(addCount: number, heldShards: number, limits: DirectoryLimits): void {
  if (heldShards + addCount > limits.shardsTotalMax)
    throw new TallyError(
      ErrorCode.resourceExhausted,
      `the directory holds ${heldShards} shards; ${addCount} more would pass the limit of ${limits.shardsTotalMax} shards (--shards-total-max)`,
      undefined,
      capRefusalDetails(CapName.shardsTotalMax),
    );
}

/** Warnings at open for a directory at or over a cap (a lowered cap keeps what exists; it only stops creation). */
export function capWarnings(held: HeldCounts, limits: DirectoryLimits): string[] {
  const warnings: string[] = [];
  if (held.counters >= limits.countersMax)
    warnings.push(`the directory holds ${held.counters} counters, the limit is ${limits.countersMax}: no new counter can be created`);
  if (held.shards >= limits.shardsTotalMax)
    warnings.push(`the directory holds ${held.shards} shards, the limit is ${limits.shardsTotalMax}: no counter can be created or grown`);
  return warnings;
}

/** A new pair: two distinct addresses, neither already a node of a pair (INVALID_ARGUMENT, FAILED_PRECONDITION). */
export function checkPairAddable(addresses: PairAddresses, pairOf: (address: string) => PairInfo | undefined): void {
  if (addresses.primary === addresses.follower)
    throw new TallyError(ErrorCode.invalidArgument, `a pair needs two nodes: primary and follower are both ${addresses.primary}`);
  for (const address of [addresses.primary, addresses.follower]) {
    const holder = pairOf(address);
    if (holder !== undefined)
      throw new TallyError(ErrorCode.failedPrecondition, `${address} is already a node of pair ${holder.pairIndex}`);
  }
}

/** Draining `pair`: FAILED_PRECONDITION when no other pair would take new shards. */
export function checkDrainable(pair: PairInfo, pairs: readonly PairInfo[]): void {
  if (pairs.every((other) => other === pair || other.draining))
    throw new TallyError(ErrorCode.failedPrecondition, `pair ${pair.pairIndex} is the last pair taking new shards: it cannot be drained`);
}

/** New shards need a pair that is not draining: FAILED_PRECONDITION when every one is. */
export function checkPlaceable(pairs: readonly PairInfo[]): void {
  if (pairs.length > 0 && pairs.every((pair) => pair.draining))
    throw new TallyError(
      ErrorCode.failedPrecondition,
      'every node pair is draining: no new shard can be placed (tally pair drain --undrain)',
    );
}
