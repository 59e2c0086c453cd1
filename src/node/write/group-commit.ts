// Group commit: every Apply that arrives while the event loop is busy (most
// often, busy committing the previous group) joins one transaction and one
// fsync. Each group is atomic and is checked alone: a group that would push a
// shard total beyond int64 fails OUT_OF_RANGE without touching the others.
// Callers are answered only after the commit and, while the pair is in sync,
// after the follower has committed it too. Unkeyed increments that one commit
// brings to one shard share one log row (see RowMerger): rows track hot shards.
import { ErrorCode, TallyError, isInt64, steadyWallClock } from '../../wire/index.ts';
import { EntryKind, encodeGeneration, type ShardLog, type LogEntry } from '../log/index.ts';
import type { DedupIndex, NodeMemory, RoleState } from '../state/index.ts';
import type { ApplyEntry, GroupOutcome } from './apply-entry.ts';
import { newStaged, stageGroup, type Staged } from './group-staging.ts';

export type { ApplyEntry, ApplyOp, GroupOutcome } from './apply-entry.ts';

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
    const addRow = (row: LogEntry): void => rows.add(row);
    const sources = { memory: this.memory, dedup: this.dedup };
    const outcomes: GroupOutcome[][] = batch.map((request) =>
      request.groups.map((group) => {
        const staged = stageGroup(group, tentative, addRow, nowMs, sources);
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
}

const emptyKey = Buffer.alloc(0);
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
