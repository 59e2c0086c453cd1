// The key index: window and pruning in memory, and memory bounded in front
// of the log on disk (a real ShardLog in a temp dir), which keeps the whole
// window: the oldest keys, fences included, are still found; a key past the
// window is not; the disk is asked only when memory no longer covers it.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DedupIndex, type KeyStore } from '../../../../src/node/state/dedup-index.ts';
import { ShardLog } from '../../../../src/node/log/index.ts';
import { NodeMemory } from '../../../../src/node/state/node-memory.ts';
import { rebuildMemory } from '../../../../src/node/state/recovery.ts';
import { makeTempDir, removeTempDir } from '../../../helpers/temp-dir.ts';
import { randomInt, seededRandom } from '../../../helpers/seeded-random.ts';

const key = (text: string): Buffer => Buffer.from(text);

describe('dedup index', () => {
  it('a key is seen within the window and forgotten after it, per shard', () => {
    const index = new DedupIndex(1_000);
    index.add(1, key('a'), 7n, 0, 0);
    expect(index.get(1, key('a'), 999)?.lsn).toBe(7n);
    expect(index.get(2, key('a'), 10)).toBeUndefined();
    expect(index.get(1, key('a'), 1_000)).toBeUndefined();
  });

  it('keys that differ only in bytes past ASCII stay distinct', () => {
    const index = new DedupIndex(1_000);
    index.add(1, Buffer.from([0xff, 0x00]), 1n, 0, 0);
    expect(index.get(1, Buffer.from([0xff, 0x01]), 0)).toBeUndefined();
    expect(index.get(1, Buffer.from([0xff, 0x00]), 0)?.lsn).toBe(1n);
    expect(index.get(12, Buffer.from([0xff, 0x00]), 0)).toBeUndefined();
  });

  it('prune drops only expired keys, oldest first, at most `limit` per call', () => {
    const index = new DedupIndex(1_000);
    for (let at = 0; at < 10; at++) index.add(1, key(`k${at}`), BigInt(at + 1), at * 100, 0);
    expect(index.prune(1_450, 2)).toBe(2);
    expect(index.prune(1_450)).toBe(3);
    expect(index.size).toBe(5);
    expect(index.get(1, key('k5'), 1_450)?.lsn).toBe(6n);
  });

  it('without a disk behind it, past keysInMemoryMax the oldest keys are forgotten and the shortened window is reported', () => {
    const index = new DedupIndex(60_000, 3);
    for (let at = 0; at < 5; at++) index.add(1, key(`k${at}`), BigInt(at + 1), at * 1_000, 0);
    expect(index.size).toBe(3);
    expect(index.evictedFromMemory).toBe(2);
    expect(index.get(1, key('k0'), 5_000)).toBeUndefined();
    expect(index.get(1, key('k4'), 5_000)?.lsn).toBe(5n);
    // Every key committed after k1 (at 1,000) is still held.
    expect(index.coveredMs(5_000)).toBe(4_000);
    expect(new DedupIndex(60_000).coveredMs(5_000)).toBe(60_000);
  });
});

describe('dedup index: memory in front of the log on disk', () => {
  const windowMs = 60_000;
  const epoch = 1n;
  let dataDir: string;
  let log: ShardLog;
  /** The log, with every lookup counted. */
  let disk: KeyStore & { lookups: number };

  beforeEach(() => {
    dataDir = makeTempDir('dedup-disk');
    log = ShardLog.open(dataDir);
    disk = {
      lookups: 0,
      findKey(shardId, keyBytes, sinceMs) {
        this.lookups++;
        return log.findKey(shardId, keyBytes, sinceMs);
      },
    };
  });
  afterEach(() => {
    log.close();
    removeTempDir(dataDir);
  });

  /** Commits a keyed row (an increment, or a fence at fenceShardCount) and tells the index, as group commit does. */
  function commit(index: DedupIndex, shardId: number, text: string, atMs: number, fenceShardCount = 0): bigint {
    const entry = { shardId, amount: fenceShardCount === 0 ? 1n : 0n, idempotencyKey: key(text), fenceShardCount };
    const lsn = log.append([entry], epoch, atMs);
    index.add(shardId, key(text), lsn, atMs, fenceShardCount);
    return lsn;
  }

  it('eviction and pruning take the oldest key in memory, re-added keys counting as new, through any mix of adds, prunes and clears (seeded, against a model)', () => {
    const random = seededRandom(0xe71c);
    const windowMs = 500;
    const keysMax = 64;
    const index = new DedupIndex(windowMs, keysMax);
    // The model: keys in memory, oldest first, by the time they were last added.
    let model: { id: string; atMs: number }[] = [];
    let nowMs = 0;
    for (let step = 0; step < 20_000; step++) {
      nowMs += randomInt(random, 0, 3);
      const roll = random();
      if (roll < 0.9) {
        const id = `k${randomInt(random, 0, 200)}`;
        index.add(1, key(id), BigInt(step), nowMs, 0);
        model = model.filter((entry) => entry.id !== id);
        model.push({ id, atMs: nowMs });
        if (model.length > keysMax) model.shift();
      } else if (roll < 0.995) {
        const limit = randomInt(random, 1, 20);
        const expired = model
          .slice(0, limit)
          .filter(
            (entry, position) =>
              nowMs - entry.atMs >= windowMs && model.slice(0, position).every((before) => nowMs - before.atMs >= windowMs),
          );
        expect(index.prune(nowMs, limit)).toBe(expired.length);
        model = model.slice(expired.length);
      } else {
        index.clear();
        model = [];
      }
      expect(index.size).toBe(model.length);
      if (step % 97 === 0)
        for (const entry of model)
          expect(index.get(1, key(entry.id), nowMs)?.atMs, `${entry.id} at step ${step}`).toBe(
            nowMs - entry.atMs < windowMs ? entry.atMs : undefined,
          );
    }
    for (const entry of model)
      expect(index.get(1, key(entry.id), nowMs)?.atMs, entry.id).toBe(nowMs - entry.atMs < windowMs ? entry.atMs : undefined);
  });

  it('with more keys than memory holds, the oldest is still found, from disk, with its lsn and time', () => {
    const index = new DedupIndex(windowMs, 500, disk);
    for (let n = 0; n < 2_000; n++) commit(index, 1 + (n % 7), `key-${n}`, 1_000 + n);
    expect(index.size).toBe(500);
    expect(index.evictedFromMemory).toBe(1_500);
    expect(index.get(1, key('key-0'), 5_000)).toEqual({ lsn: 1n, atMs: 1_000, fenceShardCount: 0 });
    expect(index.diskLookups).toBe(1);
    // Per shard, as in memory: the same key at another shard was never seen.
    expect(index.get(2, key('key-0'), 5_000)).toBeUndefined();
    // Recent keys answer from memory, without the disk.
    expect(index.get(1 + (1_999 % 7), key('key-1999'), 5_000)?.lsn).toBe(2_000n);
    expect(index.diskLookups).toBe(2);
    expect(disk.lookups).toBe(2);
    expect(index.coveredMs(5_000)).toBe(windowMs);
  });

  it("a key's state on disk is its newest row: a fence, then the increment that applied", () => {
    const index = new DedupIndex(windowMs, 2, disk);
    commit(index, 3, 'fenced', 1_000, 4);
    commit(index, 3, 'fenced-then-applied', 1_001, 4);
    commit(index, 3, 'fenced-then-applied', 1_002, 8);
    const appliedLsn = commit(index, 3, 'fenced-then-applied', 1_003);
    // Push both out of memory.
    commit(index, 3, 'other-1', 1_004);
    commit(index, 3, 'other-2', 1_005);
    expect(index.get(3, key('fenced'), 2_000)).toEqual({ lsn: 1n, atMs: 1_000, fenceShardCount: 4 });
    expect(index.get(3, key('fenced-then-applied'), 2_000)).toEqual({ lsn: appliedLsn, atMs: 1_003, fenceShardCount: 0 });
    expect(disk.lookups).toBe(2);
  });

  it('a key past the window is found neither in memory nor on disk', () => {
    const index = new DedupIndex(windowMs, 1, disk);
    commit(index, 1, 'old', 1_000);
    commit(index, 1, 'young', 30_000);
    // 'old' is on disk only; at 61,000 its window has just ended.
    expect(index.get(1, key('old'), 60_999)?.lsn).toBe(1n);
    expect(index.get(1, key('old'), 61_000)).toBeUndefined();
    // A key in memory past its window is not looked up on disk either: memory holds its newest row.
    const lookups = disk.lookups;
    expect(index.get(1, key('young'), 90_000)).toBeUndefined();
    expect(disk.lookups).toBe(lookups);
  });

  it('the disk is never asked while memory covers the window, and is asked again only until the evicted keys age out', () => {
    const index = new DedupIndex(windowMs, 100, disk);
    for (let n = 0; n < 100; n++) commit(index, 1, `k${n}`, 1_000 + n);
    // Memory holds every key: misses (new keys) are answered without the disk.
    for (let n = 100; n < 200; n++) expect(index.get(1, key(`k${n}`), 2_000)).toBeUndefined();
    expect(index.get(1, key('k0'), 2_000)?.lsn).toBe(1n);
    expect(disk.lookups).toBe(0);
    expect(index.memoryCoveredMs(2_000)).toBe(windowMs);
    // One more key evicts k0 (committed at 1,000): a miss must now ask the disk.
    commit(index, 1, 'k100', 1_100);
    expect(index.diskHoldsMore(2_000)).toBe(true);
    expect(index.memoryCoveredMs(2_000)).toBe(1_000);
    expect(index.get(1, key('k0'), 2_000)?.lsn).toBe(1n);
    expect(index.get(1, key('never'), 2_000)).toBeUndefined();
    expect(disk.lookups).toBe(2);
    // Once k0's window has ended, memory covers the window again.
    expect(index.diskHoldsMore(61_000)).toBe(false);
    expect(index.get(1, key('never'), 61_000)).toBeUndefined();
    expect(disk.lookups).toBe(2);
  });

  it('a rebuild loads only the newest keys into memory; the older ones are found on disk', () => {
    for (let n = 0; n < 1_000; n++)
      log.append([{ shardId: 1, amount: 1n, idempotencyKey: key(`r${n}`), fenceShardCount: 0 }], epoch, 1_000 + n);
    // An unkeyed tail, and a checkpoint that folded part of the log (keyed rows stay for the window).
    log.append([{ shardId: 2, amount: 5n, idempotencyKey: Buffer.alloc(0), fenceShardCount: 0 }], epoch, 2_000);
    log.foldSlice(600n, 10_000, 0);
    const index = new DedupIndex(windowMs, 300, disk);
    const memory = new NodeMemory();
    expect(rebuildMemory(log, memory, index, 3_000, windowMs)).toBe(1_001n);
    expect(memory.totals.get(1)).toBe(1_000n);
    expect(index.size).toBe(300);
    expect(index.evictedFromMemory).toBe(0);
    // r700 is the oldest in memory; r699 (committed at 1,699) and older are on disk only.
    expect(index.memoryCoveredMs(3_000)).toBe(1_301);
    expect(index.get(1, key('r700'), 3_000)?.lsn).toBe(701n);
    expect(disk.lookups).toBe(0);
    expect(index.get(1, key('r0'), 3_000)?.lsn).toBe(1n);
    expect(index.get(1, key('r699'), 3_000)?.lsn).toBe(700n);
    expect(disk.lookups).toBe(2);
    // A window that holds fewer rows than memory: everything loads, the disk is never asked.
    const roomy = new DedupIndex(windowMs, 5_000, disk);
    rebuildMemory(log, new NodeMemory(), roomy, 3_000, windowMs);
    expect(roomy.size).toBe(1_000);
    expect(roomy.diskHoldsMore(3_000)).toBe(false);
    expect(roomy.get(1, key('new'), 3_000)).toBeUndefined();
    expect(disk.lookups).toBe(2);
  });

  it('memory bounded in front of the disk answers exactly as unbounded memory does (random keys, fences, times)', () => {
    for (const seed of [1, 2, 3]) {
      const random = seededRandom(0xdd_0000 + seed);
      const unbounded = new DedupIndex(windowMs, Number.MAX_SAFE_INTEGER);
      const bounded = new DedupIndex(windowMs, randomInt(random, 1, 40), disk);
      let nowMs = 1_000 + seed * 1_000_000;
      for (let step = 0; step < 3_000; step++) {
        nowMs += randomInt(random, 0, 200);
        const shardId = randomInt(random, 1, 3);
        const text = `s${seed}-k${randomInt(random, 0, 300)}`;
        if (random() < 0.5) {
          // Fences first (rising shard counts), then at most one increment, as group commit writes them.
          const current = unbounded.get(shardId, key(text), nowMs);
          if (current?.fenceShardCount === 0) continue;
          const fenceShardCount = random() < 0.3 ? (current?.fenceShardCount ?? 1) + randomInt(random, 1, 3) : 0;
          const lsn = commit(bounded, shardId, text, nowMs, fenceShardCount);
          unbounded.add(shardId, key(text), lsn, nowMs, fenceShardCount);
        } else {
          const at = nowMs + randomInt(random, 0, windowMs);
          expect(bounded.get(shardId, key(text), at), `seed ${seed} step ${step}`).toEqual(unbounded.get(shardId, key(text), at));
        }
        if (random() < 0.01) {
          bounded.prune(nowMs, randomInt(random, 1, 50));
          unbounded.prune(nowMs);
        }
      }
      expect(bounded.diskLookups).toBeGreaterThan(0);
    }
  });
});
