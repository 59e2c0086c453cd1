// The log writer thread (`--log-writer thread`) against the inline writer:
// the same submissions give the same answers, the same log rows and the same
// totals; callers are answered only once the thread's commit is in the log;
// what arrives during a commit goes into the next; nothing that moves the
// log's tail runs beside a commit in flight.
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { status } from '@grpc/grpc-js';
import { GroupCommitter, type ApplyEntry, type CommitHooks, type CommitResult } from '../../src/node/group-commit.ts';
import { ShardLog, type LogEntry } from '../../src/node/shard-log.ts';
import { NodeMemory, checkpointFolder } from '../../src/node/node-memory.ts';
import { DedupIndex } from '../../src/node/dedup-index.ts';
import { LogWriterThread } from '../../src/node/log-writer-thread.ts';
import type { RoleState } from '../../src/node/node-role.ts';
import { rebuildMemory } from '../../src/node/recovery.ts';
import { TallyError } from '../../src/common/errors.ts';
import { INT64_MAX } from '../../src/common/limits.ts';
import { makeTempDir, removeTempDir } from '../helpers/temp-dir.ts';
import { randomInt, seededRandom } from '../helpers/seeded-random.ts';

const dedupWindowMs = 60_000;
const epoch = 3n;

function increment(shardId: number, amount: bigint, key = ''): ApplyEntry {
  return { shardId, amount, idempotencyKey: Buffer.from(key), fenceShardCount: 0, fence: false, routedShardCount: 1, op: 'increment' };
}

function memberSet(shardId: number, member: bigint, present: boolean): ApplyEntry {
  return { ...increment(shardId, 0n), op: 'memberSet', member, present };
}

class RecordingHooks implements CommitHooks {
  readonly commits: bigint[] = [];
  onCommit(_rows: readonly LogEntry[], _durationSeconds: number, lastLsn: bigint): void {
    this.commits.push(lastLsn);
  }
  waitForFollower(): Promise<void> {
    return Promise.resolve();
  }
}

interface Node {
  dataDir: string;
  log: ShardLog;
  memory: NodeMemory;
  committer: GroupCommitter;
  hooks: RecordingHooks;
}

async function openNode(name: string, thread: boolean, clock: () => number): Promise<Node> {
  const dataDir = makeTempDir(name);
  const log = ShardLog.open(dataDir, checkpointFolder);
  if (thread) log.useWriterThread(await LogWriterThread.start(log.file));
  const memory = new NodeMemory();
  const hooks = new RecordingHooks();
  const role: RoleState = { role: 'primary', epoch, peer: 'follower:1', syncRequired: false, epochStartLsn: 0n };
  const committer = new GroupCommitter(log, memory, () => role, new DedupIndex(dedupWindowMs), hooks, clock);
  return { dataDir, log, memory, committer, hooks };
}

function closeNode(node: Node | undefined): void {
  if (node === undefined) return;
  node.log.close();
  removeTempDir(node.dataDir);
}

function logRows(node: Node): unknown[] {
  const db = new Database(path.join(node.dataDir, 'node.sqlite'), { readonly: true });
  try {
    return db.prepare('SELECT * FROM log ORDER BY lsn').safeIntegers(true).all();
  } finally {
    db.close();
  }
}

/** A seeded mix: unkeyed and keyed increments (with repeats), member flips, and groups that overflow. */
function randomGroups(random: () => number): ApplyEntry[][] {
  return Array.from({ length: randomInt(random, 1, 4) }, () =>
    Array.from({ length: randomInt(random, 1, 5) }, () => {
      const shardId = randomInt(random, 1, 6);
      const pick = random();
      if (pick < 0.5) return increment(shardId, BigInt(randomInt(random, -50, 100) || 1));
      if (pick < 0.75) return increment(shardId, BigInt(randomInt(random, 1, 9)), `k${randomInt(random, 1, 40)}`);
      if (pick < 0.95) return memberSet(shardId, BigInt(randomInt(random, 1, 5)), random() < 0.5);
      return increment(shardId, INT64_MAX);
    }),
  );
}

/** What a caller learns, without the lsn (grouping into commits may differ). */
function answerOf(result: PromiseSettledResult<CommitResult>): unknown {
  if (result.status === 'rejected') return { rejected: String(result.reason) };
  return result.value.results.map((group) => ({ code: group.code, applied: group.applied, changed: group.changed }));
}

describe('log writer thread', () => {
  let inline: Node | undefined;
  let thread: Node | undefined;
  let nowMs = 5_000;
  beforeEach(async () => {
    nowMs = 5_000;
    inline = await openNode('writer-inline', false, () => nowMs);
    thread = await openNode('writer-thread', true, () => nowMs);
  });
  afterEach(() => {
    closeNode(inline);
    closeNode(thread);
  });

  it('thread writer: waves of submissions give the same answers, the same log rows and the same totals as inline', async () => {
    const random = seededRandom(16_4);
    for (let wave = 0; wave < 40; wave++) {
      const requests = Array.from({ length: randomInt(random, 1, 6) }, () => randomGroups(random));
      nowMs += randomInt(random, 0, 3);
      const answers = await Promise.all(
        [inline!, thread!].map(async (node) =>
          (await Promise.allSettled(requests.map((groups) => node.committer.submit(structuredClone(groups), epoch)))).map(answerOf),
        ),
      );
      expect(answers[1]).toEqual(answers[0]);
    }
    expect(thread!.hooks.commits).toEqual(inline!.hooks.commits);
    expect(logRows(thread!)).toEqual(logRows(inline!));
    expect(thread!.log.lastLsn).toBe(inline!.log.lastLsn);
    for (let shardId = 1; shardId <= 6; shardId++) expect(thread!.memory.totals.get(shardId)).toBe(inline!.memory.totals.get(shardId));
    // The log the thread wrote replays to the memory it answered from.
    const replayed = new NodeMemory();
    rebuildMemory(thread!.log, replayed, new DedupIndex(dedupWindowMs), nowMs, dedupWindowMs);
    for (let shardId = 1; shardId <= 6; shardId++) expect(replayed.totals.get(shardId)).toBe(thread!.memory.totals.get(shardId));
  });

  it('thread writer: submissions that overlap commits get the same answers and totals as inline, each commit after the last', async () => {
    const random = seededRandom(16_5);
    const requests = Array.from({ length: 300 }, () => randomGroups(random));
    const answersOf = async (node: Node): Promise<unknown[]> => {
      const calls: Promise<CommitResult>[] = [];
      // A few submissions per turn, while the previous commit may be in flight.
      for (let index = 0; index < requests.length; index++) {
        const call = node.committer.submit(structuredClone(requests[index]!), epoch);
        // Settled below; a rejection must not count as unhandled while this loop yields.
        call.catch(() => {});
        calls.push(call);
        if (index % 7 === 0) await new Promise((resolve) => setImmediate(resolve));
      }
      return (await Promise.allSettled(calls)).map(answerOf);
    };
    const [inlineAnswers, threadAnswers] = await Promise.all([answersOf(inline!), answersOf(thread!)]);
    expect(threadAnswers).toEqual(inlineAnswers);
    for (let shardId = 1; shardId <= 6; shardId++) expect(thread!.memory.totals.get(shardId)).toBe(inline!.memory.totals.get(shardId));
    expect([...thread!.hooks.commits].sort((a, b) => (a < b ? -1 : 1))).toEqual(thread!.hooks.commits);
    const replayed = new NodeMemory();
    rebuildMemory(thread!.log, replayed, new DedupIndex(dedupWindowMs), nowMs, dedupWindowMs);
    for (let shardId = 1; shardId <= 6; shardId++) expect(replayed.totals.get(shardId)).toBe(thread!.memory.totals.get(shardId));
  });

  it('thread writer: a caller is answered only once its rows are in the log; what arrives meanwhile waits for the next commit', async () => {
    const { committer, log, hooks } = thread!;
    const first = committer.submit([[increment(1, 5n)]], epoch);
    // Let the flush hand the commit to the thread, then submit behind it.
    await new Promise((resolve) => setImmediate(resolve));
    expect(log.lastLsn).toBe(0n);
    const second = committer.submit([[increment(1, 7n)], [increment(2, 1n, 'key')]], epoch);
    const third = committer.submit([[increment(3, 1n)]], epoch);
    const rowsWhenAnswered = first.then(() => logRows(thread!).length);
    expect(await rowsWhenAnswered).toBe(1);
    const [secondResult, thirdResult] = await Promise.all([second, third]);
    expect(secondResult.results.map((group) => group.code)).toEqual([status.OK, status.OK]);
    expect(thirdResult.lsn).toBe(secondResult.lsn);
    expect(hooks.commits).toEqual([1n, 4n]);
    expect(thread!.memory.totals.get(1)).toBe(12n);
  });

  it('thread writer: idle() waits for the commit in flight, and nothing that moves the tail runs beside it', async () => {
    const { committer, log } = thread!;
    await committer.submit([[increment(1, 1n)]], epoch);
    const pending = committer.submit([[increment(1, 1n)]], epoch);
    await new Promise((resolve) => setImmediate(resolve));
    const truncate = (): number => log.truncateAfter(0n);
    expect(truncate).toThrow(TallyError);
    expect(truncate).toThrow(/in flight on the log writer thread/);
    await committer.idle();
    expect(log.lastLsn).toBe(2n);
    await pending;
    expect(log.truncateAfter(1n)).toBe(1);
    expect(log.lastLsn).toBe(1n);
  });
});
