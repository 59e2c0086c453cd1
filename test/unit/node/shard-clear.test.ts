// A cleared shard on one node: group commit clears it through the log (every
// kind of state, one row), increments tagged older than its generation are
// cleared away with their key recorded, newer ones clear it first; memory,
// checkpoint and a replay agree wherever the fold stops, across reopen.
import { beforeEach, describe, expect, it } from 'vitest';
import { status } from '@grpc/grpc-js';
import { GroupCommitter, type ApplyEntry, type CommitHooks } from '../../../src/node/write/group-commit.ts';
import { type ShardLog, EntryKind, encodeGeneration, type LogEntry } from '../../../src/node/log/index.ts';
import { NodeMemory, encodeWindowSetting } from '../../../src/node/state/node-memory.ts';
import { DedupIndex } from '../../../src/node/state/dedup-index.ts';
import type { RoleState } from '../../../src/node/state/node-role.ts';
import { rebuildMemory } from '../../../src/node/state/recovery.ts';
import { useTempLogs } from '../../helpers/temp-log.ts';
import { seededRandom } from '../../helpers/seeded-random.ts';
import { applyEntry, forgetMembers, noKey, randomDistinctEntry, randomMemberFlip } from '../../helpers/log-entries.ts';

const windowMs = 60_000;
const bucketWindow = { bucketMs: 1_000, retentionMs: 60_000 };

const increment = (shardId: number, amount: bigint, generation: number, key = ''): ApplyEntry =>
  applyEntry(shardId, 'increment', { amount, generation, idempotencyKey: Buffer.from(key), routedShardCount: key === '' ? 0 : 1 });

/** Everything a node holds for shards 1..8, comparable. */
function stateOf(memory: NodeMemory, nowMs: number): unknown {
  const ids = Array.from({ length: 8 }, (_, index) => index + 1);
  const state = memory.checkpointOf(ids);
  return {
    totals: [...state.totals].filter(([, total]) => total !== 0n),
    parts: [...state.parts].map(([id, parts]) => [id, [...parts].map(([name, data]) => [name, data.toString('hex')])]),
    generations: ids.map((id) => memory.generationOf(id)),
    windows: ids.map((id) => memory.windows.sum(id, 0, nowMs + 1_000)),
  };
}

function rebuilt(log: ShardLog, nowMs: number): { memory: NodeMemory; dedup: DedupIndex } {
  const memory = new NodeMemory();
  const dedup = new DedupIndex(windowMs);
  rebuildMemory(log, memory, dedup, nowMs, windowMs);
  return { memory, dedup };
}

describe('shard clear', () => {
  const { open, reopen } = useTempLogs('clear');

  it('checkpoint: with clears of every kind of shard and keys cleared away, checkpoint + tail equals a full replay wherever the fold stops, across reopen', () => {
    const log = open();
    const random = seededRandom(0xc1ea);
    const present = new Map<string, boolean>();
    const generations = new Map<number, number>();
    log.append(
      [1, 2].map((shardId) => ({
        shardId,
        amount: 0n,
        idempotencyKey: noKey,
        fenceShardCount: 0,
        kind: EntryKind.windowConfig,
        payload: encodeWindowSetting(bucketWindow),
      })),
      1n,
      1_000,
    );
    let key = 0;
    for (let batch = 0; batch < 60; batch++) {
      const entries: LogEntry[] = [];
      for (let item = 0; item < 1 + Math.floor(random() * 12); item++) {
        const roll = random();
        const shardId = 1 + Math.floor(random() * 8);
        if (roll < 0.08) {
          forgetMembers(present, shardId);
          const generation = (generations.get(shardId) ?? 0) + 1;
          generations.set(shardId, generation);
          entries.push({
            shardId,
            amount: 0n,
            idempotencyKey: noKey,
            fenceShardCount: 0,
            kind: EntryKind.clear,
            payload: encodeGeneration(generation),
          });
        } else if (roll < 0.12) {
          entries.push({ shardId, amount: 0n, idempotencyKey: Buffer.from(`k${key++}`), fenceShardCount: 0, kind: EntryKind.clearedKey });
        } else if (roll < 0.35 && shardId >= 3 && shardId <= 5) {
          entries.push(randomMemberFlip(shardId, random, present));
        } else if (roll < 0.5 && shardId >= 6) {
          entries.push(randomDistinctEntry(shardId, random));
        } else {
          const keyed = random() < 0.3;
          entries.push({
            shardId,
            amount: BigInt(Math.floor(random() * 100) - 30) || 1n,
            idempotencyKey: keyed ? Buffer.from(`k${key++}`) : noKey,
            fenceShardCount: 0,
          });
        }
      }
      log.append(entries, 1n, 2_000 + batch * 400);
    }
    const nowMs = 2_000 + 60 * 400;
    const full = rebuilt(log, nowMs);
    expect([...generations.values()].length).toBeGreaterThan(3);
    const keysOf = (dedup: DedupIndex) =>
      Array.from({ length: key }, (_, index) =>
        [1, 2, 3, 4, 5, 6, 7, 8].map((shardId) => dedup.get(shardId, Buffer.from(`k${index}`), nowMs)?.lsn),
      );
    for (const upto of [3n, log.lastLsn / 3n, log.lastLsn - 1n, log.lastLsn]) {
      while (log.foldSlice(upto, 11, 0, nowMs) > 0);
      expect(log.checkpointLsn).toBe(upto);
      const recovered = rebuilt(log, nowMs);
      expect(stateOf(recovered.memory, nowMs)).toEqual(stateOf(full.memory, nowMs));
      expect(keysOf(recovered.dedup)).toEqual(keysOf(full.dedup));
    }
    const reopened = reopen(log);
    expect(stateOf(rebuilt(reopened, nowMs).memory, nowMs)).toEqual(stateOf(full.memory, nowMs));
    // The generations the log reached are what memory holds.
    for (const [shardId, generation] of generations) expect(full.memory.generationOf(shardId)).toBe(generation);
  });

  it('shard log: a clear without a generation, or of generation 0, and a cleared-away key without a key or with an amount are never written', () => {
    const log = open();
    const base = { shardId: 1, idempotencyKey: noKey, fenceShardCount: 0 };
    for (const entry of [
      { ...base, amount: 0n, kind: EntryKind.clear },
      { ...base, amount: 0n, kind: EntryKind.clear, payload: Buffer.alloc(8) },
      { ...base, amount: 5n, kind: EntryKind.clear, payload: encodeGeneration(1) },
      { ...base, amount: 0n, kind: EntryKind.clearedKey },
      { ...base, amount: 3n, idempotencyKey: Buffer.from('k'), kind: EntryKind.clearedKey },
      { ...base, amount: 0n, idempotencyKey: Buffer.from('k'), kind: EntryKind.drop },
    ] as LogEntry[])
      expect(() => log.append([entry], 1n, 1_000), `kind ${entry.kind}, amount ${entry.amount}`).toThrow(/log entry invalid/);
    expect(log.lastLsn).toBe(0n);
  });

  describe('group commit', () => {
    let log: ShardLog;
    let memory: NodeMemory;
    let dedup: DedupIndex;
    let committer: GroupCommitter;
    const commits: LogEntry[][] = [];
    const epoch = 2n;
    let nowMs = 10_000;
    const role: RoleState = { role: 'primary', epoch, peer: 'follower', syncRequired: false, epochStartLsn: 0n, configVersion: 0n };
    const submit = (groups: ApplyEntry[][]) => committer.submit(groups, epoch);
    beforeEach(() => {
      log = open('clear-commit');
      memory = new NodeMemory();
      dedup = new DedupIndex(windowMs);
      commits.length = 0;
      nowMs = 10_000;
      const hooks: CommitHooks = {
        onCommit: (rows) => void commits.push([...rows]),
        waitForFollower: () => Promise.resolve(),
      };
      committer = new GroupCommitter(
        log,
        memory,
        () => role,
        dedup,
        hooks,
        () => nowMs,
      );
    });

    it('a clear empties every kind in one row per shard, keeps the window setting, and is idempotent per generation', async () => {
      await submit([
        [applyEntry(1, 'increment', { amount: 5n, window: bucketWindow })],
        [applyEntry(2, 'memberSet', { member: 7n, present: true })],
        [applyEntry(3, 'distinct', { registers: [[10, 3]] })],
      ]);
      const lastLsn = log.lastLsn;
      const cleared = await submit([
        [applyEntry(1, 'clear', { generation: 1 }), applyEntry(2, 'clear', { generation: 1 }), applyEntry(3, 'clear', { generation: 1 })],
      ]);
      expect(cleared.results[0]).toMatchObject({ code: status.OK, applied: [true, true, true] });
      expect(log.lastLsn).toBe(lastLsn + 3n);
      expect([memory.totals.get(1), memory.totals.get(2), memory.hasMember(2, 7n), memory.sketch(3)]).toEqual([0n, 0n, false, undefined]);
      expect(memory.windows.configOf(1)).toEqual(bucketWindow);
      expect(memory.windows.sum(1, 0, 20_000)).toBe(0n);
      expect([1, 2, 3].map((id) => memory.generationOf(id))).toEqual([1, 1, 1]);
      // The same clear again, or an older one: nothing logged.
      const again = await submit([[applyEntry(1, 'clear', { generation: 1 })]]);
      expect(again.results[0]!.applied).toEqual([false]);
      expect(log.lastLsn).toBe(lastLsn + 3n);
      // After the clear the shard counts again, in its window too.
      await submit([[{ ...increment(1, 4n, 1), window: bucketWindow }]]);
      expect(memory.totals.get(1)).toBe(4n);
      expect(memory.windows.sum(1, 0, 20_000)).toBe(4n);
      expect(stateOf(rebuilt(log, nowMs).memory, nowMs)).toEqual(stateOf(memory, nowMs));
    });

    it('an increment sent before the clear is cleared away (its key recorded, so a retry counts at most once); one sent after it clears the shard first', async () => {
      await submit([[increment(1, 10n, 0), increment(1, 1n, 0, 'early')]]);
      expect(memory.totals.get(1)).toBe(11n);

      // Routed at generation 1 while the shard has not seen the clear: it is cleared first, then counted.
      const first = await submit([[increment(1, 3n, 1)]]);
      expect(first.results[0]!.code).toBe(status.OK);
      expect(memory.generationOf(1)).toBe(1);
      expect(memory.totals.get(1)).toBe(3n);
      expect(commits.at(-2)!.map((row) => row.kind)).toEqual([EntryKind.clear]);

      // Routed at generation 0 (before the clear) and arriving after it: cleared away.
      const late = await submit([[increment(1, 100n, 0), increment(1, 50n, 0, 'late')]]);
      expect(late.results[0]).toMatchObject({ code: status.OK, applied: [true, true] });
      expect(memory.totals.get(1)).toBe(3n);
      expect(commits.at(-1)!.map((row) => [row.kind, row.idempotencyKey.toString()])).toEqual([[EntryKind.clearedKey, 'late']]);
      // Retried after the clear with the same key: a duplicate, never counted.
      const retry = await submit([[increment(1, 50n, 1, 'late')], [increment(1, 1n, 1, 'early')]]);
      expect(retry.results.map((result) => result.applied)).toEqual([[false], [false]]);
      expect(memory.totals.get(1)).toBe(3n);

      // Members and registers sent before a clear change nothing after it.
      await submit([[applyEntry(2, 'clear', { generation: 2 }), applyEntry(3, 'clear', { generation: 2 })]]);
      const stale = await submit([
        [applyEntry(2, 'memberSet', { member: 9n, present: true, generation: 1 })],
        [applyEntry(3, 'distinct', { registers: [[1, 5]], generation: 1 })],
      ]);
      expect(stale.results.map((result) => [result.code, result.applied, result.changed])).toEqual([
        [status.OK, [false], ['0']],
        [status.OK, [false], ['0']],
      ]);
      expect([memory.hasMember(2, 9n), memory.sketch(3)]).toEqual([false, undefined]);

      // A restart (replay) sees the same: totals, generations and keys.
      const replayed = rebuilt(log, nowMs);
      expect(stateOf(replayed.memory, nowMs)).toEqual(stateOf(memory, nowMs));
      for (const key of ['early', 'late']) expect(replayed.dedup.get(1, Buffer.from(key), nowMs)?.fenceShardCount).toBe(0);
    });
  });
});
