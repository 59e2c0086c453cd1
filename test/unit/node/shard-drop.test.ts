// A dropped shard (its counter was deleted) on one node: group commit drops it
// through the log and then refuses every write to it; memory, the checkpoint
// and a replay agree wherever the fold stops; the fold removes its checkpoint
// rows and keys; its tombstone survives reopen and snapshot and expires by time.
import Database from 'better-sqlite3';
import { beforeEach, describe, expect, it } from 'vitest';
import { status } from '@grpc/grpc-js';
import { GroupCommitter, type CommitHooks } from '../../../src/node/write/group-commit.ts';
import { type ShardLog, EntryKind, type LogEntry } from '../../../src/node/log/index.ts';
import { NodeMemory, encodeWindowSetting } from '../../../src/node/state/node-memory.ts';
import { DedupIndex } from '../../../src/node/state/dedup-index.ts';
import type { RoleState } from '../../../src/node/state/node-role.ts';
import { rebuildMemory } from '../../../src/node/state/recovery.ts';
import { useTempLogs } from '../../helpers/temp-log.ts';
import { seededRandom } from '../../helpers/seeded-random.ts';
import {
  applyEntry,
  dropEntry,
  forgetMembers,
  noKey,
  plainEntry,
  randomDistinctEntry,
  randomMemberFlip,
  windowConfigEntry,
} from '../../helpers/log-entries.ts';

const windowMs = 60_000;
const drop = dropEntry;
const plain = plainEntry;

/** Everything a node holds for shards 1..12, comparable. */
function stateOf(memory: NodeMemory): unknown {
  const state = memory.checkpointOf(Array.from({ length: 12 }, (_, index) => index + 1));
  return {
    totals: [...state.totals].filter(([, total]) => total !== 0n),
    parts: [...state.parts].map(([id, parts]) => [id, [...parts].map(([name, data]) => [name, data.toString('hex')])]),
    dropped: Array.from({ length: 12 }, (_, index) => memory.isDropped(index + 1)),
  };
}

function rebuilt(log: ShardLog, nowMs: number): NodeMemory {
  const memory = new NodeMemory();
  rebuildMemory(log, memory, new DedupIndex(windowMs), nowMs, windowMs);
  return memory;
}

describe('shard drop', () => {
  const { open, reopen } = useTempLogs('drop');

  it('checkpoint: with drops of every kind of shard, checkpoint + tail equals a full replay wherever the fold stops, across reopen', () => {
    const log = open();
    const random = seededRandom(0xd20b);
    const present = new Map<string, boolean>();
    log.append(
      [1, 2].map((shardId) => windowConfigEntry(shardId, { bucketMs: 1_000, retentionMs: 60_000 })),
      1n,
      1_000,
    );
    let key = 0;
    for (let batch = 0; batch < 60; batch++) {
      const entries: LogEntry[] = [];
      for (let item = 0; item < 1 + Math.floor(random() * 12); item++) {
        const roll = random();
        const shardId = 1 + Math.floor(random() * 12);
        if (roll < 0.08) {
          forgetMembers(present, shardId);
          entries.push(drop(shardId));
        } else if (roll < 0.3 && shardId >= 5 && shardId <= 8) {
          entries.push(randomMemberFlip(shardId, random, present));
        } else if (roll < 0.45 && shardId >= 9) {
          entries.push(randomDistinctEntry(shardId, random));
        } else {
          entries.push(plain(shardId, BigInt(Math.floor(random() * 100) - 30) || 1n, random() < 0.3 ? `k${key++}` : ''));
        }
      }
      log.append(entries, 1n, 2_000 + batch * 100);
    }
    const nowMs = 2_000 + 60 * 100;
    const full = stateOf(rebuilt(log, nowMs));
    expect((full as { dropped: boolean[] }).dropped).toContain(true);
    for (const upto of [3n, log.lastLsn / 3n, log.lastLsn - 1n, log.lastLsn]) {
      while (log.foldSlice(upto, 11, 0, nowMs) > 0);
      expect(log.checkpointLsn).toBe(upto);
      expect(stateOf(rebuilt(log, nowMs))).toEqual(full);
    }
    const reopened = reopen(log);
    expect(stateOf(rebuilt(reopened, nowMs))).toEqual(full);
  });

  it('checkpoint: the fold leaves a dropped shard no total row, no parts but its tombstone, and none of its keys', () => {
    const log = open();
    log.append(
      [
        {
          shardId: 1,
          amount: 0n,
          idempotencyKey: noKey,
          fenceShardCount: 0,
          kind: EntryKind.windowConfig,
          payload: encodeWindowSetting({ bucketMs: 1_000, retentionMs: 60_000 }),
        },
        plain(1, 5n, 'a'),
        plain(1, 7n),
        plain(2, 3n, 'b'),
      ],
      1n,
      1_000,
    );
    // Folded before the drop: shard 1 has a checkpoint row, a window part and a kept key.
    while (log.foldSlice(log.lastLsn, 100, 0, 1_000) > 0);
    log.append([plain(1, 1n, 'c'), drop(1)], 1n, 2_000);
    while (log.foldSlice(log.lastLsn, 100, 0, 2_000) > 0);
    const db = new Database(log.file, { readonly: true });
    try {
      expect(log.checkpointTotals()).toEqual(new Map([[2, 3n]]));
      expect(db.prepare('SELECT shard_id, part FROM checkpoint_parts').all()).toEqual([{ shard_id: 1, part: 'dropped' }]);
      // Shard 2's key stays for the dedup window; shard 1's are gone.
      expect(db.prepare('SELECT shard_id, idem_key FROM log').raw().all()).toEqual([[2, Buffer.from('b')]]);
    } finally {
      db.close();
    }
    const memory = rebuilt(log, 2_000);
    expect(memory.isDropped(1)).toBe(true);
    expect(memory.totals.get(1)).toBe(0n);
    expect(memory.windowSetting(1)).toEqual({ bucketMs: 0, retentionMs: 0 });
  });

  it('tombstones: the checkpoint and memory forget them only after their time; a rebuild drops expired ones', () => {
    const log = open();
    log.append([drop(1)], 1n, 1_000);
    log.append([drop(2)], 1n, 5_000);
    while (log.foldSlice(log.lastLsn, 100, 0, 5_000) > 0);
    expect(log.pruneTombstones(1_000, 100)).toBe(0);
    expect(log.pruneTombstones(1_001, 100)).toBe(1);
    let memory = rebuilt(log, 5_000);
    expect([memory.isDropped(1), memory.isDropped(2)]).toEqual([false, true]);

    log.append([drop(3)], 1n, 9_000);
    memory = rebuilt(log, 9_000);
    expect(memory.droppedCount).toBe(2);
    // Round-robin and bounded: one visit per call.
    let pruned = 0;
    for (let call = 0; call < 4; call++) pruned += memory.pruneTombstones(6_000, 1);
    expect(pruned).toBe(1);
    expect([memory.isDropped(2), memory.isDropped(3)]).toEqual([false, true]);
  });

  describe('group commit', () => {
    let log: ShardLog;
    let memory: NodeMemory;
    let committer: GroupCommitter;
    const commits: LogEntry[][] = [];
    const epoch = 2n;
    const role: RoleState = { role: 'primary', epoch, peer: 'follower', syncRequired: false, epochStartLsn: 0n, configVersion: 0n };
    beforeEach(() => {
      log = open('drop-commit');
      memory = new NodeMemory();
      commits.length = 0;
      const hooks: CommitHooks = {
        onCommit: (rows) => void commits.push([...rows]),
        waitForFollower: () => Promise.resolve(),
      };
      committer = new GroupCommitter(
        log,
        memory,
        () => role,
        new DedupIndex(windowMs),
        hooks,
        () => 10_000,
      );
    });

    it('a drop frees every kind of state at once, is logged once, and later writes to the shard fail NOT_FOUND alone', async () => {
      await committer.submit(
        [
          [applyEntry(1, 'increment', { amount: 5n, window: { bucketMs: 1_000, retentionMs: 60_000 } })],
          [applyEntry(2, 'memberSet', { member: 7n, present: true })],
          [applyEntry(3, 'distinct', { registers: [[10, 3]] })],
          [applyEntry(4, 'increment', { amount: 1n, idempotencyKey: Buffer.from('k'), routedShardCount: 1 })],
        ],
        epoch,
      );
      const dropped = await committer.submit([[applyEntry(1, 'drop'), applyEntry(2, 'drop'), applyEntry(3, 'drop')]], epoch);
      expect(dropped.results[0]).toMatchObject({ code: status.OK, applied: [true, true, true] });
      expect(memory.totals.get(1)).toBe(0n);
      expect(memory.windows.configOf(1)).toBeUndefined();
      expect(memory.hasMember(2, 7n)).toBe(false);
      expect(memory.sketch(3)).toBeUndefined();
      expect(memory.droppedCount).toBe(3);
      expect(commits.at(-1)!.map((row) => [row.shardId, row.kind])).toEqual([
        [1, EntryKind.drop],
        [2, EntryKind.drop],
        [3, EntryKind.drop],
      ]);
      const lastLsn = log.lastLsn;

      // Dropping again changes nothing; a write to a dropped shard fails its own group only.
      const [again, late] = await Promise.all([
        committer.submit([[applyEntry(1, 'drop')]], epoch),
        committer.submit([[applyEntry(1, 'increment', { amount: 9n })], [applyEntry(4, 'increment', { amount: 2n })]], epoch),
      ]);
      expect(again.results[0]).toMatchObject({ code: status.OK, applied: [false] });
      expect(late.results[0]).toMatchObject({ code: status.NOT_FOUND });
      expect(late.results[0]!.message).toMatch(/dropped/);
      expect(late.results[1]).toMatchObject({ code: status.OK });
      expect(log.lastLsn).toBe(lastLsn + 1n);
      expect(memory.totals.get(1)).toBe(0n);
      expect(memory.totals.get(4)).toBe(3n);

      // A drop and a write to the same shard in one flush: the drop commits first, the write is refused.
      const [dropFour, writeFour] = await Promise.all([
        committer.submit([[applyEntry(4, 'drop')]], epoch),
        committer.submit([[applyEntry(4, 'increment', { amount: 1n, idempotencyKey: Buffer.from('k2'), routedShardCount: 1 })]], epoch),
      ]);
      expect(dropFour.results[0]!.applied).toEqual([true]);
      expect(writeFour.results[0]!.code).toBe(status.NOT_FOUND);

      // What the log says is what memory holds.
      expect(stateOf(rebuilt(log, 10_000))).toEqual(stateOf(memory));
    });
  });
});
