// The replication wire of the log (commit-wire.ts) against real SQLite files:
// random commits of every kind shipped from a primary's log to a follower's,
// as group commit hands them over and as catch-up reads them back (cut at
// random bounds), land as the same records and rows, byte for byte; a run of
// pieces damaged anywhere (a flipped byte, cut short, extended, miscounted)
// is refused INVALID_ARGUMENT and writes nothing.
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { EntryKind, ShardLog, decodeCommitWire, type LogEntry } from '../../../../src/node/log/index.ts';
import { ErrorCode, TallyError } from '../../../../src/wire/index.ts';
import { makeTempDir, removeTempDir } from '../../../helpers/temp-dir.ts';
import { dropEntry, plainEntry, randomDistinctEntry, windowConfigEntry } from '../../../helpers/log-entries.ts';
import { seededRandom } from '../../../helpers/seeded-random.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) removeTempDir(dir);
});

function openLog(): ShardLog {
  const dir = makeTempDir('commit-wire');
  dirs.push(dir);
  return ShardLog.open(dir);
}

/** One commit of mixed kinds from a seed: runs of plain increments (records) between keyed, fence and other-kind rows. */
function commitOf(seed: number, size: number): LogEntry[] {
  const random = seededRandom(seed);
  const entries: LogEntry[] = [];
  for (let index = 0; index < size; index++) {
    const roll = random();
    const shardId = 1 + Math.floor(random() * 30);
    if (roll < 0.6) entries.push(plainEntry(shardId, BigInt(Math.floor(random() * 2_000) - 1_000) || 1n));
    else if (roll < 0.62) entries.push(plainEntry(shardId, random() < 0.5 ? 2n ** 62n : -(2n ** 62n)));
    else if (roll < 0.8) entries.push(plainEntry(shardId, 5n, `key-${seed}-${index}`));
    else if (roll < 0.85) entries.push({ shardId, amount: 0n, idempotencyKey: Buffer.from(`fence-${seed}-${index}`), fenceShardCount: 3 });
    else if (roll < 0.9) entries.push(windowConfigEntry(100 + shardId, { bucketMs: 1_000, retentionMs: 60_000 }));
    else if (roll < 0.95) entries.push(randomDistinctEntry(200 + shardId, random));
    else if (roll < 0.97) entries.push(dropEntry(300 + shardId));
    else
      entries.push({
        shardId: 400 + shardId,
        amount: 1n,
        idempotencyKey: Buffer.alloc(0),
        fenceShardCount: 0,
        kind: EntryKind.memberFlip,
        member: BigInt(seed * 1_000 + index),
      });
  }
  return entries;
}

/** Every stored row and record of a log file, as SQLite holds them. */
function storedOf(log: ShardLog): { rows: unknown[]; records: unknown[] } {
  const db = new Database(log.file, { readonly: true });
  try {
    return {
      rows: db.prepare('SELECT * FROM log ORDER BY lsn').all(),
      records: db.prepare('SELECT * FROM records ORDER BY first_lsn').all(),
    };
  } finally {
    db.close();
  }
}

function refusal(run: () => unknown): TallyError {
  try {
    run();
  } catch (error) {
    return error as TallyError;
  }
  throw new Error('expected a refusal');
}

describe('commit wire', () => {
  it('commits shipped as group commit hands them over land byte for byte; catch-up reads cut anywhere land as the same entries', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ seed: fc.nat(1_000_000), size: fc.integer({ min: 1, max: 60 }) }), { minLength: 1, maxLength: 12 }),
        fc.integer({ min: 1, max: 80 }),
        fc.integer({ min: 100, max: 4_000 }),
        (commits, entriesMax, bytesMax) => {
          const primary = openLog();
          const follower = openLog();
          const caughtUp = openLog();
          let atMs = 1_000;
          for (const { seed, size } of commits) {
            const firstLsn = primary.lastLsn + 1n;
            primary.append(commitOf(seed, size), 3n, atMs++);
            const bytes = primary.takeCommitWire();
            follower.appendWire(decodeCommitWire(bytes, firstLsn, size));
          }
          // Verbatim: the same rows and records, checksums included.
          expect(storedOf(follower)).toEqual(storedOf(primary));
          expect(follower.lastLsn).toBe(primary.lastLsn);
          expect(follower.lastEpoch).toBe(primary.lastEpoch);
          // Catch-up from the log, in frames of any size: a record cut by a frame's bounds is split, never changed.
          for (let fromLsn = 1n, step = 0; fromLsn <= primary.lastLsn && step < 10_000; step++) {
            const read = primary.readWireFrom(fromLsn, entriesMax, bytesMax);
            expect(read.entryCount).toBeGreaterThan(0);
            caughtUp.appendWire(decodeCommitWire(read.bytes, fromLsn, read.entryCount));
            fromLsn = read.lastLsn + 1n;
          }
          expect(caughtUp.lastLsn).toBe(primary.lastLsn);
          expect(caughtUp.readFrom(1n, 10_000)).toEqual(primary.readFrom(1n, 10_000));
          for (const log of [primary, follower, caughtUp]) log.close();
        },
      ),
      { numRuns: 12 },
    );
  });

  it('a run damaged anywhere (byte flipped, cut short, extended, miscounted, misplaced) is refused INVALID_ARGUMENT and writes nothing', () => {
    const primary = openLog();
    primary.append(commitOf(7, 40), 2n, 5_000);
    const bytes = primary.takeCommitWire();
    const follower = openLog();
    const before = storedOf(follower);
    const mutation = fc.oneof(
      fc.record({ kind: fc.constant('flip' as const), at: fc.nat(bytes.length - 1), bit: fc.integer({ min: 0, max: 7 }) }),
      fc.record({ kind: fc.constant('cut' as const), length: fc.nat(bytes.length - 1) }),
      fc.record({ kind: fc.constant('extend' as const), extra: fc.uint8Array({ minLength: 1, maxLength: 80 }) }),
      fc.record({ kind: fc.constant('count' as const), delta: fc.integer({ min: -40, max: 40 }).filter((delta) => delta !== 0) }),
      fc.record({ kind: fc.constant('first' as const), delta: fc.integer({ min: -3, max: 3 }).filter((delta) => delta !== 0) }),
    );
    fc.assert(
      fc.property(mutation, (change) => {
        let damaged = Buffer.from(bytes);
        let entryCount = 40;
        let firstLsn = 1n;
        if (change.kind === 'flip') damaged[change.at] = damaged[change.at]! ^ (1 << change.bit);
        if (change.kind === 'cut') damaged = damaged.subarray(0, change.length);
        if (change.kind === 'extend') damaged = Buffer.concat([damaged, change.extra]);
        if (change.kind === 'count') entryCount += change.delta;
        if (change.kind === 'first') firstLsn += BigInt(change.delta);
        const error = refusal(() => follower.appendWire(decodeCommitWire(damaged, firstLsn, entryCount)));
        expect(error).toBeInstanceOf(TallyError);
        expect(error.code).toBe(ErrorCode.invalidArgument);
        expect(error.message).toMatch(/replicated records/);
        expect(follower.lastLsn).toBe(0n);
      }),
      { numRuns: 400 },
    );
    expect(storedOf(follower)).toEqual(before);
    // The undamaged run still lands whole.
    follower.appendWire(decodeCommitWire(bytes, 1n, 40));
    expect(storedOf(follower)).toEqual(storedOf(primary));
  });
});
