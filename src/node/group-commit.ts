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
  groups: LogEntry[][];
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
    private readonly hooks: CommitHooks,
    private readonly now: () => number = Date.now,
  ) {}

  /** Queues groups sent under `epoch`; they commit with whatever else arrives this tick. */
  submit(groups: LogEntry[][], epoch: bigint): Promise<CommitResult> {
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

    const tentative = new Map<number, bigint>();
    const rows: LogEntry[] = [];
    const outcomes: GroupOutcome[][] = batch.map((request) => request.groups.map((group) => this.stage(group, tentative, rows)));

    if (rows.length > 0) {
      const startedNs = process.hrtime.bigint();
      try {
        this.log.append(rows, role.epoch, this.now());
      } catch (error) {
        // Nothing reached memory; callers see the failure and know the outcome is unknown.
        for (const request of batch) request.reject(error);
        return;
      }
      for (const row of rows) this.totals.add(row.shardId, row.amount);
      this.hooks.onCommit(rows.length, Number(process.hrtime.bigint() - startedNs) / 1e9, this.log.lastLsn);
    }
    const lsn = this.log.lastLsn;
    const answer = (): void => batch.forEach((request, index) => request.resolve({ results: outcomes[index]!, lsn }));
    if (rows.length > 0 && role.syncRequired) {
      this.hooks.waitForFollower(lsn).then(answer, (error: unknown) => {
        for (const request of batch) request.reject(error);
      });
    } else {
      answer();
    }
  }

  private stage(group: LogEntry[], tentative: Map<number, bigint>, rows: LogEntry[]): GroupOutcome {
    const staged = new Map<number, bigint>();
    for (const item of group) {
      const before = staged.get(item.shardId) ?? tentative.get(item.shardId) ?? this.totals.get(item.shardId);
      const after = before + item.amount;
      if (!isInt64(after)) {
        return { code: status.OUT_OF_RANGE, message: `increment of ${item.amount} would take a shard total beyond int64`, applied: [] };
      }
      staged.set(item.shardId, after);
    }
    for (const [shardId, total] of staged) tentative.set(shardId, total);
    for (const item of group) rows.push(item);
    return { code: status.OK, message: '', applied: group.map(() => true) };
  }
}
