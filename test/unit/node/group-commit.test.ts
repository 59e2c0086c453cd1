// Unit tests for GroupCommitter with a real ShardLog, ShardTotals and
// DedupIndex: one commit per tick, per-group int64 checks, epoch fencing,
// idempotency keys and key fences, and memory that matches the log.
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { status } from '@grpc/grpc-js';
import { GroupCommitter, type ApplyEntry, type CommitHooks, type CommitResult } from '../../../src/node/write/group-commit.ts';
import { ShardLog } from '../../../src/node/log/index.ts';
import { ShardTotals } from '../../../src/node/state/shard-totals.ts';
import { NodeMemory, checkpointFolder } from '../../../src/node/state/node-memory.ts';
import { EntryKind, type LogEntry } from '../../../src/node/log/index.ts';
import { DedupIndex } from '../../../src/node/state/dedup-index.ts';
import type { RoleState } from '../../../src/node/state/node-role.ts';
import { rebuildMemory } from '../../../src/node/state/recovery.ts';
import { TallyError, INT64_MAX, INT64_MIN } from '../../../src/wire/index.ts';
import { makeTempDir, removeTempDir } from '../../helpers/temp-dir.ts';
import { randomInt, seededRandom } from '../../helpers/seeded-random.ts';
import { applyEntry } from '../../helpers/log-entries.ts';

const dedupWindowMs = 60_000;

function increment(shardId: number, amount: bigint, key = '', routedShardCount = 1): ApplyEntry {
  return { shardId, amount, idempotencyKey: Buffer.from(key), fenceShardCount: 0, fence: false, routedShardCount, op: 'increment' };
}

function fence(shardId: number, key: string, routedShardCount: number): ApplyEntry {
  return { shardId, amount: 0n, idempotencyKey: Buffer.from(key), fenceShardCount: 0, fence: true, routedShardCount, op: 'increment' };
}

class RecordingHooks implements CommitHooks {
  readonly commits: { rows: number; lastLsn: bigint }[] = [];
  readonly followerWaits: bigint[] = [];
  follower: Promise<void> = Promise.resolve();
  readonly committedRows: LogEntry[][] = [];
  onCommit(rows: readonly LogEntry[], _durationSeconds: number, lastLsn: bigint): void {
    this.commits.push({ rows: rows.length, lastLsn });
    this.committedRows.push([...rows]);
  }
  waitForFollower(lsn: bigint): Promise<void> {
    this.followerWaits.push(lsn);
    return this.follower;
  }
}

/** Lets pending immediates (the flush) and the promise callbacks after them run. */
async function nextTurns(turns = 3): Promise<void> {
  for (let turn = 0; turn < turns; turn++) await new Promise((resolve) => setImmediate(resolve));
}

describe('group commit', () => {
  let dataDir: string;
  let log: ShardLog;
  let totals: ShardTotals;
  let memory: NodeMemory;
  let dedup: DedupIndex;
  let hooks: RecordingHooks;
  let role: RoleState;
  let nowMs: number;
  let committer: GroupCommitter;
  const epoch = 3n;

  const submit = (groups: ApplyEntry[][]): Promise<CommitResult> => committer.submit(groups, epoch);

  beforeEach(() => {
    dataDir = makeTempDir('group-commit');
    log = ShardLog.open(dataDir);
    memory = new NodeMemory();
    totals = memory.totals;
    dedup = new DedupIndex(dedupWindowMs);
    hooks = new RecordingHooks();
    role = { role: 'primary', epoch, peer: 'follower:1', syncRequired: false, epochStartLsn: 0n, configVersion: 0n };
    nowMs = 5_000;
    committer = new GroupCommitter(
      log,
      memory,
      () => role,
      dedup,
      hooks,
      () => nowMs,
    );
  });
  afterEach(() => {
    log.close();
    removeTempDir(dataDir);
  });

  describe('batching and int64', () => {
    it('group commit: submits in the same tick share one commit, one row per shard for unkeyed increments', async () => {
      const outcomes = await Promise.all([
        submit([[increment(1, 1n), increment(2, 2n)]]),
        submit([[increment(1, 3n)], [increment(3, 4n)]]),
        submit([[increment(2, -5n)]]),
      ]);
      expect(hooks.commits).toEqual([{ rows: 3, lastLsn: 3n }]);
      expect(log.lastLsn).toBe(3n);
      for (const outcome of outcomes) {
        expect(outcome.lsn).toBe(3n);
        for (const result of outcome.results) expect(result.code).toBe(status.OK);
      }
      expect(outcomes[0]!.results[0]!.applied).toEqual([true, true]);
      expect(outcomes[1]!.results.map((result) => result.applied)).toEqual([[true], [true]]);
      expect([totals.get(1), totals.get(2), totals.get(3)]).toEqual([4n, -3n, 4n]);
    });

    it('group commit: submits in different ticks commit separately', async () => {
      await submit([[increment(1, 1n)]]);
      await submit([[increment(1, 1n), increment(2, 1n)]]);
      expect(hooks.commits.map((commit) => commit.rows)).toEqual([1, 2]);
      expect(totals.get(1)).toBe(2n);
    });

    it("group commit: rows are logged with the injected clock and the role's epoch", async () => {
      nowMs = 7_777;
      await submit([[increment(1, 1n)]]);
      const db = new Database(path.join(dataDir, 'node.sqlite'), { readonly: true });
      try {
        expect(db.prepare('SELECT at_ms, epoch FROM log').all()).toEqual([{ at_ms: 7_777, epoch: 3 }]);
      } finally {
        db.close();
      }
      expect(log.lastEpoch).toBe(epoch);
    });

    it('group commit: a group that would overflow int64 gets OUT_OF_RANGE (11) and applies nothing, while other groups in the flush apply', async () => {
      await submit([[increment(1, INT64_MAX - 5n)]]);
      const lsnBefore = log.lastLsn;
      const [overflowing, fine] = await Promise.all([
        // The first item alone is fine; the group is atomic, so it must not apply either.
        submit([[increment(9, 1n), increment(1, 6n)]]),
        submit([[increment(2, 7n)], [increment(1, 5n)]]),
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
    });

    it('group commit: groups that fit alone but overflow together: the later one fails', async () => {
      await submit([[increment(1, INT64_MIN + 10n)]]);
      const [first, second] = await Promise.all([submit([[increment(1, -6n)]]), submit([[increment(1, -6n)]])]);
      expect(first.results[0]!.code).toBe(status.OK);
      expect(second.results[0]!.code).toBe(status.OUT_OF_RANGE);
      expect(totals.get(1)).toBe(INT64_MIN + 4n);
    });

    it('group commit: a flush in which every group overflows commits nothing', async () => {
      await submit([[increment(1, INT64_MAX)]]);
      const outcome = await submit([[increment(1, 1n)], [increment(1, INT64_MAX)]]);
      expect(outcome.results.map((result) => result.code)).toEqual([status.OUT_OF_RANGE, status.OUT_OF_RANGE]);
      expect(hooks.commits).toHaveLength(1);
      expect(outcome.lsn).toBe(1n);
      expect(totals.get(1)).toBe(INT64_MAX);
    });

    it('group commit: a keyed item in a group that overflows leaves its key unused', async () => {
      await submit([[increment(1, INT64_MAX)]]);
      const [failed, retried] = await Promise.all([submit([[increment(2, 1n, 'k'), increment(1, 1n)]]), submit([[increment(2, 1n, 'k')]])]);
      expect(failed.results[0]!.code).toBe(status.OUT_OF_RANGE);
      expect(retried.results[0]).toMatchObject({ code: status.OK, applied: [true] });
      expect(totals.get(2)).toBe(1n);
    });

    it('group commit: a failed log commit rejects every caller in the flush and changes no total or key', async () => {
      await submit([[increment(1, 10n)]]);
      log.close();
      const results = await Promise.allSettled([submit([[increment(1, 1n, 'k')]]), submit([[increment(2, 1n)]])]);
      expect(results.map((result) => result.status)).toEqual(['rejected', 'rejected']);
      expect(totals.get(1)).toBe(10n);
      expect(totals.get(2)).toBe(0n);
      expect(dedup.get(1, Buffer.from('k'), nowMs)).toBeUndefined();
      expect(hooks.commits).toHaveLength(1);
    });
  });

  describe('epochs and the follower', () => {
    it('group commit: a request from another epoch is refused with failed_precondition and writes nothing', async () => {
      const [stale, current] = await Promise.allSettled([committer.submit([[increment(1, 1n)]], epoch - 1n), submit([[increment(1, 2n)]])]);
      expect(stale.status).toBe('rejected');
      expect((stale as PromiseRejectedResult).reason).toBeInstanceOf(TallyError);
      expect(((stale as PromiseRejectedResult).reason as TallyError).code).toBe('failed_precondition');
      expect(current.status).toBe('fulfilled');
      expect(totals.get(1)).toBe(2n);
      expect(log.lastLsn).toBe(1n);
    });

    it('group commit: a node demoted before the flush refuses what was queued', async () => {
      const pending = submit([[increment(1, 1n)]]);
      role = { ...role, role: 'follower' };
      await expect(pending).rejects.toMatchObject({ code: 'failed_precondition' });
      expect(log.lastLsn).toBe(0n);
      expect(totals.get(1)).toBe(0n);
    });

    it('group commit: while sync is required, callers are answered only after the follower holds the commit', async () => {
      role = { ...role, syncRequired: true };
      let releaseFollower!: () => void;
      hooks.follower = new Promise((resolve) => (releaseFollower = resolve));
      let answered = false;
      const pending = submit([[increment(1, 1n), increment(2, 1n)]]).then((outcome) => {
        answered = true;
        return outcome;
      });
      await nextTurns();
      expect(log.lastLsn).toBe(2n);
      expect(hooks.followerWaits).toEqual([2n]);
      expect(answered).toBe(false);
      releaseFollower();
      expect((await pending).lsn).toBe(2n);
      expect(answered).toBe(true);
    });

    it('group commit: when the follower does not confirm, the callers get an error', async () => {
      role = { ...role, syncRequired: true };
      hooks.follower = Promise.reject(new Error('follower timed out'));
      hooks.follower.catch(() => {});
      await expect(submit([[increment(1, 1n)]])).rejects.toThrow('follower timed out');
    });

    it('group commit: while sync is required, a duplicate is answered only after the follower holds its original', async () => {
      await submit([[increment(1, 1n, 'k')]]);
      await submit([[increment(2, 1n)]]);
      role = { ...role, syncRequired: true };
      const outcome = await submit([[increment(1, 1n, 'k')]]);
      expect(outcome.results[0]!.applied).toEqual([false]);
      expect(hooks.followerWaits).toEqual([1n]);
    });

    it('group commit: while sync is required, a fence already there is answered only after the follower holds it', async () => {
      // The fence row at lsn 1, then other work: a failover that lost the fence would let an older attempt apply here.
      await submit([[fence(1, 'k', 4)]]);
      await submit([[increment(2, 1n)]]);
      role = { ...role, syncRequired: true };
      const again = await submit([[fence(1, 'k', 4)]]);
      expect(again.results[0]!.applied).toEqual([true]);
      expect(log.lastLsn, 'the fence is there: nothing new is written').toBe(2n);
      expect(hooks.followerWaits).toEqual([1n]);
      // A fence from fewer shards than the one there is covered by it: the same wait.
      const covered = await submit([[fence(1, 'k', 2)]]);
      expect(covered.results[0]!.applied).toEqual([true]);
      expect(hooks.followerWaits).toEqual([1n, 1n]);
    });

    it('group commit: while sync is required, a drop or clear re-sent after it was committed answers only after the follower holds what is committed', async () => {
      await submit([[applyEntry(1, 'clear', { generation: 1 })], [applyEntry(2, 'drop')]]);
      await submit([[increment(3, 1n)]]);
      const committed = log.lastLsn;
      role = { ...role, syncRequired: true };
      let releaseFollower!: () => void;
      hooks.follower = new Promise((resolve) => (releaseFollower = resolve));
      let answered = false;
      const pending = submit([[applyEntry(1, 'clear', { generation: 1 })], [applyEntry(2, 'drop')]]).then((outcome) => {
        answered = true;
        return outcome;
      });
      await nextTurns();
      expect(log.lastLsn, 'already done: nothing new is written').toBe(committed);
      expect(hooks.followerWaits).toEqual([committed]);
      expect(answered, 'the router forgets the task on this answer: not before the follower holds it').toBe(false);
      releaseFollower();
      expect((await pending).results.map((result) => result.applied)).toEqual([[false], [false]]);
    });

    it('group commit: without sync the follower is never waited for', async () => {
      await submit([[increment(1, 1n)]]);
      expect(hooks.followerWaits).toEqual([]);
    });
  });

  describe('member flips, sketch registers, repairs and windows', () => {
    const memberSet = (shardId: number, member: bigint, present: boolean): ApplyEntry => ({
      ...increment(shardId, 0n),
      op: 'memberSet',
      member,
      present,
    });
    const distinct = (shardId: number, registers: [number, number][]): ApplyEntry => ({
      ...increment(shardId, 0n),
      op: 'distinct',
      registers,
    });
    const repair = (shardId: number): ApplyEntry => ({ ...increment(shardId, 0n), op: 'memberRepair' });

    it('group commit: flips of one member within one flush see each other: like, like, unlike, unlike logs two entries', async () => {
      const outcome = await submit([
        [memberSet(1, 9n, true)],
        [memberSet(1, 9n, true), memberSet(1, 9n, false)],
        [memberSet(1, 9n, false)],
      ]);
      expect(outcome.results.map((result) => result.applied)).toEqual([[true], [false, true], [false]]);
      expect(outcome.results.map((result) => result.changed)).toEqual([['1'], ['0', '1'], ['0']]);
      expect(hooks.commits).toEqual([{ rows: 2, lastLsn: 2n }]);
      expect([totals.get(1), memory.memberCount(1), memory.hasMember(1, 9n)]).toEqual([0n, 0, false]);
      const again = await submit([[memberSet(1, 9n, true)]]);
      expect(again.results[0]!.applied).toEqual([true]);
      expect([totals.get(1), memory.hasMember(1, 9n)]).toEqual([1n, true]);
    });

    it('group commit: a failed group leaves no member flip or register behind for the rest of the flush', async () => {
      await submit([[increment(2, INT64_MAX)]]);
      const outcome = await submit([
        [memberSet(1, 5n, true), distinct(3, [[7, 4]]), increment(2, 1n)],
        [memberSet(1, 5n, true), distinct(3, [[7, 4]])],
      ]);
      expect(outcome.results[0]!.code).toBe(status.OUT_OF_RANGE);
      // The second group does not see the first's staged flip or register.
      expect(outcome.results[1]!.applied).toEqual([true, true]);
      expect(outcome.results[1]!.changed).toEqual(['1', '1']);
      expect([memory.memberCount(1), memory.register(3, 7)]).toEqual([1, 4]);
    });

    it('group commit: registers are logged only when they rise, also within one flush', async () => {
      const outcome = await submit([
        [
          distinct(1, [
            [10, 3],
            [11, 2],
          ]),
        ],
        [
          distinct(1, [
            [10, 2],
            [11, 5],
            [12, 1],
          ]),
        ],
        [distinct(1, [[10, 3]])],
      ]);
      expect(outcome.results.map((result) => result.changed)).toEqual([['2'], ['2'], ['0']]);
      expect([memory.register(1, 10), memory.register(1, 11), memory.register(1, 12)]).toEqual([3, 5, 1]);
      expect(hooks.commits[0]!.rows).toBe(2);
    });

    it('group commit: a repair sets the total to the member count once, and flips in the same flush keep them equal', async () => {
      await submit([[memberSet(1, 1n, true), memberSet(1, 2n, true)]]);
      // Drift as a corrupted or hand-edited log would leave it: a plain increment on a partition.
      await submit([[increment(1, 5n)]]);
      expect([totals.get(1), memory.memberCount(1)]).toEqual([7n, 2]);
      const outcome = await submit([[memberSet(1, 3n, true), repair(1)], [repair(1)]]);
      expect(outcome.results.map((result) => result.changed)).toEqual([['1', '-5'], ['0']]);
      expect([totals.get(1), memory.memberCount(1)]).toEqual([3n, 3]);
    });

    it('group commit: while sync is required, a member set or register that changes nothing is answered only after the follower holds what it read', async () => {
      await submit([[memberSet(1, 4n, true)], [distinct(2, [[3, 5]])]]);
      await submit([[increment(3, 1n)]]);
      role = { ...role, syncRequired: true };
      const outcome = await submit([[memberSet(1, 4n, true)], [distinct(2, [[3, 2]])]]);
      expect(outcome.results.map((result) => result.changed)).toEqual([['0'], ['0']]);
      // Nothing was written, yet the answer waited for everything committed before it.
      expect(hooks.followerWaits).toEqual([3n]);
    });

    it('node memory: replicated flips to the state a member already has are refused before anything is written', async () => {
      await submit([[memberSet(1, 4n, true)]]);
      const flip = (member: bigint, amount: bigint) => ({
        shardId: 1,
        amount,
        idempotencyKey: Buffer.alloc(0),
        fenceShardCount: 0,
        kind: EntryKind.memberFlip,
        member,
      });
      expect(memory.flipProblem([flip(4n, -1n), flip(4n, 1n), flip(5n, 1n)])).toBeUndefined();
      expect(memory.flipProblem([flip(4n, 1n)])).toMatch(/already present/);
      expect(memory.flipProblem([flip(5n, 1n), flip(5n, 1n)])).toMatch(/already present/);
      expect(memory.flipProblem([flip(6n, -1n)])).toMatch(/already absent/);
    });

    it('group commit: an increment that would take its window bucket beyond int64 fails OUT_OF_RANGE, though the shard total would fit', async () => {
      const windowed = (amount: bigint): ApplyEntry => ({ ...increment(1, amount), window: { bucketMs: 60_000, retentionMs: 600_000 } });
      nowMs = 1_000;
      await submit([[windowed(INT64_MIN)]]);
      nowMs = 70_000;
      expect((await submit([[windowed(INT64_MAX)]])).results[0]!.code).toBe(status.OK);
      const outcome = await submit([[windowed(1n)], [windowed(INT64_MAX)]]);
      expect(outcome.results.map((result) => result.code)).toEqual([status.OUT_OF_RANGE, status.OUT_OF_RANGE]);
      expect(totals.get(1)).toBe(-1n);
      expect(memory.windows.buckets(1)).toEqual([
        [0, INT64_MIN],
        [60_000, INT64_MAX],
      ]);
    });

    it('group commit: the window setting is logged once per change and increments land in the bucket of their commit time', async () => {
      const windowed = (amount: bigint, bucketMs: number, retentionMs: number): ApplyEntry => ({
        ...increment(1, amount),
        window: { bucketMs, retentionMs },
      });
      nowMs = 61_500;
      await submit([[windowed(2n, 60_000, 600_000)], [windowed(3n, 60_000, 600_000)]]);
      // The setting, then both increments in one row: same shard, setting and commit time.
      expect(hooks.commits.at(-1)!.rows).toBe(2);
      nowMs = 125_000;
      await submit([[windowed(4n, 60_000, 600_000)]]);
      expect(hooks.commits.at(-1)!.rows).toBe(1);
      expect(memory.windows.buckets(1)).toEqual([
        [60_000, 5n],
        [120_000, 4n],
      ]);
      // A new bucket size restarts the history; the lifetime total is untouched.
      await submit([[windowed(1n, 1_000, 10_000)]]);
      expect(hooks.commits.at(-1)!.rows).toBe(2);
      expect(memory.windows.buckets(1)).toEqual([[125_000, 1n]]);
      expect(totals.get(1)).toBe(10n);
      // A duplicate key lands in no bucket.
      await submit([[{ ...windowed(6n, 1_000, 10_000), idempotencyKey: Buffer.from('k'), routedShardCount: 1 }]]);
      await submit([[{ ...windowed(6n, 1_000, 10_000), idempotencyKey: Buffer.from('k'), routedShardCount: 1 }]]);
      expect(memory.windows.buckets(1)).toEqual([[125_000, 7n]]);
    });
  });

  describe('idempotency keys and fences', () => {
    it('group commit: the same key twice at a shard in one flush applies once', async () => {
      const [first, second] = await Promise.all([submit([[increment(1, 5n, 'k')]]), submit([[increment(1, 5n, 'k')]])]);
      expect(first.results[0]!.applied).toEqual([true]);
      expect(second.results[0]!.applied).toEqual([false]);
      expect(totals.get(1)).toBe(5n);
      expect(log.lastLsn).toBe(1n);
    });

    it('group commit: a key seen in an earlier flush is a duplicate within the window and applies again after it', async () => {
      await submit([[increment(1, 5n, 'k')]]);
      nowMs += dedupWindowMs - 1;
      expect((await submit([[increment(1, 5n, 'k')]])).results[0]!.applied).toEqual([false]);
      expect(totals.get(1)).toBe(5n);
      nowMs += 1;
      expect((await submit([[increment(1, 5n, 'k')]])).results[0]!.applied).toEqual([true]);
      expect(totals.get(1)).toBe(10n);
    });

    it('group commit: keys are per shard: the same key applies once at each shard', async () => {
      const outcome = await submit([[increment(1, 1n, 'k'), increment(2, 1n, 'k'), increment(1, 1n, 'k')]]);
      expect(outcome.results[0]!.applied).toEqual([true, true, false]);
      expect([totals.get(1), totals.get(2)]).toEqual([1n, 1n]);
    });

    it('group commit: a fence records the key without changing the total', async () => {
      const outcome = await submit([[fence(1, 'k', 4)]]);
      expect(outcome.results[0]).toMatchObject({ code: status.OK, applied: [true] });
      expect(totals.get(1)).toBe(0n);
      expect(log.readFrom(1n, 10)).toEqual([expect.objectContaining({ shardId: 1, amount: 0n, fenceShardCount: 4 })]);
    });

    it('group commit: after a fence, an attempt routed over fewer shards fails UNAVAILABLE (retry re-routes) and one routed over as many applies', async () => {
      await submit([[fence(1, 'k', 4)]]);
      // Not applied=false: that would claim the key applied, which nothing proves.
      const stale = (await submit([[increment(1, 5n, 'k', 2)]])).results[0]!;
      expect(stale.code).toBe(status.UNAVAILABLE);
      expect(stale.applied).toEqual([]);
      expect(totals.get(1)).toBe(0n);
      expect((await submit([[increment(1, 5n, 'k', 4)]])).results[0]!.applied).toEqual([true]);
      expect(totals.get(1)).toBe(5n);
      // Once applied, every further attempt is a duplicate.
      expect((await submit([[increment(1, 5n, 'k', 8)]])).results[0]!.applied).toEqual([false]);
      expect(totals.get(1)).toBe(5n);
    });

    it('group commit: a fence where the key already applied reports the duplicate and writes nothing', async () => {
      await submit([[increment(1, 5n, 'k')]]);
      const outcome = await submit([[fence(1, 'k', 4)]]);
      expect(outcome.results[0]!.applied).toEqual([false]);
      expect(log.lastLsn).toBe(1n);
    });

    it('group commit: a fence no wider than the one in place writes no new row', async () => {
      await submit([[fence(1, 'k', 4)]]);
      expect((await submit([[fence(1, 'k', 4)]])).results[0]!.applied).toEqual([true]);
      expect((await submit([[fence(1, 'k', 3)]])).results[0]!.applied).toEqual([true]);
      expect(log.lastLsn).toBe(1n);
      await submit([[fence(1, 'k', 6)]]);
      expect(log.lastLsn).toBe(2n);
      expect((await submit([[increment(1, 5n, 'k', 4)]])).results[0]!.code).toBe(status.UNAVAILABLE);
    });

    it('group commit: with memory for 5 keys in front of the log, the oldest of 50 keys is a duplicate and an old fence still refuses a stale attempt', async () => {
      dedup = new DedupIndex(dedupWindowMs, 5, log);
      committer = new GroupCommitter(
        log,
        memory,
        () => role,
        dedup,
        hooks,
        () => nowMs,
      );
      await submit([[fence(2, 'fenced', 4)]]);
      for (let n = 0; n < 50; n++) {
        nowMs += 10;
        await submit([[increment(1, 1n, `key-${n}`)]]);
      }
      expect(dedup.size).toBe(5);
      const retry = await submit([[increment(1, 1n, 'key-0')], [increment(2, 1n, 'fenced', 2)], [increment(2, 1n, 'fenced', 4)]]);
      expect(retry.results.map((result) => result.code)).toEqual([status.OK, status.UNAVAILABLE, status.OK]);
      expect(retry.results.map((result) => result.applied)).toEqual([[false], [], [true]]);
      expect((await submit([[increment(2, 1n, 'fenced', 4)]])).results[0]!.applied).toEqual([false]);
      expect([totals.get(1), totals.get(2)]).toEqual([50n, 1n]);
      expect(dedup.diskLookups).toBeGreaterThanOrEqual(2);
      // Past the window, the oldest key applies again.
      nowMs += dedupWindowMs;
      expect((await submit([[increment(1, 1n, 'key-0')]])).results[0]!.applied).toEqual([true]);
    });

    it('group commit: on a full disk keyed and unkeyed increments are refused RESOURCE_EXHAUSTED and nothing is applied or remembered', async () => {
      await submit([[increment(1, 1n, 'before')]]);
      log.setPageCountMax(1);
      const groups = [
        [increment(1, 5n, `full-${'k'.repeat(120)}`)],
        [increment(2, 7n)],
        ...Array.from({ length: 400 }, (_, n) => [increment(3, 1n, `${n}-${'x'.repeat(120)}`)]),
      ];
      const refused = await committer.submit(groups, epoch).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(TallyError);
      expect(refused).toMatchObject({ code: 'resource_exhausted', grpcCode: status.RESOURCE_EXHAUSTED });
      expect((refused as TallyError).message).toMatch(/^node data directory is full: /);
      expect([log.lastLsn, totals.get(1), totals.get(2), totals.get(3)]).toEqual([1n, 1n, 0n, 0n]);
      expect(dedup.get(1, Buffer.from(`full-${'k'.repeat(120)}`), nowMs)).toBeUndefined();
      expect(hooks.commits).toHaveLength(1);
      // With room again, the same keys apply: the refused attempt left no trace.
      log.setPageCountMax(1_000_000);
      const outcome = await committer.submit(groups, epoch);
      expect(outcome.results.every((result) => result.applied[0] === true)).toBe(true);
      expect([totals.get(1), totals.get(2), totals.get(3)]).toEqual([6n, 7n, 400n]);
    });

    it('group commit: keys and fences still hold after the log is replayed into fresh memory (restart)', async () => {
      await submit([[increment(1, 5n, 'applied')], [fence(2, 'fenced', 4)]]);
      log.close();
      log = ShardLog.open(dataDir);
      memory = new NodeMemory();
      totals = memory.totals;
      dedup = new DedupIndex(dedupWindowMs);
      expect(rebuildMemory(log, memory, dedup, nowMs, dedupWindowMs)).toBe(2n);
      committer = new GroupCommitter(
        log,
        memory,
        () => role,
        dedup,
        hooks,
        () => nowMs,
      );
      const outcome = await submit([[increment(1, 5n, 'applied')], [increment(2, 5n, 'fenced', 2)]]);
      expect(outcome.results.map((result) => result.applied)).toEqual([[false], []]);
      expect(outcome.results[1]!.code).toBe(status.UNAVAILABLE);
      expect([totals.get(1), totals.get(2)]).toEqual([5n, 0n]);
    });
  });

  describe('merged rows', () => {
    const rowsOf = (commit: number): LogEntry[] => hooks.committedRows[commit]!;

    it('group commit: rows per commit track hot shards, not increments: 600 unkeyed increments on 3 shards make 3 rows', async () => {
      const submits: Promise<CommitResult>[] = [];
      for (let request = 0; request < 50; request++)
        submits.push(
          submit([
            [increment(1, 1n), increment(2, 2n)],
            [increment(3, 3n), increment(1, 1n)],
            [increment(2, 2n), increment(3, 3n)],
          ]),
        );
      const outcomes = await Promise.all(submits);
      for (const outcome of outcomes)
        for (const result of outcome.results) expect(result).toMatchObject({ code: status.OK, applied: [true, true] });
      expect(hooks.commits).toEqual([{ rows: 3, lastLsn: 3n }]);
      expect(rowsOf(0).map((row) => [row.shardId, row.amount])).toEqual([
        [1, 100n],
        [2, 200n],
        [3, 300n],
      ]);
      // Replay sees ordinary rows.
      log.close();
      log = ShardLog.open(dataDir);
      const replayed = new NodeMemory();
      rebuildMemory(log, replayed, new DedupIndex(dedupWindowMs), nowMs, dedupWindowMs);
      expect([1, 2, 3].map((shardId) => replayed.totals.get(shardId))).toEqual([100n, 200n, 300n]);
    });

    it('group commit: a group that would overflow int64 still fails alone when its shard row is merged with others', async () => {
      await submit([[increment(1, INT64_MAX - 10n)]]);
      const outcomes = await Promise.all([
        submit([[increment(1, 3n)]]),
        submit([[increment(2, 1n), increment(1, 20n)]]),
        submit([[increment(1, 4n)], [increment(1, 4n)]]),
      ]);
      expect(outcomes.map((outcome) => outcome.results.map((result) => result.code))).toEqual([
        [status.OK],
        [status.OUT_OF_RANGE],
        [status.OK, status.OUT_OF_RANGE],
      ]);
      expect(outcomes[1]!.results[0]!.applied).toEqual([]);
      // One row for shard 1 (3 + 4); nothing of the failed groups, shard 2 included.
      expect(rowsOf(1).map((row) => [row.shardId, row.amount])).toEqual([[1, 7n]]);
      expect(totals.get(1)).toBe(INT64_MAX - 3n);
      expect(totals.get(2)).toBe(0n);
    });

    it('group commit: a merged amount that would leave int64 starts a second row of the shard', async () => {
      await submit([[increment(1, INT64_MIN + 1n)]]);
      const outcome = await submit([[increment(1, INT64_MAX)], [increment(1, INT64_MAX)]]);
      expect(outcome.results.map((result) => result.code)).toEqual([status.OK, status.OK]);
      expect(rowsOf(1).map((row) => row.amount)).toEqual([INT64_MAX, INT64_MAX]);
      expect(totals.get(1)).toBe(INT64_MAX);
      log.close();
      log = ShardLog.open(dataDir);
      const replayed = new NodeMemory();
      rebuildMemory(log, replayed, new DedupIndex(dedupWindowMs), nowMs, dedupWindowMs);
      expect(replayed.totals.get(1)).toBe(INT64_MAX);
    });

    it('group commit: keyed increments keep a row each and close the open row; fences leave it open; a window setting closes it', async () => {
      const windowed = (amount: bigint, bucketMs: number): ApplyEntry => ({
        ...increment(1, amount),
        window: { bucketMs, retentionMs: 600_000 },
      });
      await submit([
        [increment(1, 1n), increment(1, 2n)],
        [fence(1, 'f', 2), increment(1, 3n)],
        [increment(1, 4n, 'k1'), increment(1, 5n)],
        [increment(1, 6n, 'k2')],
        [windowed(7n, 60_000), windowed(8n, 60_000)],
      ]);
      expect(rowsOf(0).map((row) => [row.kind ?? 0, row.amount, row.idempotencyKey.toString()])).toEqual([
        [EntryKind.increment, 6n, ''],
        [EntryKind.increment, 0n, 'f'],
        [EntryKind.increment, 4n, 'k1'],
        [EntryKind.increment, 5n, ''],
        [EntryKind.increment, 6n, 'k2'],
        [EntryKind.windowConfig, 0n, ''],
        [EntryKind.increment, 15n, ''],
      ]);
      expect(totals.get(1)).toBe(36n);
      expect(memory.windows.buckets(1)).toEqual([[0, 15n]]);
      // The keys point at their own rows.
      expect(dedup.get(1, Buffer.from('k1'), nowMs)?.lsn).toBe(3n);
      expect(dedup.get(1, Buffer.from('k2'), nowMs)?.lsn).toBe(5n);
    });

    it('group commit: memory equals a replay and a checkpoint fold of merged rows (random windowed, keyed and unkeyed input)', async () => {
      const random = seededRandom(0x6c0_0002);
      const settings = [undefined, { bucketMs: 1_000, retentionMs: 100_000 }, { bucketMs: 5_000, retentionMs: 100_000 }];
      let itemCount = 0;
      for (let round = 0; round < 30; round++) {
        const submits: Promise<CommitResult>[] = [];
        for (let request = 0; request < randomInt(random, 1, 6); request++) {
          const groups: ApplyEntry[][] = [];
          for (let group = 0; group < randomInt(random, 1, 4); group++) {
            groups.push(
              Array.from({ length: randomInt(random, 1, 5) }, () => {
                const shardId = randomInt(random, 1, 4);
                const amount = (random() < 0.5 ? -1n : 1n) * BigInt(randomInt(random, 1, 1_000));
                const key = random() < 0.2 ? `k${randomInt(random, 0, 50)}` : '';
                const window = settings[Math.min(2, Math.floor(round / 10) + (shardId === 1 ? 0 : 1))];
                itemCount++;
                return { ...increment(shardId, amount, key), window };
              }),
            );
          }
          submits.push(submit(groups));
        }
        await Promise.all(submits);
        nowMs += randomInt(random, 100, 3_000);
      }
      // Merging happened: fewer rows than increments submitted.
      expect(Number(log.lastLsn)).toBeLessThan(itemCount / 2);
      log.close();
      log = ShardLog.open(dataDir);
      const replayed = new NodeMemory();
      rebuildMemory(log, replayed, new DedupIndex(dedupWindowMs), nowMs, dedupWindowMs);
      const folded = new NodeMemory();
      folded.load(checkpointFolder.fold({ totals: new Map(), parts: new Map() }, log.readFrom(1n, 100_000), nowMs));
      for (let shardId = 1; shardId <= 4; shardId++) {
        expect(replayed.totals.get(shardId)).toBe(totals.get(shardId));
        expect(replayed.windows.buckets(shardId)).toEqual(memory.windows.buckets(shardId));
        expect(folded.totals.get(shardId)).toBe(totals.get(shardId));
      }
    });
  });

  it('group commit: totals in memory equal a replay of the log after many mixed flushes (random input)', async () => {
    const random = seededRandom(0x6c0_0001);
    const near = INT64_MAX / 4n;
    const codes: number[] = [];
    for (let round = 0; round < 40; round++) {
      const submits: Promise<CommitResult>[] = [];
      for (let request = 0; request < randomInt(random, 1, 6); request++) {
        const groups: ApplyEntry[][] = [];
        for (let group = 0; group < randomInt(random, 1, 4); group++) {
          groups.push(
            Array.from({ length: randomInt(random, 1, 5) }, () => {
              const shardId = randomInt(random, 1, 4);
              if (random() < 0.1) return fence(shardId, `k${randomInt(random, 0, 20)}`, randomInt(random, 1, 4));
              // Huge amounts make some groups overflow; small ones make most apply.
              const huge = random() < 0.2;
              const sign = random() < 0.5 ? -1n : 1n;
              const amount = huge ? sign * (near + BigInt(randomInt(random, 1, 1_000))) : sign * BigInt(randomInt(random, 1, 1_000));
              const key = random() < 0.3 ? `k${randomInt(random, 0, 20)}` : '';
              return increment(shardId, amount, key, randomInt(random, 1, 4));
            }),
          );
        }
        submits.push(submit(groups));
      }
      for (const outcome of await Promise.all(submits)) codes.push(...outcome.results.map((result) => result.code));
      nowMs += 1_000;
    }
    // The input must exercise both paths for the comparison to mean anything.
    expect(codes.filter((code) => code === status.OK).length).toBeGreaterThan(10);
    expect(codes.filter((code) => code === status.OUT_OF_RANGE).length).toBeGreaterThan(10);
    log.close();
    log = ShardLog.open(dataDir);
    const replayed = new ShardTotals();
    log.replay(({ shardId, amount }) => replayed.add(shardId, amount));
    for (let shardId = 1; shardId <= 4; shardId++) expect(replayed.get(shardId)).toBe(totals.get(shardId));
  });
});
