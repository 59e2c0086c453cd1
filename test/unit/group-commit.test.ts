// Unit tests for GroupCommitter with a real ShardLog and ShardTotals: one
// commit per tick, per-group int64 checks, and memory that matches the log.
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { status } from '@grpc/grpc-js';
import { GroupCommitter, type CommitObserver } from '../../src/node/group-commit.ts';
import { ShardLog, type LogEntry } from '../../src/node/shard-log.ts';
import { ShardTotals } from '../../src/node/shard-totals.ts';
import { INT64_MAX, INT64_MIN } from '../../src/common/limits.ts';
import { makeTempDir, removeTempDir } from './temp-dir.ts';
import { randomInt, seededRandom } from './seeded-random.ts';

function item(shardId: number, amount: bigint): LogEntry {
  return { shardId, amount, idempotencyKey: Buffer.alloc(0) };
}

class RecordingObserver implements CommitObserver {
  readonly commits: number[] = [];
  onCommit(rows: number): void {
    this.commits.push(rows);
  }
}

function totalsFromReplay(log: ShardLog): ShardTotals {
  const totals = new ShardTotals();
  log.replay((_lsn, shardId, amount) => totals.add(shardId, amount));
  return totals;
}

describe('group commit', () => {
  let dataDir: string;
  let log: ShardLog;
  let totals: ShardTotals;
  let observer: RecordingObserver;
  let committer: GroupCommitter;

  beforeEach(() => {
    dataDir = makeTempDir('group-commit');
    log = ShardLog.open(dataDir);
    totals = new ShardTotals();
    observer = new RecordingObserver();
    committer = new GroupCommitter(log, totals, observer, () => 5_000);
  });
  afterEach(() => {
    log.close();
    removeTempDir(dataDir);
  });

  it('group commit: submits in the same tick share one commit carrying all their rows', async () => {
    const outcomes = await Promise.all([
      committer.submit([[item(1, 1n), item(2, 2n)]]),
      committer.submit([[item(1, 3n)], [item(3, 4n)]]),
      committer.submit([[item(2, -5n)]]),
    ]);
    expect(observer.commits).toEqual([5]);
    expect(log.lastLsn).toBe(5n);
    for (const outcome of outcomes) {
      expect(outcome.lsn).toBe(5n);
      for (const result of outcome.results) expect(result.code).toBe(status.OK);
    }
    expect(outcomes[0]!.results[0]!.applied).toEqual([true, true]);
    expect(outcomes[1]!.results.map((result) => result.applied)).toEqual([[true], [true]]);
    expect([totals.get(1), totals.get(2), totals.get(3)]).toEqual([4n, -3n, 4n]);
  });

  it('group commit: submits in different ticks commit separately', async () => {
    await committer.submit([[item(1, 1n)]]);
    await committer.submit([[item(1, 1n), item(1, 1n)]]);
    expect(observer.commits).toEqual([1, 2]);
    expect(totals.get(1)).toBe(3n);
  });

  it('group commit: rows are logged with the injected clock', async () => {
    await committer.submit([[item(1, 1n)]]);
    const db = new Database(path.join(dataDir, 'node.sqlite'), { readonly: true });
    try {
      expect(db.prepare('SELECT at_ms FROM log').all()).toEqual([{ at_ms: 5_000 }]);
    } finally {
      db.close();
    }
  });

  it('group commit: a group that would overflow int64 gets OUT_OF_RANGE (11) and applies nothing, while other groups in the flush apply', async () => {
    await committer.submit([[item(1, INT64_MAX - 5n)]]);
    const lsnBefore = log.lastLsn;
    const [overflowing, fine] = await Promise.all([
      // The first item alone is fine; the group is atomic, so it must not apply either.
      committer.submit([[item(9, 1n), item(1, 6n)]]),
      committer.submit([[item(2, 7n)], [item(1, 5n)]]),
    ]);
    expect(status.OUT_OF_RANGE).toBe(11);
    expect(overflowing.results[0]!.code).toBe(11);
    expect(overflowing.results[0]!.applied.some((applied) => applied)).toBe(false);
    expect(fine.results.map((result) => result.code)).toEqual([status.OK, status.OK]);
    expect(totals.get(9)).toBe(0n);
    expect(totals.get(1)).toBe(INT64_MAX);
    expect(totals.get(2)).toBe(7n);
    // Only the two good rows reached the log.
    expect(log.lastLsn).toBe(lsnBefore + 2n);
    expect(totalsFromReplay(log).get(9)).toBe(0n);
  });

  it('group commit: groups that fit alone but overflow together: the later one fails', async () => {
    await committer.submit([[item(1, INT64_MIN + 10n)]]);
    const [first, second] = await Promise.all([committer.submit([[item(1, -6n)]]), committer.submit([[item(1, -6n)]])]);
    expect(first.results[0]!.code).toBe(status.OK);
    expect(second.results[0]!.code).toBe(status.OUT_OF_RANGE);
    expect(totals.get(1)).toBe(INT64_MIN + 4n);
  });

  it('group commit: a flush in which every group overflows commits nothing', async () => {
    await committer.submit([[item(1, INT64_MAX)]]);
    observer.commits.length = 0;
    const outcome = await committer.submit([[item(1, 1n)], [item(1, INT64_MAX)]]);
    expect(outcome.results.map((result) => result.code)).toEqual([status.OUT_OF_RANGE, status.OUT_OF_RANGE]);
    expect(observer.commits).toEqual([]);
    expect(outcome.lsn).toBe(1n);
    expect(totals.get(1)).toBe(INT64_MAX);
  });

  it('group commit: a failed log commit rejects every caller in the flush and changes no total', async () => {
    await committer.submit([[item(1, 10n)]]);
    log.close();
    const results = await Promise.allSettled([committer.submit([[item(1, 1n)]]), committer.submit([[item(2, 1n)]])]);
    expect(results.map((result) => result.status)).toEqual(['rejected', 'rejected']);
    expect(totals.get(1)).toBe(10n);
    expect(totals.get(2)).toBe(0n);
    expect(observer.commits).toEqual([1]);
  });

  it('group commit: totals in memory equal a replay of the log after many mixed flushes (random input)', async () => {
    const random = seededRandom(0x6c0_0001);
    const near = INT64_MAX / 4n;
    const codes: number[] = [];
    for (let round = 0; round < 40; round++) {
      const submits: ReturnType<GroupCommitter['submit']>[] = [];
      for (let request = 0; request < randomInt(random, 1, 6); request++) {
        const groups: LogEntry[][] = [];
        for (let group = 0; group < randomInt(random, 1, 4); group++) {
          groups.push(
            Array.from({ length: randomInt(random, 1, 5) }, () => {
              // Huge amounts make some groups overflow; small ones make most apply.
              const huge = random() < 0.2;
              const sign = random() < 0.5 ? -1n : 1n;
              const amount = huge ? sign * (near + BigInt(randomInt(random, 1, 1_000))) : sign * BigInt(randomInt(random, 1, 1_000));
              return item(randomInt(random, 1, 4), amount);
            }),
          );
        }
        submits.push(committer.submit(groups));
      }
      for (const outcome of await Promise.all(submits)) codes.push(...outcome.results.map((result) => result.code));
    }
    // The input must exercise both paths for the comparison to mean anything.
    expect(codes.filter((code) => code === status.OK).length).toBeGreaterThan(10);
    expect(codes.filter((code) => code === status.OUT_OF_RANGE).length).toBeGreaterThan(10);
    const replayed = totalsFromReplay(log);
    for (let shardId = 1; shardId <= 4; shardId++) expect(totals.get(shardId)).toBe(replayed.get(shardId));
    log.close();
    log = ShardLog.open(dataDir);
    const afterReopen = totalsFromReplay(log);
    for (let shardId = 1; shardId <= 4; shardId++) expect(afterReopen.get(shardId)).toBe(totals.get(shardId));
  });
});
