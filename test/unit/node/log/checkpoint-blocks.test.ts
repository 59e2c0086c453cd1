// The packed checkpoint (schema 7): a block's bytes decode to the totals they
// were encoded from at every int64 extreme and density, bytes a block could
// not have been written with are refused, and a log written by schema 6 (a
// file made by the previous node, test/fixtures/log-v6) opens with every
// total, part and tail entry it had.
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { type LogEntry, ShardLog, ShardLogError } from '../../../../src/node/log/index.ts';
import {
  blockShards,
  decodeBlock,
  encodeBlock,
  indexBlock,
  mergeBlockBytes,
  totalInBlock,
} from '../../../../src/node/log/checkpoint/checkpoint-blocks.ts';
import { checkpointFolder } from '../../../../src/node/state/node-memory.ts';
import { INT64_MAX, INT64_MIN } from '../../../../src/wire/index.ts';
import { makeTempDir, removeTempDir } from '../../../helpers/temp-dir.ts';
import { seededRandom } from '../../../helpers/seeded-random.ts';
import { dropEntry } from '../../../helpers/log-entries.ts';

const fixtureDir = path.join(import.meta.dirname, '..', '..', '..', 'fixtures', 'log-v6');

interface Expected {
  schemaVersion: string;
  checkpointLsn: string;
  lastLsn: string;
  checkpoint: [shardId: number, total: string][];
  parts: [shardId: number, part: string, hex: string][];
  tail: [lsn: string, shardId: number, amount: string][];
}

describe('checkpoint blocks', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) removeTempDir(dir);
  });

  it('a block decodes to the totals it was encoded from, whole or shard by shard, sparse or full, at every int64 extreme', () => {
    const random = seededRandom(0xb10c);
    const extremes = [0n, 1n, -1n, INT64_MAX, INT64_MIN, 2n ** 48n, -(2n ** 48n), 2n ** 48n - 1n, 2n ** 53n + 1n, -(2n ** 62n)];
    for (let trial = 0; trial < 300; trial++) {
      const firstShard = blockShards * Math.floor(random() * 5_000);
      const density = random();
      const ids: number[] = [];
      const totals: bigint[] = [];
      for (let shardId = Math.max(1, firstShard); shardId < firstShard + blockShards; shardId++) {
        if (random() >= density) continue;
        ids.push(shardId);
        totals.push(
          random() < 0.2 ? extremes[Math.floor(random() * extremes.length)]! : BigInt(Math.floor((random() - 0.3) * 2 ** (random() * 60))),
        );
      }
      const data = encodeBlock(firstShard, ids, totals);
      const decoded = decodeBlock(firstShard, data);
      expect([...decoded.ids]).toEqual(ids);
      expect([...decoded.totals]).toEqual(totals);
      // Looked up one shard at a time through the block's index: the same totals, and none for the absent.
      const indexed = indexBlock(firstShard, data);
      const model = new Map(ids.map((shardId, index) => [shardId, totals[index]!]));
      for (let shardId = firstShard; shardId < firstShard + blockShards; shardId++)
        expect(totalInBlock(indexed, shardId)).toBe(model.get(shardId));
    }
  });

  it('bytes no block was written with are refused, and a shard outside the block is never encoded', () => {
    const data = encodeBlock(256, [256, 300, 511], [5n, INT64_MIN, -7n]);
    expect(() => decodeBlock(256, data.subarray(0, data.length - 1))).toThrow(ShardLogError);
    expect(() => decodeBlock(256, Buffer.concat([data, Buffer.from([0x00])]))).toThrow(ShardLogError);
    // Shard 511 + 1 lies in the next block.
    expect(() => decodeBlock(256, Buffer.concat([data, Buffer.from([0x00, 0x02])]))).toThrow(/past the block/);
    expect(() => decodeBlock(0, Buffer.alloc(12, 0xff))).toThrow(ShardLogError);
    expect(() => encodeBlock(256, [512], [1n])).toThrow(ShardLogError);
    expect(() => encodeBlock(256, [300, 300], [1n, 1n])).toThrow(ShardLogError);
    expect(() => encodeBlock(256, [300], [INT64_MAX + 1n])).toThrow(ShardLogError);
  });

  it("a merge of changed shards into a block's bytes equals encoding the changed totals, seeded", () => {
    const random = seededRandom(0x3e76e);
    const someTotal = (): bigint =>
      random() < 0.1 ? (random() < 0.5 ? INT64_MAX : INT64_MIN) : BigInt(Math.floor((random() - 0.5) * 2 ** (random() * 60)));
    for (let trial = 0; trial < 300; trial++) {
      const firstShard = blockShards * Math.floor(random() * 100);
      const model = new Map<number, bigint>();
      for (let shardId = Math.max(1, firstShard); shardId < firstShard + blockShards; shardId++)
        if (random() < random()) model.set(shardId, someTotal());
      const data = encodeBlock(firstShard, [...model.keys()], [...model.values()]);
      const changes = new Map<number, bigint | undefined>();
      for (let shardId = Math.max(1, firstShard); shardId < firstShard + blockShards; shardId++) {
        if (random() > 0.1) continue;
        const total = random() < 0.3 ? undefined : someTotal();
        changes.set(shardId, total);
        if (total === undefined) model.delete(shardId);
        else model.set(shardId, total);
      }
      const merged = mergeBlockBytes(firstShard, data, changes);
      const ids = [...model.keys()].sort((a, b) => a - b);
      expect(merged).toEqual(
        encodeBlock(
          firstShard,
          ids,
          ids.map((shardId) => model.get(shardId)!),
        ),
      );
    }
    // Changes out of order, or outside the block, are refused.
    expect(() =>
      mergeBlockBytes(
        0,
        Buffer.alloc(0),
        new Map([
          [5, 1n],
          [3, 1n],
        ]),
      ),
    ).toThrow(ShardLogError);
    expect(() => mergeBlockBytes(0, Buffer.alloc(0), new Map([[256, 1n]]))).toThrow(ShardLogError);
  });

  it('shard log: a file written by schema 6 opens at 9 (through 7 and 8) with every checkpoint total, part and tail entry, and folds on from there', () => {
    const expected = JSON.parse(fs.readFileSync(path.join(fixtureDir, 'expected.json'), 'utf8')) as Expected;
    expect(expected.schemaVersion).toBe('6');
    const dir = makeTempDir('log-v6');
    dirs.push(dir);
    fs.copyFileSync(path.join(fixtureDir, 'node.sqlite'), path.join(dir, 'node.sqlite'));
    const before = new Database(path.join(dir, 'node.sqlite'), { readonly: true });
    expect(before.prepare('SELECT count(*) AS rows FROM checkpoint').get()).toEqual({ rows: expected.checkpoint.length });
    before.close();

    let log = ShardLog.open(dir, checkpointFolder);
    const checkpoint = new Map(expected.checkpoint.map(([shardId, total]) => [shardId, BigInt(total)]));
    try {
      expect(log.getMeta('schema_version')).toBe('9');
      expect(log.checkpointLsn).toBe(BigInt(expected.checkpointLsn));
      expect(log.lastLsn).toBe(BigInt(expected.lastLsn));
      expect(log.checkpointTotals()).toEqual(checkpoint);
      // Spans several blocks, with INT64_MAX and INT64_MIN (a lookup of some shards reads only their blocks).
      expect(new Set([...checkpoint.keys()].map((shardId) => Math.floor(shardId / blockShards))).size).toBeGreaterThan(4);
      expect(log.checkpointTotals([700, 701, 702, 9_999])).toEqual(
        new Map([
          [700, INT64_MAX],
          [701, INT64_MIN],
          [702, -1n],
        ]),
      );
      const parts = [...log.checkpointParts()].flatMap(([shardId, byPart]) =>
        [...byPart].map(([part, data]) => [shardId, part, data.toString('hex')]),
      );
      expect(parts).toEqual(expected.parts);
      const tail: [string, number, string][] = [];
      log.replay((entry) => tail.push([String(entry.lsn), entry.shardId, String(entry.amount)]));
      expect(tail).toEqual(expected.tail);
      // Folding the tail in gives checkpoint + tail, across reopen.
      while (log.foldSlice(log.lastLsn, 100, 0, 4_000) > 0);
      log.close();
      log = ShardLog.open(dir, checkpointFolder);
      const full = new Map(checkpoint);
      for (const [, shardId, amount] of expected.tail) full.set(shardId, (full.get(shardId) ?? 0n) + BigInt(amount));
      expect(log.checkpointTotals()).toEqual(full);
      const tables = new Database(path.join(dir, 'node.sqlite'), { readonly: true });
      expect(
        tables.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'checkpoint%' ORDER BY name").pluck().all(),
      ).toEqual(['checkpoint_blocks', 'checkpoint_parts']);
      tables.close();
    } finally {
      log.close();
    }
  });

  it('shard log: a round whose blocks are merged in steps before its commit leaves the totals a commit without steps leaves', () => {
    const random = seededRandom(0x57e9);
    const [stepped, direct] = [0, 1].map(() => {
      const dir = makeTempDir('log-steps');
      dirs.push(dir);
      return ShardLog.open(dir, checkpointFolder);
    });
    try {
      for (let batch = 0; batch < 30; batch++) {
        const entries: LogEntry[] = Array.from({ length: 200 }, () => ({
          shardId: 1 + Math.floor(random() * 5_000),
          amount: BigInt(Math.floor(random() * 100) - 40) || 1n,
          idempotencyKey: Buffer.alloc(0),
          fenceShardCount: 0,
        }));
        if (batch % 7 === 3) entries.push(dropEntry(1 + Math.floor(random() * 5_000)));
        stepped!.append(entries, 1n, 1_000 + batch);
        direct!.append(entries, 1n, 1_000 + batch);
        if (batch % 10 !== 9) continue;
        const round = stepped!.beginFold();
        while (stepped!.foldRead(round, stepped!.lastLsn, 500, 2_000) > 0);
        let steps = 0;
        while (stepped!.foldPrepare(round, 3) > 0) steps++;
        expect(steps).toBeGreaterThan(3);
        // No read after the merge began: the merged bytes would miss it.
        expect(() => stepped!.foldRead(round, stepped!.lastLsn, 500, 2_000)).toThrow(/after its commit was prepared/);
        expect(stepped!.foldCommit(round, 0)).toBeGreaterThan(0);
        while (direct!.foldSlice(direct!.lastLsn, 500, 0, 2_000) > 0);
        expect(stepped!.checkpointTotals()).toEqual(direct!.checkpointTotals());
      }
      expect(stepped!.checkpointTotals().size).toBeGreaterThan(1_000);
    } finally {
      stepped!.close();
      direct!.close();
    }
  });

  it('shard log: a block folded past the checkpoint lsn (not a file this node writes) is refused at open', () => {
    const dir = makeTempDir('log-ahead');
    dirs.push(dir);
    const log = ShardLog.open(dir, checkpointFolder);
    log.append([{ shardId: 3, amount: 4n, idempotencyKey: Buffer.alloc(0), fenceShardCount: 0 }], 1n, 1_000);
    while (log.foldSlice(log.lastLsn, 100, 0, 1_000) > 0);
    log.close();
    const db = new Database(path.join(dir, 'node.sqlite'));
    db.prepare('UPDATE checkpoint_blocks SET folded_lsn = 2').run();
    db.close();
    expect(() => ShardLog.open(dir, checkpointFolder)).toThrow(/past its checkpoint/);
  });
});
