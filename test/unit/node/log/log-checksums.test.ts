// Checksums on what the log stores (G8): a value that moved on the disk (an
// amount, a record's packed entries, a checkpoint block's totals) passes
// SQLite's quick_check and the entry's own shape check, and must still be
// refused when it is read; a schema-8 file (test/fixtures/log-v8, made by the
// code before checksums) is upgraded in place with every checksum filled in.
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { ShardLog, ShardLogError, type StoredEntry } from '../../../../src/node/log/index.ts';
import { logProblem } from '../../../../src/node/log/check/log-check.ts';
import { checkpointFolder } from '../../../../src/node/state/node-memory.ts';
import { plainEntry, windowConfigEntry } from '../../../helpers/log-entries.ts';
import { makeTempDir, removeTempDir } from '../../../helpers/temp-dir.ts';
import { useTempLogs } from '../../../helpers/temp-log.ts';

const fixtureDir = path.join(import.meta.dirname, '..', '..', '..', 'fixtures', 'log-v8');

function withRawDb<T>(file: string, use: (db: Database.Database) => T): T {
  const db = new Database(file);
  try {
    return use(db);
  } finally {
    db.close();
  }
}

function replayAll(log: ShardLog): StoredEntry[] {
  const entries: StoredEntry[] = [];
  log.replay((entry) => entries.push(entry));
  return entries;
}

describe('log checksums', () => {
  const { open, reopen } = useTempLogs('log-checksums');

  /** A log with keyed rows, a record and a folded checkpoint, closed: its file is the disk to damage. */
  function writtenLog(): { dir: string; file: string } {
    const log = open();
    // A window setting folds into a checkpoint part.
    log.append([windowConfigEntry(1, { bucketMs: 1_000, retentionMs: 60_000 })], 1n, 900);
    log.append([plainEntry(1, 5n, 'k1'), plainEntry(2, 7n, 'k2')], 1n, 1_000);
    log.append([plainEntry(3, 11n), plainEntry(4, 13n), plainEntry(3, 17n)], 1n, 1_100);
    log.append([plainEntry(5, 19n), plainEntry(6, 23n)], 1n, 1_200);
    // The first commit folded into checkpoint blocks; the rest stays rows and records.
    while (log.foldSlice(3n, 500, 0, 2_000) > 0);
    log.append([plainEntry(7, 29n, 'k7'), plainEntry(8, 31n), plainEntry(9, 37n)], 1n, 1_300);
    const file = log.file;
    reopen(log).close();
    return { dir: path.dirname(file), file };
  }

  it('every row, record and block is written with its checksum and reads back whole', () => {
    const { file, dir } = writtenLog();
    withRawDb(file, (db) => {
      for (const table of ['log', 'records', 'checkpoint_blocks', 'checkpoint_parts']) {
        expect(db.prepare(`SELECT count(*) FROM ${table}`).pluck().get(), table).toBeGreaterThan(0);
        expect(db.prepare(`SELECT count(*) FROM ${table} WHERE crc IS NULL`).pluck().get(), table).toBe(0);
      }
    });
    const log = ShardLog.open(dir, checkpointFolder);
    try {
      expect(replayAll(log).map((entry) => entry.amount)).toEqual([11n, 13n, 17n, 19n, 23n, 29n, 31n, 37n]);
      expect(log.checkpointTotals()).toEqual(
        new Map([
          [1, 5n],
          [2, 7n],
        ]),
      );
    } finally {
      log.close();
    }
  });

  const damages: [name: string, sql: string, read: (log: ShardLog) => unknown][] = [
    [
      'an amount in a keyed row moved (3 more)',
      'UPDATE log SET amount = amount + 3 WHERE idem_key IS NOT NULL AND shard_id = 7',
      replayAll,
    ],
    ['a shard id in a row moved', 'UPDATE log SET shard_id = 99 WHERE shard_id = 7', replayAll],
    ['a key in a row changed', "UPDATE log SET idem_key = x'6b38' WHERE shard_id = 7", replayAll],
    ["a record's packed amount changed (still a valid varint)", "UPDATE records SET data = x'06160216' WHERE first_lsn = 7", replayAll],
    ["a record's commit time moved", 'UPDATE records SET at_ms = at_ms + 1 WHERE first_lsn = 7', replayAll],
    ["a checkpoint block's totals changed", "UPDATE checkpoint_blocks SET data = x'0214020e'", (log) => log.checkpointTotals()],
    [
      "a checkpoint part's bytes changed (a window setting)",
      'UPDATE checkpoint_parts SET data = zeroblob(length(data))',
      (log) => log.checkpointParts(),
    ],
    ['a checksum removed', 'UPDATE log SET crc = NULL WHERE shard_id = 7', replayAll],
  ];
  for (const [name, sql, read] of damages) {
    it(`${name} passes quick_check but is refused when read (ShardLogError)`, () => {
      const { file, dir } = writtenLog();
      withRawDb(file, (db) => expect(db.prepare(sql).run().changes).toBeGreaterThan(0));
      expect(logProblem(file)).toBeUndefined();
      let log: ShardLog | undefined;
      try {
        const openAndRead = (): unknown => read(log ?? (log = ShardLog.open(dir, checkpointFolder)));
        expect(openAndRead).toThrow(ShardLogError);
        expect(openAndRead).toThrow(/checksum/);
      } finally {
        log?.close();
      }
    });
  }

  it('a file written by schema 8 opens at 9 with a checksum on every row, record and block, and every entry and total it had', () => {
    const expected = JSON.parse(fs.readFileSync(path.join(fixtureDir, 'expected.json'), 'utf8')) as {
      schemaVersion: string;
      checkpointLsn: string;
      lastLsn: string;
      checkpoint: [shardId: number, total: string][];
      tail: [lsn: string, shardId: number, amount: string, key: string, epoch: string, atMs: number][];
    };
    expect(expected.schemaVersion).toBe('8');
    const dir = makeTempDir('log-v8');
    try {
      fs.copyFileSync(path.join(fixtureDir, 'node.sqlite'), path.join(dir, 'node.sqlite'));
      withRawDb(path.join(dir, 'node.sqlite'), (db) =>
        expect(db.prepare('SELECT count(*) FROM records').pluck().get()).toBeGreaterThan(10),
      );
      const log = ShardLog.open(dir, checkpointFolder);
      try {
        expect(log.getMeta('schema_version')).toBe('9');
        expect(log.checkpointLsn).toBe(BigInt(expected.checkpointLsn));
        expect(log.lastLsn).toBe(BigInt(expected.lastLsn));
        expect(log.checkpointTotals()).toEqual(new Map(expected.checkpoint.map(([shardId, total]) => [shardId, BigInt(total)])));
        const tail = replayAll(log).map((entry) => [
          String(entry.lsn),
          entry.shardId,
          String(entry.amount),
          entry.idempotencyKey.toString(),
          String(entry.epoch),
          entry.atMs,
        ]);
        expect(tail).toEqual(expected.tail);
        log.append([plainEntry(1, 5n), plainEntry(2, 6n)], 3n, 5_000);
      } finally {
        log.close();
      }
      withRawDb(path.join(dir, 'node.sqlite'), (db) => {
        for (const table of ['log', 'records', 'checkpoint_blocks', 'checkpoint_parts'])
          expect(db.prepare(`SELECT count(*) FROM ${table} WHERE crc IS NULL`).pluck().get(), table).toBe(0);
      });
    } finally {
      removeTempDir(dir);
    }
  });
});
