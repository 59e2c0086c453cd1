// Decodes what the router sends a node: shard ids, and Apply groups (packed
// increments and items) into the entries group commit takes, every field
// checked (a bad item fails its group with INVALID_ARGUMENT). Pure: never
// touches memory, the log or the role.
import { status } from '@grpc/grpc-js';
import { ErrorCode, TallyError, INT64_MAX, INT64_MIN, idempotencyKeyBytesMax, type WindowSetting } from '../../wire/index.ts';
import {
  decodeComponent,
  decodePackedComponents,
  type RegionComponent,
  type ShardComponent,
  packedIncrementBytes,
  packedIncrementRecordCount,
  packedShardIdText,
  readPackedAmount,
  readPackedShardId,
} from '../../wire/internal/index.ts';
import type { shardV1 } from '../../common/index.ts';
import type { GroupOutcome, ApplyEntry } from './apply-entry.ts';
import { unpackRegisterChanges } from '../../sketch/index.ts';
import { validateWindowConfig } from '../../window/index.ts';

export function parseShardId(value: string | number | bigint): number {
  const id = Number(value);
  if (!Number.isSafeInteger(id) || id <= 0) throw new TallyError(ErrorCode.invalidArgument, `shard id ${value} is invalid`);
  return id;
}

const emptyKey = Buffer.alloc(0);

function badItem(message: string): GroupOutcome {
  return { code: status.INVALID_ARGUMENT, message, applied: [], changed: [] };
}

/** A counter generation (uint64 as a decimal string; absent: 0), or undefined when it is not a safe integer. */
function parseGeneration(value: string | undefined): number | undefined {
  if (value === undefined || value === '0' || value === '') return 0;
  const generation = Number(value);
  return Number.isSafeInteger(generation) && generation >= 0 ? generation : undefined;
}

function decodeItem(item: shardV1.ApplyItem__Output): ApplyEntry | GroupOutcome {
  const id = Number(item.shardId);
  if (!Number.isSafeInteger(id) || id <= 0) return badItem(`bad item: shard ${item.shardId}`);
  const generation = parseGeneration(item.generation);
  if (generation === undefined) return badItem(`bad item: generation ${item.generation}`);
  const op = item.op ?? 'INCREMENT';
  if (op === 'INCREMENT') return decodeIncrement(id, item, generation);
  const base = { shardId: id, amount: 0n, idempotencyKey: emptyKey, fenceShardCount: 0, fence: false, routedShardCount: 0, generation };
  switch (op) {
    case 'MEMBER_SET':
      return { ...base, op: 'memberSet', member: BigInt(item.member ?? '0'), present: item.present === true };
    case 'CLEAR':
      if (generation < 1) return badItem(`clear of shard ${id} has no generation`);
      return { ...base, op: 'clear' };
    case 'MEMBER_REPAIR':
      return { ...base, op: 'memberRepair' };
    case 'DROP':
      return { ...base, op: 'drop' };
    case 'DISTINCT': {
      let registers: [number, number][];
      try {
        registers = unpackRegisterChanges(item.registers ?? emptyKey);
      } catch (error) {
        return badItem(`bad distinct item for shard ${id}: ${(error as Error).message}`);
      }
      if (registers.length === 0) return badItem(`distinct item for shard ${id} has no registers`);
      return { ...base, op: 'distinct', registers };
    }
    case 'REGION_COMPONENT': {
      let component: RegionComponent;
      try {
        component = decodeComponent(item.component ?? emptyKey);
      } catch (error) {
        return badItem(`bad region component for shard ${id}: ${(error as Error).message}`);
      }
      return { ...base, op: 'regionComponent', component };
    }
    case 'REGION_COMPONENTS': {
      let packed: ShardComponent[];
      try {
        packed = decodePackedComponents(item.component ?? emptyKey);
      } catch (error) {
        return badItem(`bad packed region components for shard ${id}: ${(error as Error).message}`);
      }
      if (packed[0]!.shardId !== id) return badItem(`packed region components for shard ${id} start with shard ${packed[0]!.shardId}`);
      return { ...base, op: 'regionComponents', packed };
    }
    default:
      return badItem(`unknown op ${item.op}`);
  }
}

/** The hot path: one object per increment, no window object unless the counter has one. */
function decodeIncrement(id: number, item: shardV1.ApplyItem__Output, generation: number): ApplyEntry | GroupOutcome {
  const amount = BigInt(item.amount);
  const fence = item.fence === true;
  const amountValid = fence ? amount === 0n && item.idempotencyKey.length > 0 : amount !== 0n && amount <= INT64_MAX && amount >= INT64_MIN;
  if (!amountValid || item.idempotencyKey.length > idempotencyKeyBytesMax)
    return badItem(`bad item (shard ${item.shardId}, amount ${item.amount}${fence ? ', fence' : ''})`);
  const routedShardCount = item.routedShardCount ?? 0;
  if (item.idempotencyKey.length > 0 && routedShardCount < 1)
    return badItem(`keyed item for shard ${item.shardId} has no routed shard count`);
  let window: WindowSetting | undefined;
  const bucketMs = Number(item.windowBucketMs ?? '0');
  const retentionMs = Number(item.windowRetentionMs ?? '0');
  if (bucketMs !== 0 || retentionMs !== 0) {
    const windowProblem = validateWindowConfig(bucketMs, retentionMs);
    if (windowProblem !== undefined) return badItem(`bad window for shard ${id}: ${windowProblem}`);
    window = { bucketMs, retentionMs };
  }
  return {
    shardId: id,
    amount,
    idempotencyKey: item.idempotencyKey,
    fenceShardCount: fence ? routedShardCount : 0,
    op: 'increment',
    fence,
    routedShardCount,
    window,
    generation,
  };
}

/** Packed records in a group (entries, for applyItemsPerCallMax) and the callers' increments they sum (for metrics). */
export function packedIncrementCount(group: shardV1.ApplyGroup__Output): { records: number; increments: number } {
  let records = 0;
  let increments = 0;
  for (const packed of group.increments) {
    const count = Math.floor(packed.records.length / packedIncrementBytes);
    records += count;
    // Metrics only: a record is at least one increment, whatever the field says.
    increments += Math.max(count, packed.incrementCount);
  }
  return { records, increments };
}

/** One run of packed increments (shard.proto, PackedIncrements), appended to entries. */
function decodePacked(packed: shardV1.PackedIncrements__Output, entries: ApplyEntry[]): GroupOutcome | undefined {
  const records = packed.records;
  const recordCount = packedIncrementRecordCount(records);
  if (recordCount === undefined) return badItem(`packed increments of ${records.length} bytes, not a multiple of ${packedIncrementBytes}`);
  let window: WindowSetting | undefined;
  const bucketMs = Number(packed.windowBucketMs);
  const retentionMs = Number(packed.windowRetentionMs);
  if (bucketMs !== 0 || retentionMs !== 0) {
    const windowProblem = validateWindowConfig(bucketMs, retentionMs);
    if (windowProblem !== undefined) return badItem(`bad window for packed increments: ${windowProblem}`);
    window = { bucketMs, retentionMs };
  }
  const generation = parseGeneration(packed.generation);
  if (generation === undefined) return badItem(`bad packed increments: generation ${packed.generation}`);
  for (let recordIndex = 0; recordIndex < recordCount; recordIndex++) {
    const id = readPackedShardId(records, recordIndex);
    if (id === undefined || id === 0) return badItem(`bad packed increment: shard ${packedShardIdText(records, recordIndex)}`);
    const amount = readPackedAmount(records, recordIndex);
    // Every int64 fits the record; only zero is not an increment.
    if (amount === 0n) return badItem(`bad packed increment (shard ${id}, amount 0)`);
    entries.push({
      shardId: id,
      amount,
      idempotencyKey: emptyKey,
      fenceShardCount: 0,
      op: 'increment',
      fence: false,
      routedShardCount: 0,
      window,
      generation,
    });
  }
  return undefined;
}

/**
 * A group's entries as group commit takes them: its packed increments first,
 * then its items (shard.proto, ApplyGroup), or the reason it is refused.
 */
export function decodeGroup(group: shardV1.ApplyGroup__Output): ApplyEntry[] | GroupOutcome {
  const entries: ApplyEntry[] = [];
  for (const packed of group.increments) {
    const problem = decodePacked(packed, entries);
    if (problem !== undefined) return problem;
  }
  for (const item of group.items) {
    const decoded = decodeItem(item);
    if (!('op' in decoded)) return decoded;
    entries.push(decoded);
  }
  return entries;
}
