// Group commit: every Apply that arrives while the event loop is busy (most
// often, busy committing the previous group) joins one transaction and one
// fsync. Each group is atomic and is checked alone: a group that would push a
// shard total beyond int64 fails OUT_OF_RANGE without touching the others.
import { status } from '@grpc/grpc-js';
import { isInt64 } from '../common/index.ts';
import type { ShardLog, LogEntry } from './shard-log.ts';
import type { ShardTotals } from './shard-totals.ts';

export interface GroupOutcome {
  code: number;
  message: string;
  applied: boolean[];
}

interface Pending {
  groups: LogEntry[][];
  resolve: (outcome: { results: GroupOutcome[]; lsn: bigint }) => void;
  reject: (error: unknown) => void;
}

export interface CommitObserver {
  onCommit(rows: number, durationSeconds: number): void;
}

export class GroupCommitter {
  private pending: Pending[] = [];
  private flushScheduled = false;

  constructor(
    private readonly log: ShardLog,
    private readonly totals: ShardTotals,
    private readonly observer: CommitObserver,
    private readonly now: () => number = Date.now,
  ) {}

  submit(groups: LogEntry[][]): Promise<{ results: GroupOutcome[]; lsn: bigint }> {
    return new Promise((resolve, reject) => {
      this.pending.push({ groups, resolve, reject });
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  /** Commits everything pending now. Synchronous: nothing interleaves with it. */
  flush(): void {
    this.flushScheduled = false;
    const batch = this.pending;
    this.pending = [];
    if (batch.length === 0) return;

    const tentative = new Map<number, bigint>();
    const rows: LogEntry[] = [];
    const outcomes: GroupOutcome[][] = batch.map((request) =>
      request.groups.map((group) => this.stage(group, tentative, rows)),
    );

    if (rows.length > 0) {
      const startedNs = process.hrtime.bigint();
      try {
        this.log.append(rows, this.now());
      } catch (error) {
        // Nothing reached memory; callers see the failure and know the outcome is unknown.
        for (const request of batch) request.reject(error);
        return;
      }
      this.observer.onCommit(rows.length, Number(process.hrtime.bigint() - startedNs) / 1e9);
      for (const row of rows) this.totals.add(row.shardId, row.amount);
    }
    const lsn = this.log.lastLsn;
    batch.forEach((request, index) => request.resolve({ results: outcomes[index]!, lsn }));
  }

  private stage(group: LogEntry[], tentative: Map<number, bigint>, rows: LogEntry[]): GroupOutcome {
    const staged = new Map<number, bigint>();
    for (const item of group) {
      const before = staged.get(item.shardId) ?? tentative.get(item.shardId) ?? this.totals.get(item.shardId);
      const after = before + item.amount;
      if (!isInt64(after)) {
        return {
          code: status.OUT_OF_RANGE,
          message: `increment of ${item.amount} would take a shard total beyond int64`,
          applied: [],
        };
      }
      staged.set(item.shardId, after);
    }
    for (const [shardId, total] of staged) tentative.set(shardId, total);
    for (const item of group) rows.push(item);
    return { code: status.OK, message: '', applied: group.map(() => true) };
  }
}
