// Staging one group of a group commit, all or nothing: each item checked
// against memory, the dedup index and what the flush staged before it, and
// turned into the log rows it needs. It writes nothing and changes no state
// a reader sees: the committer applies the rows after the commit.
import assert from 'node:assert/strict';
import { status } from '@grpc/grpc-js';
import { encodeComponent, encodePackedComponents } from '../../wire/internal/index.ts';
import { isInt64, type WindowSetting } from '../../wire/index.ts';
import { packedComponentRowsPerEntryMax } from '../../common/index.ts';
import { EntryKind, type LogEntry } from '../log/index.ts';
import { DedupIndex, encodeWindowSetting, type NodeMemory } from '../state/index.ts';
import { packRegisterChanges } from '../../sketch/index.ts';
import type { ApplyEntry, GroupOutcome } from './apply-entry.ts';

const emptyKey = Buffer.alloc(0);
const noWindow: WindowSetting = { bucketMs: 0, retentionMs: 0 };

/** What a group (or, merged, the flush so far) changed and memory does not show yet. */
export interface Staged {
  totals: Map<number, bigint>;
  /** DedupIndex.keyOf -> fence shard count (0: applied). */
  keys: Map<string, number>;
  /** `${shardId}:${member}` -> present. */
  members: Map<string, boolean>;
  registers: Map<number, Map<number, number>>;
  /** Member count minus total, per shard. */
  drift: Map<number, bigint>;
  windows: Map<number, WindowSetting>;
  /** The total of the shard's current window bucket (every row of a flush shares one commit time). */
  buckets: Map<number, bigint>;
}

export function newStaged(): Staged {
  return {
    totals: new Map(),
    keys: new Map(),
    members: new Map(),
    registers: new Map(),
    drift: new Map(),
    windows: new Map(),
    buckets: new Map(),
  };
}

/** A group's staging: its outcome, the newest original it answers a duplicate from, and whether it read committed state. */
export interface StagedGroup {
  outcome: GroupOutcome;
  originalLsn: bigint;
  readsCommittedState?: boolean;
}

/** What staging reads besides the flush's own changes. */
export interface StagingSources {
  memory: NodeMemory;
  dedup: DedupIndex;
}

/**
 * One group, all or nothing. A dropped shard refuses the group
 * (NOT_FOUND: its counter was deleted while the item was on its way). For keyed items, the key's record at this
 * shard decides (a fence is left at a shard an earlier attempt of the key
 * may have gone to, by a later attempt routed over more shards):
 *   increment, key applied here           -> duplicate (applied=false)
 *   increment, fence from more shards     -> a stale attempt: the group fails UNAVAILABLE (retry re-routes)
 *   increment, fence from no more shards  -> applies (its router fenced the older homes)
 *   fence, key applied here               -> duplicate: the original lives here
 *   fence, otherwise                      -> fenced (applied=true; a fence already there is waited for as an original is)
 * State other items of this flush already changed (tentative) wins over memory.
 * On success the group's rows are in groupRows and its changes merged into tentative.
 */
export function stageGroup(
  group: readonly ApplyEntry[],
  tentative: Staged,
  groupRows: (row: LogEntry) => void,
  nowMs: number,
  sources: StagingSources,
): StagedGroup {
  const staging = new GroupStaging(sources, tentative, nowMs);
  for (const item of group) {
    const failed = staging.stageItem(item);
    if (failed !== undefined) return failed;
  }
  mergeStaged(tentative, staging.staged);
  for (const row of staging.rows) groupRows(row);
  // Only ops beyond increments answer from member sets or registers (and report changes).
  return {
    outcome: { code: status.OK, message: '', applied: staging.applied, changed: staging.reportsChanges ? staging.changed : [] },
    originalLsn: staging.originalLsn,
    readsCommittedState: staging.reportsChanges,
  };
}

function failure(code: number, message: string): StagedGroup {
  return { outcome: { code, message, applied: [], changed: [] }, originalLsn: 0n };
}

/** An item answered and left behind: the next one is staged. */
const answered = 'answered';

/** The steps of one group's staging, one per kind of item; a step returns a failure that ends the group, or nothing. */
class GroupStaging {
  readonly staged = newStaged();
  readonly rows: LogEntry[] = [];
  readonly applied: boolean[] = [];
  readonly changed: string[] = [];
  /** Increments report nothing in `changed`: a zero per item would cost encoding on the hot path. */
  reportsChanges = false;
  originalLsn = 0n;
  private readonly memory: NodeMemory;

  constructor(
    private readonly sources: StagingSources,
    private readonly tentative: Staged,
    private readonly nowMs: number,
  ) {
    this.memory = sources.memory;
  }

  stageItem(item: ApplyEntry): StagedGroup | undefined {
    if (item.op !== 'increment') this.reportsChanges = true;
    if (this.memory.isDropped(item.shardId)) {
      if (item.op !== 'drop') return failure(status.NOT_FOUND, `shard ${item.shardId} was dropped: its counter was deleted`);
      this.answer(item.lifecycleApplied === true, '0');
      return undefined;
    }
    assert.ok(item.op !== 'drop', 'a drop item is committed before staging');
    if (item.op === 'clear') {
      this.answer(item.lifecycleApplied === true, '0');
      return undefined;
    }
    // Sent before a clear this shard has seen: cleared away. Its key (if any) is still recorded below.
    const clearedAway = (item.generation ?? 0) < this.memory.generationOf(item.shardId);
    if (clearedAway && (item.op === 'memberSet' || item.op === 'distinct')) {
      this.answer(false, '0');
      return undefined;
    }
    switch (item.op) {
      case 'memberSet':
        return this.memberSet(item);
      case 'distinct':
        return this.distinct(item);
      case 'regionComponent':
        return this.regionComponent(item);
      case 'regionComponents':
        return this.regionComponents(item);
      case 'memberRepair':
        return this.memberRepair(item);
      default:
        return this.increment(item, clearedAway);
    }
  }

  private answer(applied: boolean, changed: string): void {
    this.applied.push(applied);
    this.changed.push(changed);
  }

  private totalOf(shardId: number): bigint {
    return this.staged.totals.get(shardId) ?? this.tentative.totals.get(shardId) ?? this.memory.totals.get(shardId);
  }

  /** Adds amount to the shard's staged total; a failure when it would leave int64. */
  private addToTotal(shardId: number, amount: bigint): StagedGroup | undefined {
    const after = this.totalOf(shardId) + amount;
    if (!isInt64(after)) return failure(status.OUT_OF_RANGE, `increment of ${amount} would take a shard total beyond int64`);
    this.staged.totals.set(shardId, after);
    return undefined;
  }

  private memberSet(item: ApplyEntry): StagedGroup | undefined {
    const { staged, tentative } = this;
    const id = `${item.shardId}:${item.member}`;
    const present = staged.members.get(id) ?? tentative.members.get(id) ?? this.memory.hasMember(item.shardId, item.member!);
    const flips = present !== item.present;
    if (flips) {
      const amount = item.present ? 1n : -1n;
      const failed = this.addToTotal(item.shardId, amount);
      if (failed !== undefined) return failed;
      staged.members.set(id, item.present!);
      this.rows.push({
        shardId: item.shardId,
        amount,
        idempotencyKey: emptyKey,
        fenceShardCount: 0,
        kind: EntryKind.memberFlip,
        member: item.member,
      });
    }
    this.answer(flips, flips ? '1' : '0');
    return undefined;
  }

  private distinct(item: ApplyEntry): undefined {
    let registers = this.staged.registers.get(item.shardId);
    if (registers === undefined) this.staged.registers.set(item.shardId, (registers = new Map()));
    const rises: [number, number][] = [];
    for (const [index, rank] of item.registers!) {
      const current =
        registers.get(index) ?? this.tentative.registers.get(item.shardId)?.get(index) ?? this.memory.register(item.shardId, index);
      if (rank > current) {
        registers.set(index, rank);
        rises.push([index, rank]);
      }
    }
    if (rises.length > 0)
      this.rows.push({
        shardId: item.shardId,
        amount: 0n,
        idempotencyKey: emptyKey,
        fenceShardCount: 0,
        kind: EntryKind.distinct,
        payload: packRegisterChanges(rises),
      });
    this.answer(rises.length > 0, String(rises.length));
    return undefined;
  }

  private regionComponent(item: ApplyEntry): undefined {
    // Max-register: an older or equal version changes nothing and is not logged.
    // Two newer ones in one flush are both logged; applying keeps the newest.
    const advances = this.memory.advancesComponent(item.shardId, item.component!);
    if (advances)
      this.rows.push({
        shardId: item.shardId,
        amount: 0n,
        idempotencyKey: emptyKey,
        fenceShardCount: 0,
        kind: EntryKind.regionComponent,
        payload: encodeComponent(item.component!),
      });
    this.answer(advances, advances ? '1' : '0');
    return undefined;
  }

  private regionComponents(item: ApplyEntry): StagedGroup | undefined {
    const rows = item.packed!;
    for (const row of rows)
      if (this.memory.isDropped(row.shardId)) return failure(status.NOT_FOUND, `shard ${row.shardId} was dropped: its counter was deleted`);
    // Only the rows that move a register forward are logged, in entries of at
    // most packedComponentRowsPerEntryMax rows, each on the first of its shards:
    // whatever reads the log a number of entries at a time (the scrubber, a
    // reconcile, a backup's export) then holds the event loop a bounded time.
    const advancing = rows.filter((row) => this.memory.advancesComponent(row.shardId, row.component));
    for (let at = 0; at < advancing.length; at += packedComponentRowsPerEntryMax) {
      const chunk = advancing.slice(at, at + packedComponentRowsPerEntryMax);
      this.rows.push({
        shardId: chunk[0]!.shardId,
        amount: 0n,
        idempotencyKey: emptyKey,
        fenceShardCount: 0,
        kind: EntryKind.regionComponents,
        payload: encodePackedComponents(chunk),
      });
    }
    this.answer(advancing.length > 0, String(advancing.length));
    return undefined;
  }

  private memberRepair(item: ApplyEntry): StagedGroup | undefined {
    // Flips move the count and the set together; only a repair changes their difference.
    const drift =
      this.staged.drift.get(item.shardId) ??
      this.tentative.drift.get(item.shardId) ??
      BigInt(this.memory.memberCount(item.shardId)) - this.memory.totals.get(item.shardId);
    if (drift !== 0n) {
      const failed = this.addToTotal(item.shardId, drift);
      if (failed !== undefined) return failed;
      this.rows.push({ shardId: item.shardId, amount: drift, idempotencyKey: emptyKey, fenceShardCount: 0 });
    }
    this.staged.drift.set(item.shardId, 0n);
    this.answer(drift !== 0n, drift.toString());
    return undefined;
  }

  private increment(item: ApplyEntry, clearedAway: boolean): StagedGroup | undefined {
    if (item.idempotencyKey.length > 0) {
      const keyed = this.keyed(item, clearedAway);
      if (keyed === answered) return undefined;
      if (keyed !== undefined) return keyed;
    }
    if (clearedAway) {
      // An unkeyed increment: counted, then cleared with everything before the cut. Nothing to log.
      this.answer(true, '0');
      return undefined;
    }
    const failed = this.addToTotal(item.shardId, item.amount) ?? this.windowed(item);
    if (failed !== undefined) return failed;
    this.rows.push({ shardId: item.shardId, amount: item.amount, idempotencyKey: item.idempotencyKey, fenceShardCount: 0 });
    this.answer(true, '0');
    return undefined;
  }

  /**
   * A keyed increment or fence: what the key's record at this shard decides
   * (see stageGroup). Answered here (a duplicate, a fence, a key cleared
   * away), a failure, or undefined when the increment goes on to apply.
   */
  private keyed(item: ApplyEntry, clearedAway: boolean): StagedGroup | typeof answered | undefined {
    const { staged, tentative } = this;
    const id = DedupIndex.keyOf(item.shardId, item.idempotencyKey);
    // What this flush already decided wins over the index: it is newer.
    // Asked first, it also spares the index a lookup (on disk, maybe).
    const decided = staged.keys.get(id) ?? tentative.keys.get(id);
    const seen = decided === undefined ? this.sources.dedup.get(item.shardId, item.idempotencyKey, this.nowMs) : undefined;
    const fenceShardCount = decided ?? seen?.fenceShardCount;
    if (fenceShardCount === 0) {
      this.answer(false, '0');
      if (seen !== undefined && seen.fenceShardCount === 0 && seen.lsn > this.originalLsn) this.originalLsn = seen.lsn;
      return answered;
    }
    if (item.fence) {
      if (fenceShardCount === undefined || fenceShardCount < item.routedShardCount) {
        staged.keys.set(id, item.routedShardCount);
        this.rows.push({ shardId: item.shardId, amount: 0n, idempotencyKey: item.idempotencyKey, fenceShardCount: item.routedShardCount });
      } else if (seen !== undefined && seen.lsn > this.originalLsn) {
        // The fence already there decides, as an original decides a duplicate: "fenced" is
        // answered only once the follower holds it, or a failover that lost it would let an
        // older attempt of the key apply here after the router applied it at its new home.
        this.originalLsn = seen.lsn;
      }
      this.answer(true, '0');
      return answered;
    }
    if (fenceShardCount !== undefined && item.routedShardCount < fenceShardCount) {
      // An attempt routed before a growth whose key a later attempt has
      // fenced here: it must not apply here, and it may not claim the key
      // applied (that attempt may never have). The caller retries and is
      // routed by the current shard count.
      return failure(
        status.UNAVAILABLE,
        `key was routed by ${item.routedShardCount} shards; the counter has grown to ${fenceShardCount}: retry`,
      );
    }
    staged.keys.set(id, 0);
    if (!clearedAway) return undefined;
    this.rows.push({
      shardId: item.shardId,
      amount: 0n,
      idempotencyKey: item.idempotencyKey,
      fenceShardCount: 0,
      kind: EntryKind.clearedKey,
    });
    this.answer(true, '0');
    return answered;
  }

  /** The window setting travels with every increment; the log records it only when it changes. */
  private windowed(item: ApplyEntry): StagedGroup | undefined {
    const { staged, tentative, nowMs } = this;
    const window = item.window ?? noWindow;
    const current =
      staged.windows.get(item.shardId) ?? tentative.windows.get(item.shardId) ?? this.memory.windows.configOf(item.shardId) ?? noWindow;
    const widthChanges = window.bucketMs !== current.bucketMs;
    if (widthChanges || window.retentionMs !== current.retentionMs) {
      staged.windows.set(item.shardId, window);
      this.rows.push({
        shardId: item.shardId,
        amount: 0n,
        idempotencyKey: emptyKey,
        fenceShardCount: 0,
        kind: EntryKind.windowConfig,
        payload: encodeWindowSetting(window),
      });
    }
    if (!(window.bucketMs > 0)) return undefined;
    // A bucket's total is stored and sent as an int64 too: +MAX, -MAX, +MAX
    // keeps the shard total in range but not one bucket.
    const bucketStartMs = Math.floor(nowMs / window.bucketMs) * window.bucketMs;
    const bucketBefore =
      staged.buckets.get(item.shardId) ??
      tentative.buckets.get(item.shardId) ??
      (widthChanges || staged.windows.has(item.shardId) || tentative.windows.has(item.shardId)
        ? 0n
        : this.memory.windows.sum(item.shardId, bucketStartMs, bucketStartMs + window.bucketMs));
    const bucketAfter = bucketBefore + item.amount;
    if (!isInt64(bucketAfter)) return failure(status.OUT_OF_RANGE, `increment of ${item.amount} would take a window bucket beyond int64`);
    staged.buckets.set(item.shardId, bucketAfter);
    return undefined;
  }
}

function mergeStaged(into: Staged, from: Staged): void {
  for (const [shardId, total] of from.totals) into.totals.set(shardId, total);
  for (const [id, fenceShardCount] of from.keys) into.keys.set(id, fenceShardCount);
  for (const [id, present] of from.members) into.members.set(id, present);
  for (const [shardId, registers] of from.registers) {
    let target = into.registers.get(shardId);
    if (target === undefined) into.registers.set(shardId, (target = new Map()));
    for (const [index, rank] of registers) target.set(index, rank);
  }
  for (const [shardId, drift] of from.drift) into.drift.set(shardId, drift);
  for (const [shardId, window] of from.windows) into.windows.set(shardId, window);
  for (const [shardId, total] of from.buckets) into.buckets.set(shardId, total);
}
