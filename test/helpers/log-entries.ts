// Log entries and group-commit items as the node tests build them, and the
// random mixes their replay-equals-checkpoint tests generate: one copy here.
import type { ApplyEntry } from '../../src/node/write/group-commit.ts';
import { EntryKind, type LogEntry } from '../../src/node/log/index.ts';
import { encodeWindowSetting } from '../../src/node/state/index.ts';
import { packRegisterChanges } from '../../src/sketch/index.ts';
import type { WindowSetting } from '../../src/wire/index.ts';

export const noKey = Buffer.alloc(0);

/** An increment, keyed when `key` is not empty. */
export function plainEntry(shardId: number, amount: bigint, key = ''): LogEntry {
  return { shardId, amount, idempotencyKey: Buffer.from(key), fenceShardCount: 0 };
}

export function dropEntry(shardId: number): LogEntry {
  return { shardId, amount: 0n, idempotencyKey: noKey, fenceShardCount: 0, kind: EntryKind.drop };
}

export function windowConfigEntry(shardId: number, window: WindowSetting): LogEntry {
  return {
    shardId,
    amount: 0n,
    idempotencyKey: noKey,
    fenceShardCount: 0,
    kind: EntryKind.windowConfig,
    payload: encodeWindowSetting(window),
  };
}

/** One raised sketch register, drawn from `random`. */
export function randomDistinctEntry(shardId: number, random: () => number): LogEntry {
  return {
    shardId,
    amount: 0n,
    idempotencyKey: noKey,
    fenceShardCount: 0,
    kind: EntryKind.distinct,
    payload: packRegisterChanges([[Math.floor(random() * 16_384), 1 + Math.floor(random() * 20)]]),
  };
}

/**
 * A flip of member 0..9 of shardId, drawn from `random`; `present` tracks
 * membership ("shard:member") so a flip always changes it.
 */
export function randomMemberFlip(shardId: number, random: () => number, present: Map<string, boolean>): LogEntry {
  const member = BigInt(Math.floor(random() * 10));
  const id = `${shardId}:${member}`;
  const flipTo = !(present.get(id) ?? false);
  present.set(id, flipTo);
  return { shardId, amount: flipTo ? 1n : -1n, idempotencyKey: noKey, fenceShardCount: 0, kind: EntryKind.memberFlip, member };
}

/** Forgets every member of shardId in `present` (its shard was dropped or cleared). */
export function forgetMembers(present: Map<string, boolean>, shardId: number): void {
  for (const id of [...present.keys()]) if (id.startsWith(`${shardId}:`)) present.delete(id);
}

/** A group-commit item. */
export function applyEntry(shardId: number, op: ApplyEntry['op'], extra: Partial<ApplyEntry> = {}): ApplyEntry {
  return { shardId, amount: 0n, idempotencyKey: noKey, fenceShardCount: 0, fence: false, routedShardCount: 0, op, ...extra };
}
