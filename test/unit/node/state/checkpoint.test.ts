// Contract: recovery from checkpoint + tail gives exactly what replaying the
// whole log gives — totals, keys, lsn and epoch — wherever the fold stopped.
import { afterEach, describe, expect, it } from 'vitest';
import { ShardLog, type LogEntry } from '../../../../src/node/log/index.ts';
import { NodeMemory, checkpointFolder, encodeWindowSetting } from '../../../../src/node/state/node-memory.ts';
import { EntryKind } from '../../../../src/node/log/index.ts';
import { packRegisterChanges } from '../../../../src/sketch/index.ts';
import { DedupIndex } from '../../../../src/node/state/dedup-index.ts';
import { rebuildMemory } from '../../../../src/node/state/recovery.ts';
import { makeTempDir, removeTempDir } from '../../../helpers/temp-dir.ts';
import { seededRandom } from '../../../helpers/seeded-random.ts';

const windowMs = 10_000;

function randomEntries(random: () => number, count: number, sequence: { next: number }): LogEntry[] {
  return Array.from({ length: count }, () => {
    const shardId = 1 + Math.floor(random() * 5);
    const keyed = random() < 0.3;
    const key = keyed ? Buffer.from(`k${sequence.next++}`) : Buffer.alloc(0);
    if (keyed && random() < 0.1) return { shardId, amount: 0n, idempotencyKey: key, fenceShardCount: 4 };
    return { shardId, amount: BigInt(Math.floor(random() * 2_000) - 1_000) || 1n, idempotencyKey: key, fenceShardCount: 0 };
  });
}

function memoryOf(log: ShardLog, nowMs: number): { totals: Map<number, bigint>; dedup: DedupIndex; lastLsn: bigint } {
  const memory = new NodeMemory();
  const totals = memory.totals;
  const dedup = new DedupIndex(windowMs);
  const lastLsn = rebuildMemory(log, memory, dedup, nowMs, windowMs);
  return { totals: new Map(totals.shardIds().map((id) => [id, totals.get(id)])), dedup, lastLsn };
}

describe('checkpoint', () => {
  let dir: string | undefined;
  afterEach(() => {
    if (dir) removeTempDir(dir);
    dir = undefined;
  });

  it('recovery from checkpoint + tail equals a full replay, wherever the fold stops, across reopen', () => {
    dir = makeTempDir('checkpoint');
    let log = ShardLog.open(dir);
    const random = seededRandom(0xc4ec);
    const sequence = { next: 0 };
    for (let batch = 0; batch < 60; batch++)
      log.append(randomEntries(random, 1 + Math.floor(random() * 50), sequence), BigInt(1 + Math.floor(batch / 20)), 1_000 + batch * 10);
    const nowMs = 1_000 + 60 * 10;
    const full = memoryOf(log, nowMs);
    const keys = Array.from({ length: sequence.next }, (_, index) => Buffer.from(`k${index}`));
    const seen = (dedup: DedupIndex) => keys.map((key) => [1, 2, 3, 4, 5].map((shardId) => dedup.get(shardId, key, nowMs)?.lsn ?? null));

    for (const upto of [1n, 7n, full.lastLsn / 2n, full.lastLsn - 1n, full.lastLsn]) {
      while (log.foldSlice(upto, 13, 0) > 0);
      expect(log.checkpointLsn).toBe(upto);
      // Recovery streams the checkpoint's totals row by row: the same rows as the Map of them all.
      const streamed = new Map<number, bigint>();
      log.forEachCheckpointTotal((shardId, total) => streamed.set(shardId, total));
      expect(streamed).toEqual(log.checkpointTotals());
      const recovered = memoryOf(log, nowMs);
      expect(recovered.totals).toEqual(full.totals);
      expect(recovered.lastLsn).toBe(full.lastLsn);
      expect(seen(recovered.dedup)).toEqual(seen(full.dedup));
    }
    const lastEpoch = log.lastEpoch;
    log.close();
    log = ShardLog.open(dir);
    expect(log.lastLsn).toBe(full.lastLsn);
    expect(log.lastEpoch).toBe(lastEpoch);
    expect(memoryOf(log, nowMs).totals).toEqual(full.totals);
    // Appends continue the sequence after a full fold.
    expect(log.append([{ shardId: 1, amount: 5n, idempotencyKey: Buffer.alloc(0), fenceShardCount: 0 }], 9n, nowMs)).toBe(
      full.lastLsn + 1n,
    );
    log.close();
  });

  it('folded rows leave the log except keys the window still needs, which go once they expire', () => {
    dir = makeTempDir('checkpoint');
    const log = ShardLog.open(dir);
    for (let index = 0; index < 100; index++) {
      log.append(
        [{ shardId: 1, amount: 1n, idempotencyKey: index % 10 === 0 ? Buffer.from(`key${index}`) : Buffer.alloc(0), fenceShardCount: 0 }],
        1n,
        index * 100,
      );
    }
    while (log.foldSlice(100n, 30, 5_000) > 0);
    const rowsLeft = (): number =>
      log.readFrom(101n, 10).length +
      [...Array(10).keys()].filter((index) => memoryOf(log, 10_000).dedup.get(1, Buffer.from(`key${index * 10}`), 10_000) !== undefined)
        .length;
    // Keys written at 5,000 ms or later survive the fold: key50 .. key90.
    expect(rowsLeft()).toBe(5);
    expect(memoryOf(log, 10_000).totals.get(1)).toBe(100n);
    expect(log.pruneFoldedKeys(8_000, 100)).toBe(3);
    expect(memoryOf(log, 10_000).dedup.size).toBe(2);
    expect(memoryOf(log, 10_000).totals.get(1)).toBe(100n);
    log.close();
  });

  it('folded entries cannot be read for replication or truncated away', () => {
    dir = makeTempDir('checkpoint');
    const log = ShardLog.open(dir);
    for (let index = 0; index < 10; index++)
      log.append([{ shardId: 1, amount: 1n, idempotencyKey: Buffer.alloc(0), fenceShardCount: 0 }], 1n, 0);
    log.foldSlice(6n, 100, 0);
    expect(() => log.readFrom(6n, 10)).toThrow(/folded/);
    expect(log.readFrom(7n, 10).map((entry) => entry.lsn)).toEqual([7n, 8n, 9n, 10n]);
    expect(() => log.truncateAfter(5n)).toThrow(/checkpoint/);
    expect(log.truncateAfter(8n)).toBe(2);
    expect(memoryOf(log, 0).totals.get(1)).toBe(8n);
    log.close();
  });

  it('with member flips, sketch registers and window buckets, checkpoint + tail equals a full replay wherever the fold stops', () => {
    dir = makeTempDir('checkpoint');
    let log = ShardLog.open(dir, checkpointFolder);
    const random = seededRandom(0x51de);
    const present = new Map<string, boolean>();
    const bucketMs = 1_000;
    // Shards 1-2: windowed totals; 3-4: membership partitions; 5: a sketch.
    log.append(
      [1, 2].map((shardId) => ({
        shardId,
        amount: 0n,
        idempotencyKey: Buffer.alloc(0),
        fenceShardCount: 0,
        kind: EntryKind.windowConfig,
        payload: encodeWindowSetting({ bucketMs, retentionMs: 20_000 }),
      })),
      1n,
      0,
    );
    for (let batch = 0; batch < 80; batch++) {
      const entries: LogEntry[] = [];
      for (let item = 0; item < 1 + Math.floor(random() * 20); item++) {
        const choice = random();
        if (choice < 0.4) {
          entries.push({
            shardId: 1 + Math.floor(random() * 2),
            amount: BigInt(Math.floor(random() * 100) - 30) || 1n,
            idempotencyKey: Buffer.alloc(0),
            fenceShardCount: 0,
          });
        } else if (choice < 0.8) {
          const shardId = 3 + Math.floor(random() * 2);
          const member = BigInt(Math.floor(random() * 40)) * 0x1_0000_0001n;
          const id = `${shardId}:${member}`;
          const flipTo = !(present.get(id) ?? false);
          present.set(id, flipTo);
          entries.push({
            shardId,
            amount: flipTo ? 1n : -1n,
            idempotencyKey: Buffer.alloc(0),
            fenceShardCount: 0,
            kind: EntryKind.memberFlip,
            member,
          });
        } else {
          const changes = Array.from(
            { length: 5 },
            () => [Math.floor(random() * 16_384), 1 + Math.floor(random() * 20)] as [number, number],
          );
          entries.push({
            shardId: 5,
            amount: 0n,
            idempotencyKey: Buffer.alloc(0),
            fenceShardCount: 0,
            kind: EntryKind.distinct,
            payload: packRegisterChanges(changes),
          });
        }
      }
      log.append(entries, 1n, 10_000 + batch * 250);
    }
    const nowMs = 10_000 + 80 * 250;
    const stateOf = (target: ShardLog) => {
      const memory = new NodeMemory();
      const lastLsn = rebuildMemory(target, memory, new DedupIndex(windowMs), nowMs, windowMs);
      return {
        lastLsn,
        totals: [1, 2, 3, 4, 5].map((shardId) => memory.totals.get(shardId)),
        windows: [1, 2].map((shardId) =>
          [0, 5_000, 12_000, 19_000].map((fromMs) => memory.windows.sum(shardId, nowMs - fromMs - bucketMs, nowMs + bucketMs)),
        ),
        members: [3, 4].map((shardId) => [
          memory.memberCount(shardId),
          Array.from({ length: 40 }, (_, index) => memory.hasMember(shardId, BigInt(index) * 0x1_0000_0001n)),
        ]),
        sketch: memory.sketch(5)?.serialize().toString('hex'),
      };
    };
    const full = stateOf(log);
    expect(full.members.map(([count]) => count)).toEqual(
      [3, 4].map((shardId) => [...present].filter(([id, isPresent]) => isPresent && id.startsWith(`${shardId}:`)).length),
    );
    for (const upto of [2n, full.lastLsn / 3n, full.lastLsn - 1n, full.lastLsn]) {
      while (log.foldSlice(upto, 17, 0, nowMs) > 0);
      expect(log.checkpointLsn).toBe(upto);
      expect(stateOf(log)).toEqual(full);
    }
    log.close();
    log = ShardLog.open(dir, checkpointFolder);
    expect(stateOf(log)).toEqual(full);
    log.close();
    // A log with kinds beyond increments cannot be folded by a node that does not know them.
    const bare = ShardLog.open(dir);
    bare.append(
      [{ shardId: 3, amount: 1n, idempotencyKey: Buffer.alloc(0), fenceShardCount: 0, kind: EntryKind.memberFlip, member: 999n }],
      2n,
      nowMs,
    );
    expect(() => bare.foldSlice(bare.lastLsn, 10, 0, nowMs)).toThrow(/folder/);
    bare.close();
  });

  it('window buckets past retention are dropped from the checkpoint when it folds', () => {
    dir = makeTempDir('checkpoint');
    const log = ShardLog.open(dir, checkpointFolder);
    const setting = {
      shardId: 1,
      amount: 0n,
      idempotencyKey: Buffer.alloc(0),
      fenceShardCount: 0,
      kind: EntryKind.windowConfig,
      payload: encodeWindowSetting({ bucketMs: 1_000, retentionMs: 3_000 }),
    };
    log.append([setting, { shardId: 1, amount: 7n, idempotencyKey: Buffer.alloc(0), fenceShardCount: 0 }], 1n, 1_000);
    log.append([{ shardId: 1, amount: 2n, idempotencyKey: Buffer.alloc(0), fenceShardCount: 0 }], 1n, 9_000);
    while (log.foldSlice(log.lastLsn, 100, 0, 9_500) > 0);
    const memory = new NodeMemory();
    memory.load(log.checkpointState());
    expect(memory.windows.buckets(1)).toEqual([[9_000, 2n]]);
    expect(memory.totals.get(1)).toBe(9n);
    log.close();
  });

  it('a longer retention revives no bucket that had expired when it was set, however sweeps and folds ran', () => {
    dir = makeTempDir('checkpoint');
    const log = ShardLog.open(dir, checkpointFolder);
    const setting = (retentionMs: number) => ({
      shardId: 1,
      amount: 0n,
      idempotencyKey: Buffer.alloc(0),
      fenceShardCount: 0,
      kind: EntryKind.windowConfig,
      payload: encodeWindowSetting({ bucketMs: 1_000, retentionMs }),
    });
    const plus = (amount: bigint) => ({ shardId: 1, amount, idempotencyKey: Buffer.alloc(0), fenceShardCount: 0 });
    log.append([setting(3_000)], 1n, 0);
    log.append([plus(7n)], 1n, 1_000);
    log.append([plus(2n)], 1n, 8_500);
    log.append([setting(60_000), plus(1n)], 1n, 10_000);
    const windowSum = (memory: NodeMemory) => memory.windows.sum(1, 10_000 - 59_000, 11_000);
    // Live memory whose sweep ran before the longer retention arrived, and one whose sweep never ran.
    const swept = new NodeMemory();
    const unswept = new NodeMemory();
    log.replay((entry) => {
      if (entry.atMs === 10_000) swept.windows.expire(9_000, 10);
      swept.apply(entry, entry.atMs);
      unswept.apply(entry, entry.atMs);
    });
    expect([windowSum(swept), windowSum(unswept)]).toEqual([3n, 3n]);
    // Folding at any point, with the fold running long after, gives the same.
    for (const upto of [2n, 3n, 5n]) {
      while (log.foldSlice(upto, 1, 0, 1_000_000) > 0);
      const recovered = new NodeMemory();
      rebuildMemory(log, recovered, new DedupIndex(windowMs), 10_500, windowMs);
      expect(windowSum(recovered)).toBe(3n);
    }
    log.close();
  });
});
