// Unit tests for ShardLog against real SQLite files in a temp dir: round
// trips at int64 extremes, lsn continuity across reopen, refusal of damaged
// logs, and the durability pragmas.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import { ShardLog, ShardLogError, type LogEntry } from '../../../../src/node/log/index.ts';
import { INT64_MAX, INT64_MIN, ErrorCode, TallyError } from '../../../../src/wire/index.ts';
import { replayBatchRows } from '../../../../src/common/index.ts';
import { makeTempDir, removeTempDir } from '../../../helpers/temp-dir.ts';

function entry(shardId: number, amount: bigint, key = ''): LogEntry {
  return { shardId, amount, idempotencyKey: Buffer.from(key), fenceShardCount: 0 };
}

function fenceEntry(shardId: number, key: string, fenceShardCount: number): LogEntry {
  return { shardId, amount: 0n, idempotencyKey: Buffer.from(key), fenceShardCount };
}

const epoch = 1n;

function replayAll(log: ShardLog): { lsn: bigint; shardId: number; amount: bigint }[] {
  const rows: { lsn: bigint; shardId: number; amount: bigint }[] = [];
  log.replay(({ lsn, shardId, amount }) => rows.push({ lsn, shardId, amount }));
  return rows;
}

describe('shard log', () => {
  let dataDir: string;
  let logFile: string;
  const opened: ShardLog[] = [];
  const open = (): ShardLog => {
    const log = ShardLog.open(dataDir);
    opened.push(log);
    return log;
  };
  /** A second, independent connection to the same file. */
  const withRawDb = <T>(use: (db: Database.Database) => T): T => {
    const db = new Database(logFile);
    try {
      return use(db);
    } finally {
      db.close();
    }
  };

  beforeEach(() => {
    dataDir = makeTempDir('shard-log');
    logFile = path.join(dataDir, 'node.sqlite');
  });
  afterEach(() => {
    for (const log of opened.splice(0)) log.close();
    removeTempDir(dataDir);
  });

  it('its data directory is 0700 and its files 0600 (the log, the WAL and its index), also for a directory that was 0755', () => {
    const nested = path.join(dataDir, 'node-a');
    fs.mkdirSync(nested, { mode: 0o755 });
    fs.chmodSync(nested, 0o755);
    const log = ShardLog.open(nested);
    opened.push(log);
    log.append([entry(1, 1n)], epoch, 0);
    expect(fs.statSync(nested).mode & 0o777).toBe(0o700);
    const files = fs.readdirSync(nested);
    expect(files).toEqual(expect.arrayContaining(['node.sqlite', 'node.sqlite-wal', 'node.sqlite-shm']));
    for (const file of files) expect(fs.statSync(path.join(nested, file)).mode & 0o777, file).toBe(0o600);
  });

  it('checkpoint totals and a view’s reads of more shards than SQLite binds in one statement (32,766) come back whole', async () => {
    const log = open();
    const shardCount = 40_000;
    const ids = Array.from({ length: shardCount }, (_, index) => index + 1);
    log.append(
      ids.map((shardId) => entry(shardId, BigInt(shardId))),
      epoch,
      1_000,
    );
    while (log.foldSlice(log.lastLsn, 5_000, 0, 2_000) > 0);
    // One more entry per shard, left in the log: a view replays it for the shards asked.
    log.append(
      ids.map((shardId) => entry(shardId, 1n)),
      epoch,
      3_000,
    );
    const totals = log.checkpointTotals(ids);
    expect(totals.size).toBe(shardCount);
    expect(totals.get(shardCount)).toBe(BigInt(shardCount));
    const view = log.openView();
    try {
      expect(view.checkpointTotals(ids).size).toBe(shardCount);
      const replayed = new Map<number, bigint>();
      await view.replaySliced((_lsn, shardId, amount) => replayed.set(shardId, (replayed.get(shardId) ?? 0n) + amount), view.lastLsn, ids);
      expect(replayed.size).toBe(shardCount);
      expect([...replayed.values()].every((amount) => amount === 1n)).toBe(true);
    } finally {
      view.close();
    }
  });

  it('a new log is empty: lastLsn 0 and replay yields nothing', () => {
    const log = open();
    expect(log.lastLsn).toBe(0n);
    expect(replayAll(log)).toEqual([]);
    expect(log.replay(() => {})).toBe(0n);
  });

  it('entries replay in order with consecutive lsns and exact bigint amounts at the int64 extremes', () => {
    const log = open();
    const amounts = [INT64_MAX, INT64_MIN, -1n, 1n, INT64_MAX - 1n, INT64_MIN + 1n, 2n ** 53n + 1n];
    expect(log.append([entry(1, amounts[0]!), entry(2, amounts[1]!)], epoch, 1_000)).toBe(2n);
    expect(log.append([entry(Number.MAX_SAFE_INTEGER, amounts[2]!)], epoch, 1_001)).toBe(3n);
    expect(
      log.append(
        amounts.slice(3).map((amount, index) => entry(10 + index, amount)),
        epoch,
        1_002,
      ),
    ).toBe(7n);
    const expected = [
      { lsn: 1n, shardId: 1, amount: INT64_MAX },
      { lsn: 2n, shardId: 2, amount: INT64_MIN },
      { lsn: 3n, shardId: Number.MAX_SAFE_INTEGER, amount: -1n },
      { lsn: 4n, shardId: 10, amount: 1n },
      { lsn: 5n, shardId: 11, amount: INT64_MAX - 1n },
      { lsn: 6n, shardId: 12, amount: INT64_MIN + 1n },
      { lsn: 7n, shardId: 13, amount: 2n ** 53n + 1n },
    ];
    expect(replayAll(log)).toEqual(expected);
    log.close();
    expect(replayAll(open())).toEqual(expected);
  });

  it('lastLsn survives reopen and appends continue after it', () => {
    const first = open();
    first.append([entry(1, 5n), entry(1, 6n), entry(2, 7n)], epoch, 0);
    first.close();
    const second = open();
    expect(second.lastLsn).toBe(3n);
    expect(second.append([entry(3, 8n)], epoch, 0)).toBe(4n);
    second.close();
    const third = open();
    expect(third.lastLsn).toBe(4n);
    expect(replayAll(third).map((row) => row.lsn)).toEqual([1n, 2n, 3n, 4n]);
  });

  it('replay reads a log larger than one replay batch completely and in order', () => {
    const log = open();
    const rowCount = 2 * replayBatchRows + 7;
    const entries = Array.from({ length: rowCount }, (_, index) => entry((index % 5) + 1, BigInt(index + 1)));
    log.append(entries, epoch, 0);
    let count = 0;
    let sum = 0n;
    let previousLsn = 0n;
    let outOfOrder = 0;
    const lastLsn = log.replay(({ lsn, amount }) => {
      if (lsn !== previousLsn + 1n) outOfOrder++;
      previousLsn = lsn;
      count++;
      sum += amount;
    });
    expect(lastLsn).toBe(BigInt(rowCount));
    expect(outOfOrder).toBe(0);
    expect(count).toBe(rowCount);
    expect(sum).toBe((BigInt(rowCount) * BigInt(rowCount + 1)) / 2n);
  });

  it('stores the idempotency key, and no key as NULL, with the commit time', () => {
    const log = open();
    log.append([entry(1, 1n, 'retry-1'), entry(1, 2n)], epoch, 123_456);
    const rows = withRawDb((db) => db.prepare('SELECT lsn, idem_key, at_ms FROM log ORDER BY lsn').all()) as {
      lsn: number;
      idem_key: Buffer | null;
      at_ms: number;
    }[];
    expect(rows).toEqual([
      { lsn: 1, idem_key: Buffer.from('retry-1'), at_ms: 123_456 },
      { lsn: 2, idem_key: null, at_ms: 123_456 },
    ]);
  });

  // One commit each: a run of one plain entry stays a row (several become a record: commit-records.test.ts damages those).
  it('replay throws ShardLogError when a middle row is missing', () => {
    const log = open();
    for (const one of [entry(1, 1n), entry(1, 2n), entry(1, 3n), entry(1, 4n)]) log.append([one], epoch, 0);
    log.close();
    withRawDb((db) => db.prepare('DELETE FROM log WHERE lsn = 2').run());
    const reopened = open();
    expect(reopened.lastLsn).toBe(4n);
    const seen: bigint[] = [];
    expect(() => reopened.replay(({ lsn }) => seen.push(lsn))).toThrow(ShardLogError);
    expect(() => reopened.replay(() => {})).toThrow(/gap/);
    // Entries before the hole may have been passed on; none after it.
    expect(seen.every((lsn) => lsn < 2n)).toBe(true);
  });

  it('replay throws ShardLogError when the first row is missing', () => {
    const log = open();
    for (const one of [entry(1, 1n), entry(1, 2n)]) log.append([one], epoch, 0);
    withRawDb((db) => db.prepare('DELETE FROM log WHERE lsn = 1').run());
    expect(() => log.replay(() => {})).toThrow(ShardLogError);
  });

  it('replay throws ShardLogError when the last committed row vanished under an open log', () => {
    const log = open();
    for (const one of [entry(1, 1n), entry(1, 2n)]) log.append([one], epoch, 0);
    withRawDb((db) => db.prepare('DELETE FROM log WHERE lsn = 2').run());
    expect(() => log.replay(() => {})).toThrow(ShardLogError);
  });

  it('replay throws ShardLogError on a row with amount 0 outside a fence, a fence with an amount, or a non-positive shard id', () => {
    const log = open();
    log.append([entry(1, 1n), entry(1, 2n, 'k')], epoch, 0);
    const corruptions = [
      'UPDATE log SET amount = 0 WHERE lsn = 2',
      'UPDATE log SET amount = 2, fence_shard_count = 3 WHERE lsn = 2',
      'UPDATE log SET amount = 0, fence_shard_count = 3, idem_key = NULL WHERE lsn = 2',
      'UPDATE log SET amount = 2, fence_shard_count = NULL, idem_key = NULL, shard_id = 0 WHERE lsn = 2',
      // Kinds beyond increments: each must carry exactly what it needs.
      'UPDATE log SET shard_id = 1, kind = 9 WHERE lsn = 2',
      'UPDATE log SET kind = 1, amount = 1, member = NULL WHERE lsn = 2',
      'UPDATE log SET kind = 1, amount = 2, member = 5 WHERE lsn = 2',
      "UPDATE log SET kind = 2, amount = 0, member = NULL, payload = x'0102' WHERE lsn = 2",
      "UPDATE log SET kind = 3, amount = 0, payload = x'00' WHERE lsn = 2",
      "UPDATE log SET kind = NULL, amount = 4, payload = x'000102' WHERE lsn = 2",
      // Payloads are decoded in full: applying a row read back can never fail.
      "UPDATE log SET kind = 3, amount = 0, payload = x'00000000000000050000000000000007' WHERE lsn = 2",
      "UPDATE log SET kind = 2, amount = 0, payload = x'FFFF05' WHERE lsn = 2",
      "UPDATE log SET kind = 2, amount = 0, payload = x'000140' WHERE lsn = 2",
    ];
    for (const corruption of corruptions) {
      withRawDb((db) => db.prepare(corruption).run());
      expect(() => log.replay(() => {}), corruption).toThrow(ShardLogError);
    }
  });

  it('opening a file that is not a database throws ShardLogError', () => {
    fs.writeFileSync(logFile, Buffer.alloc(8_192, 0x5a));
    expect(() => ShardLog.open(dataDir)).toThrow(ShardLogError);
  });

  it('a version-3 log (before entry kinds) is upgraded in place and keeps every entry', () => {
    const db = new Database(logFile);
    db.exec(`
      CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
      CREATE TABLE log (lsn INTEGER PRIMARY KEY, epoch INTEGER NOT NULL, shard_id INTEGER NOT NULL, amount INTEGER NOT NULL, idem_key BLOB, fence_shard_count INTEGER, at_ms INTEGER NOT NULL);
      CREATE TABLE checkpoint (shard_id INTEGER PRIMARY KEY, total INTEGER NOT NULL);
      INSERT INTO meta VALUES ('schema_version', '3');
      INSERT INTO log VALUES (1, 1, 7, 5, NULL, NULL, 100), (2, 1, 7, -2, NULL, NULL, 200);
    `);
    db.close();
    const log = ShardLog.open(dataDir);
    expect(replayAll(log)).toEqual([
      { lsn: 1n, shardId: 7, amount: 5n },
      { lsn: 2n, shardId: 7, amount: -2n },
    ]);
    expect(
      log.append(
        [{ shardId: 7, amount: 1n, idempotencyKey: Buffer.alloc(0), fenceShardCount: 0, kind: 1, member: 2n ** 64n - 1n }],
        1n,
        300,
      ),
    ).toBe(3n);
    expect(log.readFrom(3n, 1)[0]!.member).toBe(2n ** 64n - 1n);
    expect(log.getMeta('schema_version')).toBe('9');
    log.close();
  });

  /** A log as version 4 wrote it: folded keyed rows kept for the window, a fence, an unkeyed tail. */
  const writeVersion4 = (db: Database.Database): void => {
    db.exec(`
      CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
      CREATE TABLE log (lsn INTEGER PRIMARY KEY, epoch INTEGER NOT NULL, shard_id INTEGER NOT NULL, amount INTEGER NOT NULL, idem_key BLOB, fence_shard_count INTEGER, at_ms INTEGER NOT NULL, kind INTEGER, member INTEGER, payload BLOB);
      CREATE TABLE checkpoint (shard_id INTEGER PRIMARY KEY, total INTEGER NOT NULL);
      CREATE TABLE checkpoint_parts (shard_id INTEGER NOT NULL, part TEXT NOT NULL, data BLOB NOT NULL, PRIMARY KEY (shard_id, part));
      INSERT INTO meta VALUES ('schema_version', '4'), ('checkpoint_lsn', '3'), ('checkpoint_epoch', '1');
      INSERT INTO checkpoint VALUES (7, 12);
      INSERT INTO log VALUES
        (1, 1, 7, 5, X'6b2d31', NULL, 100, NULL, NULL, NULL),
        (2, 1, 7, 0, X'6b2d32', 4, 150, NULL, NULL, NULL),
        (4, 1, 7, 1, NULL, NULL, 300, NULL, NULL, NULL),
        (5, 1, 7, 3, X'6b2d32', NULL, 400, NULL, NULL, NULL);
    `);
  };

  it('a version-4 log is upgraded to 5 in place: its kept keys are indexed and found, its entries replay', () => {
    const db = new Database(logFile);
    db.pragma('journal_mode = WAL');
    writeVersion4(db);
    db.close();
    const log = open();
    expect(log.getMeta('schema_version')).toBe('9');
    expect(log.checkpointLsn).toBe(3n);
    expect(replayAll(log)).toEqual([
      { lsn: 4n, shardId: 7, amount: 1n },
      { lsn: 5n, shardId: 7, amount: 3n },
    ]);
    // Folded into the checkpoint, kept for the window: found on disk.
    expect(log.findKey(7, Buffer.from('k-1'), 0)).toEqual({ lsn: 1n, atMs: 100, fenceShardCount: 0 });
    // Fenced at 4 (lsn 2), then applied (lsn 5): the newest row is the state.
    expect(log.findKey(7, Buffer.from('k-2'), 0)).toEqual({ lsn: 5n, atMs: 400, fenceShardCount: 0 });
    expect(log.findKey(7, Buffer.from('k-2'), 401)).toBeUndefined();
    const index = withRawDb((db) => db.prepare("SELECT sql FROM sqlite_master WHERE type = 'index' AND name = 'log_keys'").get()) as {
      sql: string;
    };
    expect(index.sql).toMatch(/ON log \(shard_id, idem_key\) WHERE idem_key IS NOT NULL/);
  });

  it('an upgrade that fails changes nothing: the file stays at its old version, without half the new schema', () => {
    const db = new Database(logFile);
    db.exec(`
      CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
      CREATE TABLE log (lsn INTEGER PRIMARY KEY, epoch INTEGER NOT NULL, shard_id INTEGER NOT NULL, amount INTEGER NOT NULL, idem_key BLOB, fence_shard_count INTEGER, at_ms INTEGER NOT NULL);
      INSERT INTO meta VALUES ('schema_version', '3');
      -- Takes the index's name: the upgrade's last step fails.
      CREATE TABLE log_keys (x INTEGER);
    `);
    db.close();
    expect(() => ShardLog.open(dataDir)).toThrow(ShardLogError);
    withRawDb((raw) => {
      expect(raw.prepare("SELECT value FROM meta WHERE key = 'schema_version'").get()).toEqual({ value: '3' });
      const columns = (raw.prepare("SELECT name FROM pragma_table_info('log')").all() as { name: string }[]).map((column) => column.name);
      expect(columns).not.toContain('kind');
    });
  });

  it('a key lookup is a search of the key index, not a scan of the log', () => {
    open().close();
    const plan = withRawDb((db) =>
      db
        .prepare(
          'EXPLAIN QUERY PLAN SELECT lsn, at_ms, fence_shard_count FROM log WHERE shard_id = ? AND idem_key = ? AND at_ms >= ? ORDER BY lsn DESC LIMIT 1',
        )
        .all(1, Buffer.from('k'), 0),
    ) as { detail: string }[];
    expect(plan.map((step) => step.detail)).toEqual(['SEARCH log USING INDEX log_keys (shard_id=? AND idem_key=?)']);
  });

  it('findKey finds the newest row of a key per shard within the window, through folds, until pruned', () => {
    const log = open();
    log.append([fenceEntry(1, 'k', 2), entry(2, 1n, 'k'), entry(1, 9n)], epoch, 1_000);
    log.append([fenceEntry(1, 'k', 5)], epoch, 2_000);
    expect(log.findKey(1, Buffer.from('k'), 0)).toEqual({ lsn: 4n, atMs: 2_000, fenceShardCount: 5 });
    expect(log.findKey(2, Buffer.from('k'), 0)).toEqual({ lsn: 2n, atMs: 1_000, fenceShardCount: 0 });
    // A newest row older than sinceMs: the key is past its window.
    expect(log.findKey(2, Buffer.from('k'), 1_001)).toBeUndefined();
    expect(log.findKey(3, Buffer.from('k'), 0)).toBeUndefined();
    expect(log.findKey(1, Buffer.from('other'), 0)).toBeUndefined();
    // The checkpoint folds every row but keeps the keyed ones younger than 1,500.
    expect(log.foldSlice(4n, 100, 1_500)).toBe(4);
    expect(log.findKey(1, Buffer.from('k'), 0)?.lsn).toBe(4n);
    expect(log.findKey(2, Buffer.from('k'), 0)).toBeUndefined();
    expect(log.pruneFoldedKeys(2_001, 100)).toBe(1);
    expect(log.findKey(1, Buffer.from('k'), 0)).toBeUndefined();
  });

  it('replayKeys reads only the newest rowsMax keyed rows of the window and says when the older ones were left out', () => {
    const log = open();
    for (let n = 0; n < 10; n++) log.append([entry(1, 1n, `k${n}`), entry(1, 1n)], epoch, 100 * n);
    const replayed: bigint[] = [];
    expect(log.replayKeys(0, 4, (lsn) => replayed.push(lsn))).toBe(500);
    expect(replayed).toEqual([13n, 15n, 17n, 19n]);
    replayed.length = 0;
    expect(log.replayKeys(650, 4, (lsn) => replayed.push(lsn))).toBeUndefined();
    expect(replayed).toEqual([15n, 17n, 19n]);
    replayed.length = 0;
    expect(log.replayKeys(0, 0, (lsn) => replayed.push(lsn))).toBe(900);
    expect(replayed).toEqual([]);
  });

  it('an append that finds the disk full fails RESOURCE_EXHAUSTED, writes nothing, and the log goes on once there is room', () => {
    const log = open();
    log.append([entry(1, 1n, 'before')], epoch, 0);
    // SQLite never caps below the current size: the file may not grow by a page.
    expect(log.setPageCountMax(1)).toBe(log.sizeBytes() / 4_096);
    const bigKeys = Array.from({ length: 500 }, (_, index) => entry(1, 1n, `full-${index}-${'x'.repeat(100)}`));
    const failure = (() => {
      try {
        log.append(bigKeys, epoch, 1);
      } catch (error) {
        return error;
      }
      return undefined;
    })();
    expect(failure).toBeInstanceOf(TallyError);
    expect((failure as TallyError).code).toBe(ErrorCode.resourceExhausted);
    expect((failure as TallyError).message).toMatch(/^node data directory is full: nothing was written \(SQLITE_FULL\)$/);
    expect(log.lastLsn).toBe(1n);
    expect(log.findKey(1, Buffer.from(`full-0-${'x'.repeat(100)}`), 0)).toBeUndefined();
    // Replicated entries meet the same refusal.
    expect(() => log.appendReplicated(bigKeys.map((bigKey, index) => ({ ...bigKey, lsn: 2n + BigInt(index), epoch, atMs: 1 })))).toThrow(
      /^node data directory is full: /,
    );
    expect(log.lastLsn).toBe(1n);
    log.setPageCountMax(1_000_000);
    expect(log.append(bigKeys, epoch, 2)).toBe(501n);
    log.close();
    expect(replayAll(open())).toHaveLength(501);
  });

  it('a checkpoint fold or a role write that finds the disk full fails RESOURCE_EXHAUSTED and leaves the checkpoint and meta as they were', () => {
    const log = ShardLog.open(dataDir, undefined, 'node n1');
    opened.push(log);
    // Many shards: the fold's checkpoint rows need pages the log does not have yet.
    const entries = Array.from({ length: 2_000 }, (_, index) => entry(index + 1, BigInt(index + 1)));
    log.append(entries, epoch, 0);
    const before = replayAll(log);
    log.setPageCountMax(1);
    const refusal = (() => {
      try {
        log.foldSlice(log.lastLsn, 5_000, 0);
      } catch (error) {
        return error;
      }
      return undefined;
    })();
    expect(refusal).toMatchObject({
      code: ErrorCode.resourceExhausted,
      message: expect.stringMatching(/^node n1 data directory is full: /),
    });
    expect(log.checkpointLsn).toBe(0n);
    expect(log.checkpointTotals().size).toBe(0);
    expect(replayAll(log)).toEqual(before);
    // A meta write (the role a node resumes) meets the same refusal; a big value needs new pages.
    expect(() => log.setMeta('role', 'x'.repeat(100_000))).toThrow(/^node n1 data directory is full: /);
    expect(log.getMeta('role')).toBeUndefined();
    // Once there is room the next fold (the checkpointer's next tick) folds everything.
    log.setPageCountMax(1_000_000);
    expect(log.foldSlice(log.lastLsn, 5_000, 0)).toBe(2_000);
    expect(log.checkpointLsn).toBe(2_000n);
    expect(log.checkpointTotals().get(2_000)).toBe(2_000n);
  });

  it('opening a log with another schema version throws ShardLogError', () => {
    open().close();
    withRawDb((db) => db.prepare("UPDATE meta SET value = '999' WHERE key = 'schema_version'").run());
    expect(() => ShardLog.open(dataDir)).toThrow(/schema version 999/);
    expect(() => ShardLog.open(dataDir)).toThrow(ShardLogError);
  });

  it('append refuses an empty batch, amount 0 outside a key fence, malformed fences, amounts beyond int64 and bad shard ids, writing nothing', () => {
    const log = open();
    log.append([entry(1, 1n)], epoch, 0);
    expect(() => log.append([], epoch, 0)).toThrow(/no entries/);
    expect(() => log.append([entry(1, 2n), entry(1, 0n)], epoch, 0)).toThrow(/key fence/);
    expect(() => log.append([entry(1, 0n, 'key-but-no-fence')], epoch, 0)).toThrow(/key fence/);
    expect(() => log.append([{ ...fenceEntry(1, 'k', 2), amount: 1n }], epoch, 0)).toThrow(/key fence/);
    expect(() => log.append([fenceEntry(1, '', 2)], epoch, 0)).toThrow(/key fence/);
    expect(() => log.append([entry(1, INT64_MAX + 1n)], epoch, 0)).toThrow(/out of range/);
    expect(() => log.append([entry(1, INT64_MIN - 1n)], epoch, 0)).toThrow(/out of range/);
    expect(() => log.append([entry(0, 1n)], epoch, 0)).toThrow(/shard id/);
    expect(() => log.append([entry(1.5, 1n)], epoch, 0)).toThrow(/shard id/);
    expect(log.lastLsn).toBe(1n);
    expect(replayAll(log)).toEqual([{ lsn: 1n, shardId: 1, amount: 1n }]);
  });

  it('readFrom returns stored entries with their epoch, key, fence and commit time', () => {
    const log = open();
    log.append([entry(1, 5n, 'k1'), fenceEntry(2, 'k2', 4)], 7n, 1_000);
    log.append([entry(3, -1n)], 8n, 2_000);
    expect(log.readFrom(2n, 10)).toEqual([
      { lsn: 2n, epoch: 7n, shardId: 2, amount: 0n, idempotencyKey: Buffer.from('k2'), fenceShardCount: 4, atMs: 1_000 },
      { lsn: 3n, epoch: 8n, shardId: 3, amount: -1n, idempotencyKey: Buffer.alloc(0), fenceShardCount: 0, atMs: 2_000 },
    ]);
    expect(log.readFrom(1n, 1)).toHaveLength(1);
    expect(log.readFrom(4n, 10)).toEqual([]);
  });

  it('replay passes keys, commit times and fence shard counts, and treats a fence as amount 0', () => {
    const log = open();
    log.append([entry(1, 5n, 'k1'), fenceEntry(1, 'k2', 4), entry(1, 2n)], epoch, 1_234);
    const seen: unknown[] = [];
    log.replay(({ lsn, shardId, amount, idempotencyKey, atMs, fenceShardCount }) =>
      seen.push({ lsn, shardId, amount, key: idempotencyKey.length > 0 ? idempotencyKey.toString() : null, atMs, fenceShardCount }),
    );
    expect(seen).toEqual([
      { lsn: 1n, shardId: 1, amount: 5n, key: 'k1', atMs: 1_234, fenceShardCount: 0 },
      { lsn: 2n, shardId: 1, amount: 0n, key: 'k2', atMs: 1_234, fenceShardCount: 4 },
      { lsn: 3n, shardId: 1, amount: 2n, key: null, atMs: 1_234, fenceShardCount: 0 },
    ]);
  });

  it('replay up to an lsn stops there', () => {
    const log = open();
    log.append([entry(1, 1n), entry(1, 2n), entry(1, 3n)], epoch, 0);
    const lsns: bigint[] = [];
    expect(log.replay(({ lsn }) => lsns.push(lsn), 2n)).toBe(2n);
    expect(lsns).toEqual([1n, 2n]);
    expect(log.replay(() => {}, 99n)).toBe(3n);
  });

  it('the last epoch and each entry epoch survive reopen', () => {
    const first = open();
    expect(first.lastEpoch).toBe(0n);
    first.append([entry(1, 1n)], 2n, 0);
    first.append([entry(1, 1n)], 5n, 0);
    expect(first.lastEpoch).toBe(5n);
    first.close();
    const second = open();
    expect(second.lastEpoch).toBe(5n);
    expect([second.epochAt(1n), second.epochAt(2n), second.epochAt(3n)]).toEqual([2n, 5n, undefined]);
  });

  it('truncateAfter drops the tail, and the next append reuses its lsns', () => {
    const log = open();
    log.append([entry(1, 1n), entry(1, 2n)], 1n, 0);
    log.append([entry(1, 40n), entry(1, 50n)], 2n, 0);
    expect(log.truncateAfter(2n)).toBe(2);
    expect(log.lastLsn).toBe(2n);
    expect(log.lastEpoch).toBe(1n);
    expect(log.append([entry(1, 3n)], 3n, 0)).toBe(3n);
    expect(replayAll(log).map((row) => row.amount)).toEqual([1n, 2n, 3n]);
    log.close();
    expect(open().lastLsn).toBe(3n);
  });

  it("appendReplicated copies a primary's entries exactly, lsn, epoch and time included", () => {
    const primaryDir = makeTempDir('shard-log-primary');
    try {
      const primary = ShardLog.open(primaryDir);
      primary.append([entry(1, 5n, 'k'), fenceEntry(2, 'f', 3)], 4n, 1_000);
      primary.append([entry(2, -7n)], 6n, 2_000);
      const shipped = primary.readFrom(1n, 100);
      primary.close();
      const follower = open();
      expect(follower.appendReplicated(shipped.slice(0, 1))).toBe(1n);
      expect(follower.appendReplicated(shipped.slice(1))).toBe(3n);
      expect(follower.lastEpoch).toBe(6n);
      expect(follower.readFrom(1n, 100)).toEqual(shipped);
    } finally {
      removeTempDir(primaryDir);
    }
  });

  it('appendReplicated refuses entries that do not continue the log, writing none of them', () => {
    const log = open();
    log.append([entry(1, 1n)], epoch, 0);
    const stored = (lsn: bigint): ReturnType<ShardLog['readFrom']>[number] => ({ ...entry(1, 1n), lsn, epoch, atMs: 0 });
    expect(() => log.appendReplicated([stored(3n)])).toThrow(/continue/);
    expect(() => log.appendReplicated([stored(2n), stored(4n)])).toThrow(/continue/);
    expect(() => log.appendReplicated([stored(1n)])).toThrow();
    expect(log.lastLsn).toBe(1n);
    expect(replayAll(log)).toHaveLength(1);
  });

  it('checkpoint totals and a view narrowed to some shards are the whole answer filtered to them', async () => {
    const log = open();
    log.append([entry(1, 1n), entry(2, 20n), entry(3, 300n), entry(1, 4n)], epoch, 0);
    while (log.foldSlice(3n, 2, 0) > 0);
    log.append([entry(2, 5n), entry(3, 6n), entry(1, 7n)], epoch, 0);
    const only = <T>(all: Map<number, T>, shardIds: number[]) => new Map([...all].filter(([shardId]) => shardIds.includes(shardId)));
    for (const shardIds of [[1], [3, 1], [2, 9], []])
      expect(log.checkpointTotals(shardIds)).toEqual(only(log.checkpointTotals(), shardIds));
    const view = log.openView();
    try {
      expect(view.checkpointTotals()).toEqual(log.checkpointTotals());
      const slice = async (shardIds?: number[]) => {
        const entries: [bigint, number, bigint][] = [];
        await view.replaySliced((lsn, shardId, amount) => entries.push([lsn, shardId, amount]), view.lastLsn, shardIds);
        return entries;
      };
      const all = await slice();
      expect(all).toEqual([
        [4n, 1, 4n],
        [5n, 2, 5n],
        [6n, 3, 6n],
        [7n, 1, 7n],
      ]);
      for (const shardIds of [[1], [3, 2], [9], []]) {
        expect(view.checkpointTotals(shardIds)).toEqual(only(view.checkpointTotals(), shardIds));
        expect(await slice(shardIds)).toEqual(all.filter(([, shardId]) => shardIds.includes(shardId)));
      }
    } finally {
      view.close();
    }
  });

  it('meta values are stored, replaced and survive reopen', () => {
    const log = open();
    expect(log.getMeta('role')).toBeUndefined();
    log.setMeta('role', 'a');
    log.setMeta('role', 'b');
    log.close();
    expect(open().getMeta('role')).toBe('b');
  });

  it('the file is in WAL journal mode, seen from a second connection', () => {
    open();
    expect(withRawDb((db) => db.pragma('journal_mode', { simple: true }))).toBe('wal');
  });

  it('its own connection commits with synchronous = FULL (2)', () => {
    // synchronous is per connection, so a second connection cannot see it; this
    // reads the log's private handle, and must follow it if the field is renamed.
    const log = open();
    const db = (log as unknown as { db: Database.Database }).db;
    expect(db).toBeInstanceOf(Database);
    expect(db.pragma('synchronous', { simple: true })).toBe(2);
  });
});
