// Contract: recovery from checkpoint + tail gives exactly what replaying the
// whole log gives — totals, keys, lsn and epoch — wherever the fold stopped.
import { afterEach, describe, expect, it } from 'vitest';
import { ShardLog, type LogEntry } from '../../src/node/shard-log.ts';
import { NodeMemory, checkpointFolder } from '../../src/node/node-memory.ts';
import { DedupIndex } from '../../src/node/dedup-index.ts';
import { rebuildMemory } from '../../src/node/node-service.ts';
import { makeTempDir, removeTempDir } from './temp-dir.ts';
import { seededRandom } from './seeded-random.ts';

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

  it('checkpoint: recovery from checkpoint + tail equals a full replay, wherever the fold stops, across reopen', () => {
    dir = makeTempDir('checkpoint');
    let log = ShardLog.open(dir);
    const random = seededRandom(0xc4ec);
    const sequence = { next: 0 };
    for (let batch = 0; batch < 60; batch++) log.append(randomEntries(random, 1 + Math.floor(random() * 50), sequence), BigInt(1 + Math.floor(batch / 20)), 1_000 + batch * 10);
    const nowMs = 1_000 + 60 * 10;
    const full = memoryOf(log, nowMs);
    const keys = Array.from({ length: sequence.next }, (_, index) => Buffer.from(`k${index}`));
    const seen = (dedup: DedupIndex) => keys.map((key) => [1, 2, 3, 4, 5].map((shardId) => dedup.get(shardId, key, nowMs)?.lsn ?? null));

    for (const upto of [1n, 7n, full.lastLsn / 2n, full.lastLsn - 1n, full.lastLsn]) {
      while (log.foldSlice(upto, 13, 0) > 0);
      expect(log.checkpointLsn).toBe(upto);
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
    expect(log.append([{ shardId: 1, amount: 5n, idempotencyKey: Buffer.alloc(0), fenceShardCount: 0 }], 9n, nowMs)).toBe(full.lastLsn + 1n);
    log.close();
  });

  it('checkpoint: folded rows leave the log except keys the window still needs, which go once they expire', () => {
    dir = makeTempDir('checkpoint');
    const log = ShardLog.open(dir);
    for (let index = 0; index < 100; index++) {
      log.append([{ shardId: 1, amount: 1n, idempotencyKey: index % 10 === 0 ? Buffer.from(`key${index}`) : Buffer.alloc(0), fenceShardCount: 0 }], 1n, index * 100);
    }
    while (log.foldSlice(100n, 30, 5_000) > 0);
    const rowsLeft = (): number => log.readFrom(101n, 10).length + [...Array(10).keys()].filter((index) => memoryOf(log, 10_000).dedup.get(1, Buffer.from(`key${index * 10}`), 10_000) !== undefined).length;
    // Keys written at 5,000 ms or later survive the fold: key50 .. key90.
    expect(rowsLeft()).toBe(5);
    expect(memoryOf(log, 10_000).totals.get(1)).toBe(100n);
    expect(log.pruneFoldedKeys(8_000, 100)).toBe(3);
    expect(memoryOf(log, 10_000).dedup.size).toBe(2);
    expect(memoryOf(log, 10_000).totals.get(1)).toBe(100n);
    log.close();
  });

  it('checkpoint: folded entries cannot be read for replication or truncated away', () => {
    dir = makeTempDir('checkpoint');
    const log = ShardLog.open(dir);
    for (let index = 0; index < 10; index++) log.append([{ shardId: 1, amount: 1n, idempotencyKey: Buffer.alloc(0), fenceShardCount: 0 }], 1n, 0);
    log.foldSlice(6n, 100, 0);
    expect(() => log.readFrom(6n, 10)).toThrow(/folded/);
    expect(log.readFrom(7n, 10).map((entry) => entry.lsn)).toEqual([7n, 8n, 9n, 10n]);
    expect(() => log.truncateAfter(5n)).toThrow(/checkpoint/);
    expect(log.truncateAfter(8n)).toBe(2);
    expect(memoryOf(log, 0).totals.get(1)).toBe(8n);
    log.close();
  });
});
