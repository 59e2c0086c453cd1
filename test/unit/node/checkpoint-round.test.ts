// A checkpoint round reads the log in slices and writes the checkpoint once
// (each touched shard once, in shard order): the file it leaves is the one a
// transaction per slice leaves, a round the log changed under is dropped
// rather than written, and the checkpointer folds a whole tick's entries in
// one write however many slices it read them in.
import Database from 'better-sqlite3';
import { describe, expect, it, vi } from 'vitest';
import { Checkpointer } from '../../../src/node/write/checkpointer.ts';
import type { LogEntry, ShardLog } from '../../../src/node/log/index.ts';
import type { NodeState } from '../../../src/node/state/index.ts';
import type { Replicator } from '../../../src/node/replication/index.ts';
import type { Logger } from '../../../src/common/index.ts';
import { useTempLogs } from '../../helpers/temp-log.ts';
import { seededRandom } from '../../helpers/seeded-random.ts';
import {
  dropEntry,
  forgetMembers,
  plainEntry,
  randomDistinctEntry,
  randomMemberFlip,
  windowConfigEntry,
} from '../../helpers/log-entries.ts';

/** Batches of every kind over shards 1..40: plain and keyed increments, member flips, sketches, windows and drops. */
function mixedBatches(seed: number, batches: number): { entries: LogEntry[]; atMs: number }[] {
  const random = seededRandom(seed);
  const present = new Map<string, boolean>();
  let key = 0;
  const out: { entries: LogEntry[]; atMs: number }[] = [
    { entries: [1, 2].map((shardId) => windowConfigEntry(shardId, { bucketMs: 1_000, retentionMs: 5_000 })), atMs: 1_000 },
  ];
  for (let batch = 0; batch < batches; batch++) {
    const entries: LogEntry[] = [];
    for (let item = 0; item < 1 + Math.floor(random() * 20); item++) {
      const roll = random();
      const shardId = 1 + Math.floor(random() * 40);
      if (roll < 0.03) {
        forgetMembers(present, shardId);
        entries.push(dropEntry(shardId));
      } else if (roll < 0.2 && shardId >= 5 && shardId <= 8) {
        entries.push(randomMemberFlip(shardId, random, present));
      } else if (roll < 0.3 && shardId >= 9 && shardId <= 12) {
        entries.push(randomDistinctEntry(shardId, random));
      } else {
        entries.push(plainEntry(shardId, BigInt(Math.floor(random() * 100) - 30) || 1n, random() < 0.2 ? `k${key++}` : ''));
      }
    }
    out.push({ entries, atMs: 2_000 + batch * 50 });
  }
  return out;
}

/** The log file's tables, row by row: checkpoint, parts, rows left and the checkpoint's lsn and epoch. */
function fileOf(log: ShardLog): unknown {
  const db = new Database(log.file, { readonly: true });
  try {
    return {
      // The blocks' bytes, not the lsn of the fold that last wrote each (a round's, or a slice's).
      checkpoint: db.prepare('SELECT first_shard, hex(data) FROM checkpoint_blocks ORDER BY first_shard').raw().all(),
      parts: db.prepare('SELECT shard_id, part, hex(data) FROM checkpoint_parts ORDER BY shard_id, part').raw().all(),
      log: db.prepare('SELECT lsn, shard_id, amount, hex(idem_key) FROM log ORDER BY lsn').raw().all(),
      meta: db.prepare("SELECT key, value FROM meta WHERE key LIKE 'checkpoint_%' ORDER BY key").raw().all(),
    };
  } finally {
    db.close();
  }
}

const silent: Logger = { info: () => {}, warn: () => {}, error: () => {}, debug: () => {} } as unknown as Logger;

describe('checkpoint round', () => {
  const { open, reopen } = useTempLogs('round');

  it('a round read in slices and written once leaves the file a transaction per slice leaves, every kind, wherever it stops', () => {
    const sliced = open();
    const rounds = open();
    const batches = mixedBatches(0x70d, 120);
    for (const { entries, atMs } of batches) {
      sliced.append(entries, 1n, atMs);
      rounds.append(entries, 1n, atMs);
    }
    const nowMs = 2_000 + 120 * 50;
    const keepKeysSinceMs = 4_000;
    for (const upto of [30n, sliced.lastLsn / 3n, sliced.lastLsn - 20n, sliced.lastLsn]) {
      while (sliced.foldSlice(upto, 7, keepKeysSinceMs, nowMs) > 0);
      const round = rounds.beginFold();
      let slices = 0;
      while (rounds.foldRead(round, upto, 7, nowMs) > 0) slices++;
      expect(slices).toBeGreaterThan(1);
      // Nothing is written until the commit.
      expect(rounds.checkpointLsn).not.toBe(upto);
      expect(rounds.foldCommit(round, keepKeysSinceMs)).toBe(round.rows);
      expect(rounds.checkpointLsn).toBe(upto);
      expect(fileOf(rounds)).toEqual(fileOf(sliced));
    }
    expect(fileOf(reopen(rounds))).toEqual(fileOf(sliced));
  });

  it('a round is dropped, not written, when the log changed under it: truncated, folded by another, emptied for an install', () => {
    const log = open();
    for (let batch = 0; batch < 10; batch++) log.append([plainEntry(1 + batch, 5n), plainEntry(1, 1n)], 1n, 1_000);
    const file = fileOf(log);

    let round = log.beginFold();
    expect(log.foldRead(round, log.lastLsn, 100, 1_000)).toBe(20);
    expect(log.truncateAfter(18n)).toBe(2);
    expect(log.foldCommit(round, 0)).toBe(0);
    expect(log.checkpointLsn).toBe(0n);

    round = log.beginFold();
    log.foldRead(round, 10n, 100, 1_000);
    expect(log.foldSlice(4n, 100, 0, 1_000)).toBe(4);
    expect(log.foldRead(round, 18n, 100, 1_000)).toBe(0);
    expect(log.foldCommit(round, 0)).toBe(0);
    expect(log.checkpointLsn).toBe(4n);
    expect(log.checkpointTotals()).toEqual(
      new Map([
        [1, 7n],
        [2, 5n],
      ]),
    );

    round = log.beginFold();
    log.foldRead(round, 18n, 100, 1_000);
    log.beginInstall('install-1');
    expect(log.foldCommit(round, 0)).toBe(0);
    expect(log.checkpointTotals().size).toBe(0);
    expect(file).not.toEqual(fileOf(log));
  });

  it('the checkpointer folds a tick of many slices in one write, and drops the round when what it read is no longer safe', async () => {
    const log = open();
    for (let batch = 0; batch < 50; batch++)
      log.append(
        Array.from({ length: 100 }, (_, item) => plainEntry(1 + ((batch * 37 + item * 101) % 3_000), 1n)),
        1n,
        1_000,
      );
    const state = { ready: true, role: { role: 'follower' }, confirmedLsn: log.lastLsn };
    const folds: number[] = [];
    let reads = 0;
    const checkpointer = new Checkpointer(
      log,
      state as unknown as NodeState,
      {} as Replicator,
      {
        intervalMs: 3_600_000,
        sliceRows: 300,
        stepMs: 0,
        mergeBlocks: 256,
        roundRowsMax: 2_000,
        dedupWindowMs: 0,
        retainEntries: 0,
        tombstoneMs: 0,
      },
      { onFold: (rows) => folds.push(rows), onFoldRead: () => reads++ },
      silent,
      () => 1_000,
    );
    const commits = vi.spyOn(log, 'foldCommit');
    await checkpointer.run();
    // 5,000 rows: slices of 300, rounds of at least 2,000 (a round ends at the slice that reaches it).
    expect(folds).toEqual([2_100, 2_100, 800]);
    expect(reads).toBeGreaterThanOrEqual(17);
    expect(commits).toHaveBeenCalledTimes(3);
    expect(log.checkpointLsn).toBe(5_000n);
    const sum = [...log.checkpointTotals().values()].reduce((a, b) => a + b, 0n);
    expect(sum).toBe(5_000n);

    // The role changes while a round is read: what was confirmed then is no longer safe, and nothing is written.
    log.append([plainEntry(1, 1n), plainEntry(2, 1n)], 2n, 2_000);
    state.confirmedLsn = log.lastLsn;
    const foldRead = log.foldRead.bind(log);
    vi.spyOn(log, 'foldRead').mockImplementation((round, upto, rows, nowMs) => {
      const read = foldRead(round, upto, rows, nowMs);
      state.confirmedLsn = 5_000n;
      return read;
    });
    await checkpointer.run();
    expect(log.checkpointLsn).toBe(5_000n);
    expect(folds).toHaveLength(3);
  });
});
