// Group commit: every Apply that arrives while the event loop is busy (most
// often, busy committing the previous group) joins one transaction and one
// fsync. Each group is atomic and is checked alone: a group that would push a
// shard total beyond int64 fails OUT_OF_RANGE without touching the others.
// Callers are answered only after the commit and, while the pair is in sync,
// after the follower has committed it too.
import { status } from '@grpc/grpc-js';
import { ErrorCode, TallyError, isInt64 } from '../common/index.ts';
import type { ShardLog, LogEntry } from './shard-log.ts';
import type { ShardTotals } from './shard-totals.ts';
import type { RoleState } from './node-role.ts';
import { DedupIndex } from './dedup-index.ts';

/** An increment to apply, or a key fence: record the key at this shard, change nothing. */
export interface ApplyEntry extends LogEntry {
  fence: boolean;
  /** The counter's shard count when the router routed this item (keyed items only). */
  routedShardCount: number;
}

export interface GroupOutcome {
  code: number;
  message: string;
  applied: boolean[];
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
  onCommit(rows: number, durationSeconds: number, lastLsn: bigint): void;
  /** Resolves when the follower holds lsn; only called while sync is required. */
  waitForFollower(lsn: bigint): Promise<void>;
}

export class GroupCommitter {
  private pending: Pending[] = [];
  private flushScheduled = false;

  constructor(
    private readonly log: ShardLog,
    private readonly totals: ShardTotals,
    private readonly role: () => RoleState,
    private readonly dedup: DedupIndex,
    private readonly hooks: CommitHooks,
    private readonly now: () => number = Date.now,
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
    const batch: Pending[] = [];
    for (const request of this.pending) {
      // The role may have changed since the request was checked: recheck here,
      // where nothing can change it before the commit.
      if (role.role !== 'primary' || request.epoch !== role.epoch) {
        request.reject(new TallyError(ErrorCode.failedPrecondition, `stale epoch: request ${request.epoch}, node ${role.role} at ${role.epoch}`));
      } else {
        batch.push(request);
      }
    }
    this.pending = [];
    if (batch.length === 0) return;

    const nowMs = this.now();
    const tentative = new Map<number, bigint>();
    const tentativeKeys = new Map<string, number>();
    const rows: LogEntry[] = [];
    // A duplicate must not be answered before its original is as durable as
    // an acknowledgement promises: wait for the original's lsn too.
    let waitLsn = 0n;
    const outcomes: GroupOutcome[][] = batch.map((request) =>
      request.groups.map((group) => {
        const staged = this.stage(group, tentative, tentativeKeys, rows, nowMs);
        if (staged.originalLsn > waitLsn) waitLsn = staged.originalLsn;
        return staged.outcome;
      }),
    );

    if (rows.length > 0) {
      const firstLsn = this.log.lastLsn + 1n;
      const startedNs = process.hrtime.bigint();
      try {
        this.log.append(rows, role.epoch, nowMs);
      } catch (error) {
        // Nothing reached memory; callers see the failure and know the outcome is unknown.
        for (const request of batch) request.reject(error);
        return;
      }
      rows.forEach((row, index) => {
        this.totals.add(row.shardId, row.amount);
        if (row.idempotencyKey.length > 0) this.dedup.add(row.shardId, row.idempotencyKey, firstLsn + BigInt(index), nowMs, row.fenceShardCount);
      });
      this.hooks.onCommit(rows.length, Number(process.hrtime.bigint() - startedNs) / 1e9, this.log.lastLsn);
      waitLsn = this.log.lastLsn;
    }
    const lsn = this.log.lastLsn;
    const answer = (): void => batch.forEach((request, index) => request.resolve({ results: outcomes[index]!, lsn }));
    if (waitLsn > 0n && role.syncRequired) {
      this.hooks.waitForFollower(waitLsn).then(answer, (error: unknown) => {
        for (const request of batch) request.reject(error);
      });
    } else {
      answer();
    }
  }

  /**
   * One group, all or nothing. For keyed items, the key's record at this
   * shard decides (a fence is left at a shard an earlier attempt of the key
   * may have gone to, by a later attempt routed over more shards):
   *   increment, key applied here           -> duplicate (applied=false)
   *   increment, fence from more shards     -> a stale attempt: the group fails UNAVAILABLE (retry re-routes)
   *   increment, fence from no more shards  -> applies (its router fenced the older homes)
   *   fence, key applied here               -> duplicate: the original lives here
   *   fence, otherwise                      -> fenced (applied=true)
   */
  private stage(
    group: ApplyEntry[],
    tentative: Map<number, bigint>,
    tentativeKeys: Map<string, number>,
    rows: LogEntry[],
    nowMs: number,
  ): { outcome: GroupOutcome; originalLsn: bigint } {
    const staged = new Map<number, bigint>();
    const stagedKeys = new Map<string, number>();
    const groupRows: LogEntry[] = [];
    const applied: boolean[] = [];
    let originalLsn = 0n;
    for (const item of group) {
      if (item.idempotencyKey.length > 0) {
        const id = DedupIndex.keyOf(item.shardId, item.idempotencyKey);
        const seen = this.dedup.get(item.shardId, item.idempotencyKey, nowMs);
        // What this flush already decided wins over the index: it is newer.
        const fenceShardCount = stagedKeys.get(id) ?? tentativeKeys.get(id) ?? seen?.fenceShardCount;
        if (fenceShardCount === 0) {
          applied.push(false);
          if (seen !== undefined && seen.fenceShardCount === 0 && seen.lsn > originalLsn) originalLsn = seen.lsn;
          continue;
        }
        if (item.fence) {
          if (fenceShardCount === undefined || fenceShardCount < item.routedShardCount) {
            stagedKeys.set(id, item.routedShardCount);
            groupRows.push({ shardId: item.shardId, amount: 0n, idempotencyKey: item.idempotencyKey, fenceShardCount: item.routedShardCount });
          }
          applied.push(true);
          continue;
        }
        if (fenceShardCount !== undefined && item.routedShardCount < fenceShardCount) {
          // An attempt routed before a growth whose key a later attempt has
          // fenced here: it must not apply here, and it may not claim the key
          // applied (that attempt may never have). The caller retries and is
          // routed by the current shard count.
          return {
            outcome: { code: status.UNAVAILABLE, message: `key was routed by ${item.routedShardCount} shards; the counter has grown to ${fenceShardCount}: retry`, applied: [] },
            originalLsn: 0n,
          };
        }
        stagedKeys.set(id, 0);
      }
      const before = staged.get(item.shardId) ?? tentative.get(item.shardId) ?? this.totals.get(item.shardId);
      const after = before + item.amount;
      if (!isInt64(after)) {
        return {
          outcome: { code: status.OUT_OF_RANGE, message: `increment of ${item.amount} would take a shard total beyond int64`, applied: [] },
          originalLsn: 0n,
        };
      }
      staged.set(item.shardId, after);
      groupRows.push({ shardId: item.shardId, amount: item.amount, idempotencyKey: item.idempotencyKey, fenceShardCount: 0 });
      applied.push(true);
    }
    for (const [shardId, total] of staged) tentative.set(shardId, total);
    for (const [id, fenceShardCount] of stagedKeys) tentativeKeys.set(id, fenceShardCount);
    rows.push(...groupRows);
    return { outcome: { code: status.OK, message: '', applied }, originalLsn };
  }
}
