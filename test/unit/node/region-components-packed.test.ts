// Packed component entries on a node: one log row holding many shards'
// components, each row the same max-register per (shard, origin) as a
// one-component entry. Group commit logs only the rows that move a register
// forward; duplicated, reordered and older rows change nothing; a row for a
// dropped shard fails the group whole; and the log (replay, checkpoint + tail
// wherever the fold stops, reopen) holds exactly what memory holds, even
// where a fold slice ends inside a run of packed entries whose rows touch
// shards no other entry of the slice does.
import { status } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import {
  encodeComponent,
  encodePackedComponents,
  mergeComponent,
  type RegionComponent,
  type ShardComponent,
} from '../../../src/wire/internal/index.ts';
import { EntryKind, type LogEntry, type ShardLog } from '../../../src/node/log/index.ts';
import { DedupIndex, NodeMemory, rebuildMemory } from '../../../src/node/state/index.ts';
import { GroupCommitter, type ApplyEntry, type CommitHooks } from '../../../src/node/write/group-commit.ts';
import type { RoleState } from '../../../src/node/state/node-role.ts';
import { seededRandom } from '../../helpers/seeded-random.ts';
import { useTempLogs } from '../../helpers/temp-log.ts';

const noKey = Buffer.alloc(0);
const windowMs = 60_000;
const epoch = 2n;

function packedEntry(rows: readonly ShardComponent[]): LogEntry {
  return {
    shardId: rows[0]!.shardId,
    amount: 0n,
    idempotencyKey: noKey,
    fenceShardCount: 0,
    kind: EntryKind.regionComponents,
    payload: encodePackedComponents(rows),
  };
}

function packedItem(rows: readonly ShardComponent[]): ApplyEntry {
  return { ...packedEntry(rows), op: 'regionComponents', fence: false, routedShardCount: 0, packed: [...rows] };
}

function component(origin: string, term: bigint, round: bigint, total: bigint): RegionComponent {
  return { origin, version: { term, round }, total, asOfUnixMs: 1_000 + Number(round), generation: 0 };
}

/** Every (shard, origin) -> total memory holds for shards 1..shardCount. */
function held(memory: NodeMemory, shardCount: number): Record<string, bigint> {
  const out: Record<string, bigint> = {};
  for (let shardId = 1; shardId <= shardCount; shardId++)
    for (const [origin, each] of memory.componentsOf(shardId) ?? new Map<string, RegionComponent>())
      out[`${shardId}/${origin}`] = each.total;
  return out;
}

/** Random rows over shards 1..shardCount: versions in any order, the same (shard, origin) several times, duplicates. */
function randomRows(random: () => number, count: number, shardCount: number): ShardComponent[] {
  const rows: ShardComponent[] = [];
  for (let index = 0; index < count; index++) {
    const version = { term: BigInt(1 + Math.floor(random() * 3)), round: BigInt(Math.floor(random() * 20)) };
    const row = {
      shardId: 1 + Math.floor(random() * shardCount),
      component: {
        origin: random() < 0.5 ? 'eu' : 'ap',
        version,
        total: BigInt(Math.floor(random() * 1_000) - 200),
        asOfUnixMs: index,
        generation: 0,
      },
    };
    rows.push(row);
    if (random() < 0.2) rows.push(row);
  }
  return rows;
}

/** Splits rows into packed entries of 1..maxRows. */
function packInto(rows: readonly ShardComponent[], random: () => number, maxRows: number): ShardComponent[][] {
  const packs: ShardComponent[][] = [];
  for (let at = 0; at < rows.length;) {
    const size = 1 + Math.floor(random() * maxRows);
    packs.push(rows.slice(at, at + size));
    at += size;
  }
  return packs;
}

class Hooks implements CommitHooks {
  readonly committedRows: LogEntry[][] = [];
  onCommit(rows: readonly LogEntry[]): void {
    this.committedRows.push([...rows]);
  }
  waitForFollower(): Promise<void> {
    return Promise.resolve();
  }
}

describe('packed region components', () => {
  const { open, reopen } = useTempLogs('regions-packed');

  /** A primary's group commit over a fresh log, its commits recorded. */
  const primary = () => {
    const log = open();
    const memory = new NodeMemory();
    const hooks = new Hooks();
    const role: RoleState = { role: 'primary', epoch, peer: 'follower:1', syncRequired: false, epochStartLsn: 0n, configVersion: 0n };
    return {
      log,
      memory,
      hooks,
      committer: new GroupCommitter(
        log,
        memory,
        () => role,
        new DedupIndex(windowMs),
        hooks,
        () => 5_000,
      ),
    };
  };

  it('memory: packed rows in any order, duplicated and older, hold what one entry per component holds: the newest per shard and origin', () => {
    for (const seed of [1, 2, 3, 4, 5]) {
      const random = seededRandom(seed);
      const rows = randomRows(random, 300, 12);
      const packed = new NodeMemory();
      for (const pack of packInto(rows, random, 40)) packed.apply(packedEntry(pack), 0);
      const single = new NodeMemory();
      const expected = new Map<string, RegionComponent>();
      for (const row of rows) {
        single.apply(
          {
            shardId: row.shardId,
            amount: 0n,
            idempotencyKey: noKey,
            fenceShardCount: 0,
            kind: EntryKind.regionComponent,
            payload: encodeComponent(row.component),
          },
          0,
        );
        const key = `${row.shardId}/${row.component.origin}`;
        expected.set(key, mergeComponent(expected.get(key), row.component));
      }
      const want = Object.fromEntries([...expected].map(([key, each]) => [key, each.total]));
      expect(held(packed, 12), `seed ${seed}`).toEqual(want);
      expect(held(single, 12)).toEqual(want);
    }
  });

  it('group commit: logs one entry of only the rows that move a register forward; a redelivered or older batch logs nothing and changes nothing', async () => {
    const { log, memory, hooks, committer } = primary();
    const first = [
      { shardId: 4, component: component('eu', 2n, 5n, 40n) },
      { shardId: 9, component: component('eu', 2n, 5n, 90n) },
      { shardId: 7, component: component('us', 1n, 3n, 70n) },
    ];
    const outcome = await committer.submit([[packedItem(first)]], epoch);
    expect(outcome.results[0]).toMatchObject({ code: status.OK, applied: [true], changed: ['3'] });
    expect(hooks.committedRows.flat().map((row) => row.kind)).toEqual([EntryKind.regionComponents]);
    expect(held(memory, 10)).toEqual({ '4/eu': 40n, '7/us': 70n, '9/eu': 90n });

    // The same batch again, then one older: nothing logged, nothing moved.
    const rowsBefore = log.lastLsn;
    const again = await committer.submit([[packedItem(first)]], epoch);
    expect(again.results[0]).toMatchObject({ code: status.OK, applied: [false], changed: ['0'] });
    const older = await committer.submit([[packedItem([{ shardId: 9, component: component('eu', 2n, 4n, 999n) }])]], epoch);
    expect(older.results[0]).toMatchObject({ code: status.OK, applied: [false], changed: ['0'] });
    expect(log.lastLsn).toBe(rowsBefore);
    expect(held(memory, 10)).toEqual({ '4/eu': 40n, '7/us': 70n, '9/eu': 90n });

    // A mix: only the newer row is logged, on its own shard.
    const mixed = [
      { shardId: 4, component: component('eu', 2n, 4n, -1n) },
      { shardId: 9, component: component('eu', 3n, 1n, 91n) },
    ];
    const moved = await committer.submit([[packedItem(mixed)]], epoch);
    expect(moved.results[0]).toMatchObject({ code: status.OK, applied: [true], changed: ['1'] });
    const last = hooks.committedRows.at(-1)!;
    expect(last).toHaveLength(1);
    expect(last[0]).toMatchObject({ shardId: 9, kind: EntryKind.regionComponents });
    expect(held(memory, 10)).toEqual({ '4/eu': 40n, '7/us': 70n, '9/eu': 91n });

    // A row for a dropped shard fails the whole group: nothing of it is logged.
    await committer.submit(
      [[{ shardId: 7, amount: 0n, idempotencyKey: noKey, fenceShardCount: 0, fence: false, routedShardCount: 0, op: 'drop' }]],
      epoch,
    );
    const lsnBeforeRefusal = log.lastLsn;
    const refused = await committer.submit(
      [
        [
          packedItem([
            { shardId: 4, component: component('eu', 9n, 1n, 1n) },
            { shardId: 7, component: component('us', 9n, 1n, 1n) },
          ]),
        ],
      ],
      epoch,
    );
    expect(refused.results[0]!.code).toBe(status.NOT_FOUND);
    expect(refused.results[0]!.message).toMatch(/shard 7 was dropped/);
    expect(log.lastLsn).toBe(lsnBeforeRefusal);
    expect(held(memory, 10)).toEqual({ '4/eu': 40n, '9/eu': 91n });

    // A restart rebuilds the same registers from the log.
    const rebuilt = new NodeMemory();
    rebuildMemory(reopen(log), rebuilt, new DedupIndex(windowMs), 6_000, windowMs);
    expect(held(rebuilt, 10)).toEqual(held(memory, 10));
  });

  it('log: replay, checkpoint + tail wherever the fold stops (slices ending inside packed runs), and a reopen give what memory holds; a drop frees a row shard, a clear keeps it', () => {
    const log: ShardLog = open();
    const random = seededRandom(0x9ac4);
    const live = new NodeMemory();
    const packs = packInto(randomRows(random, 400, 40), random, 25);
    packs.forEach((pack, index) => {
      const entries: LogEntry[] = [packedEntry(pack)];
      if (random() < 0.3) entries.push({ shardId: 1 + Math.floor(random() * 40), amount: 5n, idempotencyKey: noKey, fenceShardCount: 0 });
      log.append(entries, epoch, 1_000 + index);
      for (const entry of entries) live.apply(entry, 1_000 + index);
    });
    const drop: LogEntry = { shardId: 3, amount: 0n, idempotencyKey: noKey, fenceShardCount: 0, kind: EntryKind.drop };
    const clear: LogEntry = {
      shardId: 5,
      amount: 0n,
      idempotencyKey: noKey,
      fenceShardCount: 0,
      kind: EntryKind.clear,
      payload: Buffer.from('0000000000000001', 'hex'),
    };
    log.append([drop, clear], epoch, 5_000);
    live.apply(drop, 5_000);
    live.apply(clear, 5_000);
    const expected = held(live, 40);
    expect(Object.keys(expected).some((key) => key.startsWith('3/'))).toBe(false);
    expect(Object.keys(expected).some((key) => key.startsWith('5/'))).toBe(true);
    const rebuilt = (from: ShardLog): Record<string, bigint> => {
      const memory = new NodeMemory();
      rebuildMemory(from, memory, new DedupIndex(windowMs), 6_000, windowMs);
      return held(memory, 40);
    };
    expect(rebuilt(log)).toEqual(expected);
    for (const upto of [1n, 2n, log.lastLsn / 3n, log.lastLsn / 2n, log.lastLsn]) {
      // Slices of 1 and 3 rows: a packed entry's rows reach shards the slice's other entries never name.
      while (log.foldSlice(upto, upto % 2n === 0n ? 3 : 1, 0, 6_000) > 0);
      expect(rebuilt(log), `folded to ${upto}`).toEqual(expected);
    }
    expect(rebuilt(reopen(log))).toEqual(expected);
  });

  it('a log entry of the packed kind that does not decode, or whose row shard is not its first row, is refused at write', () => {
    const log = open();
    const rows = [{ shardId: 2, component: component('eu', 1n, 1n, 1n) }];
    const payload = encodePackedComponents(rows);
    expect(() => log.append([{ ...packedEntry(rows), payload: payload.subarray(0, payload.length - 1) }], epoch, 1)).toThrow(/cut short/);
    expect(() => log.append([{ ...packedEntry(rows), shardId: 3 }], epoch, 1)).toThrow(/starts with shard 2/);
    expect(() => log.append([{ ...packedEntry(rows), amount: 1n }], epoch, 1)).toThrow(/no amount/);
    expect(log.lastLsn).toBe(0n);
  });
  it('a fold slice is cut by the rows its entries carry: packed entries of many shards do not make one slice touch thousands of shards', () => {
    const log = open();
    const entries = Array.from({ length: 30 }, (_, pack) =>
      packedEntry(Array.from({ length: 200 }, (_, row) => ({ shardId: 1 + pack * 200 + row, component: component('eu', 1n, 1n, 1n) }))),
    );
    log.append(entries, epoch, 1_000);
    const round = log.beginFold();
    // 1,000 rows a slice: five entries of 200, not 30 entries' 6,000 shards.
    expect(log.foldRead(round, log.lastLsn, 1_000, 2_000)).toBe(1_000);
    expect(round.touched.size).toBe(1_000);
    expect(round.lastLsn).toBe(5n);
    // A slice smaller than one entry still reads that entry whole.
    expect(log.foldRead(round, log.lastLsn, 10, 2_000)).toBe(200);
    expect(round.lastLsn).toBe(6n);
  });

  it('group commit logs a packed item of many advancing rows as entries of at most 64 rows, answered as one item', async () => {
    const { log, memory, hooks, committer } = primary();
    const rows = Array.from({ length: 150 }, (_, index) => ({ shardId: 1 + index, component: component('eu', 1n, 1n, BigInt(index)) }));
    const outcome = await committer.submit([[packedItem(rows)]], epoch);
    expect(outcome.results[0]).toMatchObject({ code: status.OK, applied: [true], changed: ['150'] });
    const logged = hooks.committedRows.flat();
    expect(logged.map((row) => [row.shardId, row.payload!.readUInt32BE(1)])).toEqual([
      [1, 64],
      [65, 64],
      [129, 22],
    ]);
    expect(held(memory, 150)).toEqual(Object.fromEntries(rows.map((row) => [`${row.shardId}/eu`, row.component.total])));
    const rebuilt = new NodeMemory();
    rebuildMemory(reopen(log), rebuilt, new DedupIndex(windowMs), 6_000, windowMs);
    expect(held(rebuilt, 150)).toEqual(held(memory, 150));
  });
});
