// Group commit: every Apply that arrives while the event loop is busy (most
// often, busy committing the previous group) joins one transaction and one
// fsync. Each group is atomic and is checked alone: a group that would push a
// shard total beyond int64 fails OUT_OF_RANGE without touching the others.
// Callers are answered only after the commit and, while the pair is in sync,
// after the follower has committed it too. Unkeyed increments that one commit
// brings to one shard share one log row (see RowMerger): rows track hot shards.
import assert from 'node:assert/strict';
import { status } from '@grpc/grpc-js';
import { ErrorCode, TallyError, isInt64, steadyWallClock, type WindowSetting } from '../wire/index.ts';
import { encodeComponent, type RegionComponent } from '../wire/internal/index.ts';
import { EntryKind, encodeGeneration, type ShardLog, type LogEntry } from './log/index.ts';
import { type RoleState, DedupIndex, encodeWindowSetting, type NodeMemory } from './state/index.ts';
import { packRegisterChanges } from '../sketch/index.ts';

/**
 * What a router asks of one shard:
 *   increment     add amount (or, with fence, record the key at this shard, change nothing)
 *   memberSet     make member present or absent; logged only when that flips it
 *   distinct      raise sketch registers; logged only for registers that rise
 *   memberRepair  set the total to the member set's size (an operator's repair)
 *   drop          free the shard's state and keep its tombstone (its counter was deleted)
 *   clear         empty the shard and move it to `generation` (its counter was cleared)
 *   regionComponent  hold a peer region's component; logged only when its version is newer
 */
export type ApplyOp = 'increment' | 'memberSet' | 'distinct' | 'memberRepair' | 'drop' | 'clear' | 'regionComponent';

export interface ApplyEntry extends LogEntry {
  op: ApplyOp;
  fence: boolean;
  /** The counter's shard count when the router routed this item (keyed items only). */
  routedShardCount: number;
  /** memberSet: the wanted state. */
  present?: boolean;
  /** distinct: (register index, rank) pairs to observe. */
  registers?: [number, number][];
  /** regionComponent: the peer region's component. */
  component?: RegionComponent;
  /** increment: the counter's window setting ({0, 0}: none). */
  window?: WindowSetting;
  /**
   * increment, memberSet, distinct: the counter's generation when the router
   * routed the item (0 or absent: never cleared); clear: the generation to clear to.
   */
  generation?: number;
  /** drop, clear: set when the flush commits it: true when this item dropped (cleared) the shard, false when it already was. */
  lifecycleApplied?: boolean;
}

export interface GroupOutcome {
  code: number;
  message: string;
  applied: boolean[];
  /** Per item: registers raised (distinct), 1 or 0 (memberSet), the correction made (memberRepair); empty for a group of increments only. */
  changed: string[];
}

export interface CommitResult {
  results: GroupOutcome[];
  lsn: bigint;
}

interface Pending {
  epoch: bigint;
  groups: ApplyEntry[][];
  resolve: (outcome: CommitResult) => void;
  reject: (error: unknown) => void;
}

export interface CommitHooks {
  /** rows: the entries just committed under epoch at atMs, in lsn order, ending at lastLsn (the hook may keep them, not change them). */
  onCommit(rows: readonly LogEntry[], durationSeconds: number, lastLsn: bigint, epoch: bigint, atMs: number): void;
  /** Resolves when the follower holds lsn; only called while sync is required. */
  waitForFollower(lsn: bigint): Promise<void>;
  /** Why this primary may commit nothing now (its follower holds more of its epoch), or undefined. */
  refusal?(): string | undefined;
  /** Out of sync: what an answer waits for so a follower catching up can close the gap (Replicator.paceWhileCatchingUp), or undefined. */
  pace?(lsn: bigint): Promise<void> | undefined;
}

export class GroupCommitter {
  private pending: Pending[] = [];
  private flushScheduled = false;

  constructor(
    private readonly log: ShardLog,
    private readonly memory: NodeMemory,
    private readonly role: () => RoleState,
    private readonly dedup: DedupIndex,
    private readonly hooks: CommitHooks,
    /** The node's log clock (steadyWallClock): entries are stamped with it and the dedup window is measured on it, so a step changes neither. */
    private readonly now: () => number = steadyWallClock(),
  ) {}

  /** Queues groups sent under `epoch`; they commit with whatever else arrives this tick. */
  submit(groups: ApplyEntry[][], epoch: bigint): Promise<CommitResult> {
    return new Promise((resolve, reject) => {
      this.pending.push({ epoch, groups, resolve, reject });
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  /** Commits everything pending now. Synchronous up to the commit: nothing interleaves with it. */
  flush(): void {
    this.flushScheduled = false;
    const role = this.role();
    const refusal = this.hooks.refusal?.();
    const batch: Pending[] = [];
    for (const request of this.pending) {
      // The role may have changed since the request was checked: recheck here,
      // where nothing can change it before the commit.
      if (role.role !== 'primary' || request.epoch !== role.epoch) {
        request.reject(
          new TallyError(ErrorCode.failedPrecondition, `stale epoch: request ${request.epoch}, node ${role.role} at ${role.epoch}`),
        );
      } else if (refusal !== undefined) {
        // Nothing applied (FAILED_PRECONDITION): the router may send it elsewhere, as for a stale epoch.
        request.reject(new TallyError(ErrorCode.failedPrecondition, refusal));
      } else {
        batch.push(request);
      }
    }
    this.pending = [];
    if (batch.length === 0) return;

    const nowMs = this.now();
    const lifecycleLsn = this.commitLifecycle(batch, role.epoch, nowMs);
    if (lifecycleLsn === undefined) return;
    const tentative: Staged = newStaged();
    const rows = new RowMerger();
    // A duplicate must not be answered before its original is as durable as
    // an acknowledgement promises: wait for the original's lsn too.
    let waitLsn = lifecycleLsn;
    // A member set or a register read from memory may hold a change committed
    // here but not yet on the follower: an answer that relies on it ("no
    // change") must wait for everything committed so far.
    let readsCommittedState = false;
    const outcomes: GroupOutcome[][] = batch.map((request) =>
      request.groups.map((group) => {
        const staged = this.stage(group, tentative, rows, nowMs);
        if (staged.originalLsn > waitLsn) waitLsn = staged.originalLsn;
        if (staged.readsCommittedState) readsCommittedState = true;
        return staged.outcome;
      }),
    );
    if (readsCommittedState && this.log.lastLsn > waitLsn) waitLsn = this.log.lastLsn;

    if (rows.rows.length > 0) {
      const firstLsn = this.log.lastLsn + 1n;
      const startedNs = process.hrtime.bigint();
      try {
        this.log.append(rows.rows, role.epoch, nowMs);
      } catch (error) {
        // The transaction rolled back and the lsn did not move; totals, keys
        // and the replication queue are changed only below, after the commit,
        // so nothing of the flush is half-applied. A full disk is
        // RESOURCE_EXHAUSTED (nothing written: the same call succeeds once
        // there is room); a failing disk UNAVAILABLE (outcome unknown).
        for (const request of batch) request.reject(error);
        return;
      }
      rows.rows.forEach((row, index) => {
        this.memory.apply(row, nowMs);
        if (row.idempotencyKey.length > 0)
          this.dedup.add(row.shardId, row.idempotencyKey, firstLsn + BigInt(index), nowMs, row.fenceShardCount);
      });
      this.hooks.onCommit(rows.rows, Number(process.hrtime.bigint() - startedNs) / 1e9, this.log.lastLsn, role.epoch, nowMs);
      waitLsn = this.log.lastLsn;
    }
    const lsn = this.log.lastLsn;
    const answer = (): void => batch.forEach((request, index) => request.resolve({ results: outcomes[index]!, lsn }));
    if (waitLsn > 0n && role.syncRequired) {
      this.hooks.waitForFollower(waitLsn).then(answer, (error: unknown) => {
        for (const request of batch) request.reject(error);
      });
      return;
    }
    const paced = this.hooks.pace?.(lsn);
    if (paced === undefined) answer();
    else void paced.then(answer);
  }

  /**
   * Drops and clears the flush's groups ask for, committed in a transaction
   * of their own before anything is staged, so staging sees memory as they
   * leave it: a dropped shard refuses every other item for it, and a
   * shard's generation is the newest any item of the flush carries (an item
   * routed after a clear the shard had not seen yet clears it first). Rare:
   * one more fsync only for a flush that needs it. Returns the lsn to wait
   * for (0 when there was nothing), or undefined when the commit failed and
   * every request was rejected.
   */
  private commitLifecycle(batch: readonly Pending[], epoch: bigint, nowMs: number): bigint | undefined {
    let rows: LogEntry[] | undefined;
    let droppedNow: Set<number> | undefined;
    let clearedTo: Map<number, number> | undefined;
    for (const request of batch)
      for (const group of request.groups)
        for (const item of group) {
          const { op, shardId } = item;
          if (op === 'drop') {
            droppedNow ??= new Set();
            const applies = !this.memory.isDropped(shardId) && !droppedNow.has(shardId);
            item.lifecycleApplied = applies;
            if (!applies) continue;
            droppedNow.add(shardId);
            (rows ??= []).push({ shardId, amount: 0n, idempotencyKey: emptyKey, fenceShardCount: 0, kind: EntryKind.drop });
            continue;
          }
          const generation = item.generation ?? 0;
          // The hot path: an item of a counter never cleared stops here.
          if (generation === 0 || (op !== 'clear' && item.fence)) continue;
          const current = clearedTo?.get(shardId) ?? this.memory.generationOf(shardId);
          const applies = generation > current && !this.memory.isDropped(shardId) && droppedNow?.has(shardId) !== true;
          if (op === 'clear') item.lifecycleApplied = applies;
          if (!applies) continue;
          (clearedTo ??= new Map()).set(shardId, generation);
          (rows ??= []).push({
            shardId,
            amount: 0n,
            idempotencyKey: emptyKey,
            fenceShardCount: 0,
            kind: EntryKind.clear,
            payload: encodeGeneration(generation),
          });
        }
    if (rows === undefined) return 0n;
    const startedNs = process.hrtime.bigint();
    try {
      this.log.append(rows, epoch, nowMs);
    } catch (error) {
      for (const request of batch) request.reject(error);
      return undefined;
    }
    for (const row of rows) this.memory.apply(row, nowMs);
    this.hooks.onCommit(rows, Number(process.hrtime.bigint() - startedNs) / 1e9, this.log.lastLsn, epoch, nowMs);
    return this.log.lastLsn;
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
   */
  private stage(
    group: ApplyEntry[],
    tentative: Staged,
    rows: RowMerger,
    nowMs: number,
  ): { outcome: GroupOutcome; originalLsn: bigint; readsCommittedState?: boolean } {
    const staged = newStaged();
    const groupRows: LogEntry[] = [];
    const applied: boolean[] = [];
    const changed: string[] = [];
    // Increments report nothing in `changed`: a zero per item would cost encoding on the hot path.
    let reportsChanges = false;
    let originalLsn = 0n;
    const totalOf = (shardId: number): bigint =>
      staged.totals.get(shardId) ?? tentative.totals.get(shardId) ?? this.memory.totals.get(shardId);
    const addToTotal = (shardId: number, amount: bigint): string | undefined => {
      const after = totalOf(shardId) + amount;
      if (!isInt64(after)) return `increment of ${amount} would take a shard total beyond int64`;
      staged.totals.set(shardId, after);
      return undefined;
    };
    const outOfRange = (message: string) => ({
      outcome: { code: status.OUT_OF_RANGE, message, applied: [], changed: [] },
      originalLsn: 0n,
    });
    for (const item of group) {
      if (item.op !== 'increment') reportsChanges = true;
      if (this.memory.isDropped(item.shardId)) {
        if (item.op === 'drop') {
          applied.push(item.lifecycleApplied === true);
          changed.push('0');
          continue;
        }
        return {
          outcome: {
            code: status.NOT_FOUND,
            message: `shard ${item.shardId} was dropped: its counter was deleted`,
            applied: [],
            changed: [],
          },
          originalLsn: 0n,
        };
      }
      assert.ok(item.op !== 'drop', 'a drop item is committed before staging');
      if (item.op === 'clear') {
        applied.push(item.lifecycleApplied === true);
        changed.push('0');
        continue;
      }
      // Sent before a clear this shard has seen: cleared away. Its key (if any) is still recorded below.
      const clearedAway = (item.generation ?? 0) < this.memory.generationOf(item.shardId);
      if (clearedAway && (item.op === 'memberSet' || item.op === 'distinct')) {
        applied.push(false);
        changed.push('0');
        continue;
      }
      if (item.op === 'memberSet') {
        const id = `${item.shardId}:${item.member}`;
        const present = staged.members.get(id) ?? tentative.members.get(id) ?? this.memory.hasMember(item.shardId, item.member!);
        const flips = present !== item.present;
        if (flips) {
          const amount = item.present ? 1n : -1n;
          const problem = addToTotal(item.shardId, amount);
          if (problem !== undefined) return outOfRange(problem);
          staged.members.set(id, item.present!);
          groupRows.push({
            shardId: item.shardId,
            amount,
            idempotencyKey: emptyKey,
            fenceShardCount: 0,
            kind: EntryKind.memberFlip,
            member: item.member,
          });
        }
        applied.push(flips);
        changed.push(flips ? '1' : '0');
        continue;
      }
      if (item.op === 'distinct') {
        let registers = staged.registers.get(item.shardId);
        if (registers === undefined) staged.registers.set(item.shardId, (registers = new Map()));
        const rises: [number, number][] = [];
        for (const [index, rank] of item.registers!) {
          const current =
            registers.get(index) ?? tentative.registers.get(item.shardId)?.get(index) ?? this.memory.register(item.shardId, index);
          if (rank > current) {
            registers.set(index, rank);
            rises.push([index, rank]);
          }
        }
        if (rises.length > 0)
          groupRows.push({
            shardId: item.shardId,
            amount: 0n,
            idempotencyKey: emptyKey,
            fenceShardCount: 0,
            kind: EntryKind.distinct,
            payload: packRegisterChanges(rises),
          });
        applied.push(rises.length > 0);
        changed.push(String(rises.length));
        continue;
      }
      if (item.op === 'regionComponent') {
        // Max-register: an older or equal version changes nothing and is not logged.
        // Two newer ones in one flush are both logged; applying keeps the newest.
        const advances = this.memory.advancesComponent(item.shardId, item.component!);
        if (advances)
          groupRows.push({
            shardId: item.shardId,
            amount: 0n,
            idempotencyKey: emptyKey,
            fenceShardCount: 0,
            kind: EntryKind.regionComponent,
            payload: encodeComponent(item.component!),
          });
        applied.push(advances);
        changed.push(advances ? '1' : '0');
        continue;
      }
      if (item.op === 'memberRepair') {
        // Flips move the count and the set together; only a repair changes their difference.
        const drift =
          staged.drift.get(item.shardId) ??
          tentative.drift.get(item.shardId) ??
          BigInt(this.memory.memberCount(item.shardId)) - this.memory.totals.get(item.shardId);
        if (drift !== 0n) {
          const problem = addToTotal(item.shardId, drift);
          if (problem !== undefined) return outOfRange(problem);
          groupRows.push({ shardId: item.shardId, amount: drift, idempotencyKey: emptyKey, fenceShardCount: 0 });
        }
        staged.drift.set(item.shardId, 0n);
        applied.push(drift !== 0n);
        changed.push(drift.toString());
        continue;
      }
      if (item.idempotencyKey.length > 0) {
        const id = DedupIndex.keyOf(item.shardId, item.idempotencyKey);
        // What this flush already decided wins over the index: it is newer.
        // Asked first, it also spares the index a lookup (on disk, maybe).
        const decided = staged.keys.get(id) ?? tentative.keys.get(id);
        const seen = decided === undefined ? this.dedup.get(item.shardId, item.idempotencyKey, nowMs) : undefined;
        const fenceShardCount = decided ?? seen?.fenceShardCount;
        if (fenceShardCount === 0) {
          applied.push(false);
          changed.push('0');
          if (seen !== undefined && seen.fenceShardCount === 0 && seen.lsn > originalLsn) originalLsn = seen.lsn;
          continue;
        }
        if (item.fence) {
          if (fenceShardCount === undefined || fenceShardCount < item.routedShardCount) {
            staged.keys.set(id, item.routedShardCount);
            groupRows.push({
              shardId: item.shardId,
              amount: 0n,
              idempotencyKey: item.idempotencyKey,
              fenceShardCount: item.routedShardCount,
            });
          } else if (seen !== undefined && seen.lsn > originalLsn) {
            // The fence already there decides, as an original decides a duplicate: "fenced" is
            // answered only once the follower holds it, or a failover that lost it would let an
            // older attempt of the key apply here after the router applied it at its new home.
            originalLsn = seen.lsn;
          }
          applied.push(true);
          changed.push('0');
          continue;
        }
        if (fenceShardCount !== undefined && item.routedShardCount < fenceShardCount) {
          // An attempt routed before a growth whose key a later attempt has
          // fenced here: it must not apply here, and it may not claim the key
          // applied (that attempt may never have). The caller retries and is
          // routed by the current shard count.
          return {
            outcome: {
              code: status.UNAVAILABLE,
              message: `key was routed by ${item.routedShardCount} shards; the counter has grown to ${fenceShardCount}: retry`,
              applied: [],
              changed: [],
            },
            originalLsn: 0n,
          };
        }
        staged.keys.set(id, 0);
        if (clearedAway) {
          groupRows.push({
            shardId: item.shardId,
            amount: 0n,
            idempotencyKey: item.idempotencyKey,
            fenceShardCount: 0,
            kind: EntryKind.clearedKey,
          });
          applied.push(true);
          changed.push('0');
          continue;
        }
      }
      if (clearedAway) {
        // An unkeyed increment: counted, then cleared with everything before the cut. Nothing to log.
        applied.push(true);
        changed.push('0');
        continue;
      }
      const problem = addToTotal(item.shardId, item.amount);
      if (problem !== undefined) return outOfRange(problem);
      // The window setting travels with every increment; the log records it only when it changes.
      const window = item.window ?? noWindow;
      const current =
        staged.windows.get(item.shardId) ?? tentative.windows.get(item.shardId) ?? this.memory.windows.configOf(item.shardId) ?? noWindow;
      const widthChanges = window.bucketMs !== current.bucketMs;
      if (widthChanges || window.retentionMs !== current.retentionMs) {
        staged.windows.set(item.shardId, window);
        groupRows.push({
          shardId: item.shardId,
          amount: 0n,
          idempotencyKey: emptyKey,
          fenceShardCount: 0,
          kind: EntryKind.windowConfig,
          payload: encodeWindowSetting(window),
        });
      }
      if (window.bucketMs > 0) {
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
        if (!isInt64(bucketAfter)) return outOfRange(`increment of ${item.amount} would take a window bucket beyond int64`);
        staged.buckets.set(item.shardId, bucketAfter);
      }
      groupRows.push({ shardId: item.shardId, amount: item.amount, idempotencyKey: item.idempotencyKey, fenceShardCount: 0 });
      applied.push(true);
      changed.push('0');
    }
    mergeStaged(tentative, staged);
    for (const row of groupRows) rows.add(row);
    // Only ops beyond increments answer from member sets or registers (and report changes).
    return {
      outcome: { code: status.OK, message: '', applied, changed: reportsChanges ? changed : [] },
      originalLsn,
      readsCommittedState: reportsChanges,
    };
  }
}

/**
 * The rows of one commit, in order, with unkeyed increments merged: an
 * unkeyed increment joins the open row of its shard (the previous unkeyed
 * increment row of that shard in this commit) instead of making a row.
 * Increments commute and every row of a commit shares its commit time (so its
 * window bucket), so the merged row changes totals and buckets exactly as its
 * parts would. A row is merged only from groups that staged without error
 * (rows arrive here only from a group that succeeded), so the per-group int64
 * checks stand. What closes a shard's open row, so later increments start a
 * new row after it:
 *   - a row that changes the shard's total (keyed increment, member flip):
 *     in replay the open row is applied before it, so adding to the open row
 *     would move every total in between, which staging never checked;
 *   - a window setting: increments after it belong to the new setting;
 *   - a merged amount that would leave int64 (the shard total went far down
 *     and back up in one commit).
 * Rows that change no total (key fences, sketch registers) leave it open.
 * Keyed increments, fences, flips, registers and settings keep their row each.
 */
export class RowMerger {
  readonly rows: LogEntry[] = [];
  private readonly open = new Map<number, LogEntry>();

  add(row: LogEntry): void {
    const kind = row.kind ?? EntryKind.increment;
    const plain = kind === EntryKind.increment && row.idempotencyKey.length === 0 && row.fenceShardCount === 0;
    if (plain) {
      const open = this.open.get(row.shardId);
      if (open !== undefined) {
        const merged = open.amount + row.amount;
        // A zero sum would read as a key fence without a key: keep the row apart.
        if (isInt64(merged) && merged !== 0n) {
          open.amount = merged;
          return;
        }
      }
      // Its own object: merging later amounts into it must not touch the caller's.
      const own: LogEntry = { shardId: row.shardId, amount: row.amount, idempotencyKey: row.idempotencyKey, fenceShardCount: 0 };
      this.rows.push(own);
      this.open.set(row.shardId, own);
      return;
    }
    this.rows.push(row);
    if (row.amount !== 0n || kind === EntryKind.windowConfig) this.open.delete(row.shardId);
  }
}

const emptyKey = Buffer.alloc(0);
const noWindow: WindowSetting = { bucketMs: 0, retentionMs: 0 };

/** What a group (or, merged, the flush so far) changed and memory does not show yet. */
interface Staged {
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

function newStaged(): Staged {
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
