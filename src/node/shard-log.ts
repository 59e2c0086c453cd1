// The node's write-ahead log in SQLite: every accepted increment is a row,
// committed (fsync'd) before it is acknowledged. It never holds an entry that
// was not accepted, and a log it cannot read stops the node from starting.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { INT64_MAX, INT64_MIN, replayBatchRows } from '../common/index.ts';

export interface LogEntry {
  shardId: number;
  amount: bigint;
  /** Empty when the increment had no idempotency key. */
  idempotencyKey: Buffer;
}

const schemaVersion = 1;

export class ShardLogError extends Error {
  override name = 'ShardLogError';
}

export class ShardLog {
  private readonly db: Database.Database;
  private readonly insert: Database.Statement;
  private readonly appendTransaction: (entries: readonly LogEntry[], firstLsn: bigint, atMs: number) => void;
  private nextLsn: bigint;

  private constructor(db: Database.Database) {
    this.db = db;
    this.insert = db.prepare('INSERT INTO log (lsn, shard_id, amount, idem_key, at_ms) VALUES (?, ?, ?, ?, ?)');
    this.appendTransaction = db.transaction((entries: readonly LogEntry[], firstLsn: bigint, atMs: number) => {
      let lsn = firstLsn;
      for (const entry of entries) {
        this.insert.run(lsn, entry.shardId, entry.amount, entry.idempotencyKey.length > 0 ? entry.idempotencyKey : null, atMs);
        lsn++;
      }
    });
    const last = db.prepare('SELECT max(lsn) AS lsn FROM log').safeIntegers(true).get() as { lsn: bigint | null };
    this.nextLsn = (last.lsn ?? 0n) + 1n;
  }

  /** Opens (or creates) the log in dataDir. Throws ShardLogError when it cannot be trusted. */
  static open(dataDir: string): ShardLog {
    fs.mkdirSync(dataDir, { recursive: true });
    const file = path.join(dataDir, 'node.sqlite');
    let db: Database.Database;
    try {
      db = new Database(file);
      // WAL + FULL: every commit is fsync'd before better-sqlite3 returns.
      // better-sqlite3 leaves WAL at synchronous=NORMAL, which can lose the
      // last commits on power loss; we set what we mean.
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = FULL');
      db.pragma('busy_timeout = 0');
      db.exec(`
        CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE IF NOT EXISTS log (
          lsn INTEGER PRIMARY KEY,
          shard_id INTEGER NOT NULL,
          amount INTEGER NOT NULL,
          idem_key BLOB,
          at_ms INTEGER NOT NULL
        );
      `);
      const version = db.prepare("SELECT value FROM meta WHERE key = 'schema_version'").get() as { value: string } | undefined;
      if (version === undefined) {
        db.prepare("INSERT INTO meta (key, value) VALUES ('schema_version', ?)").run(String(schemaVersion));
      } else if (Number(version.value) !== schemaVersion) {
        throw new ShardLogError(`log ${file} has schema version ${version.value}; this node reads ${schemaVersion}`);
      }
    } catch (error) {
      if (error instanceof ShardLogError) throw error;
      throw new ShardLogError(`cannot open log ${file}: ${(error as Error).message}`);
    }
    return new ShardLog(db);
  }

  /** Sequence number of the last committed entry (0 for an empty log). */
  get lastLsn(): bigint {
    return this.nextLsn - 1n;
  }

  /** Commits entries in one transaction (one fsync). Returns the last lsn. */
  append(entries: readonly LogEntry[], atMs: number): bigint {
    assert.ok(entries.length > 0, 'append of no entries');
    for (const entry of entries) {
      assert.ok(entry.amount !== 0n && entry.amount <= INT64_MAX && entry.amount >= INT64_MIN, 'log entry amount out of range');
      assert.ok(Number.isSafeInteger(entry.shardId) && entry.shardId > 0, 'log entry shard id invalid');
    }
    const firstLsn = this.nextLsn;
    this.appendTransaction(entries, firstLsn, atMs);
    this.nextLsn = firstLsn + BigInt(entries.length);
    return this.lastLsn;
  }

  /**
   * Replays every entry in lsn order. Throws ShardLogError on a gap or a bad
   * row: a log with a hole must not yield a silently smaller total.
   */
  replay(onEntry: (lsn: bigint, shardId: number, amount: bigint) => void): bigint {
    const select = this.db
      .prepare('SELECT lsn, shard_id, amount FROM log WHERE lsn > ? ORDER BY lsn LIMIT ?')
      .safeIntegers(true)
      .raw(true);
    let expectedLsn = 1n;
    // Bounded: each step advances by replayBatchRows until the log ends.
    const stepsMax = Number(this.lastLsn / BigInt(replayBatchRows)) + 2;
    for (let step = 0; step < stepsMax; step++) {
      const rows = select.all(expectedLsn - 1n, replayBatchRows) as [bigint, bigint, bigint][];
      for (const [lsn, shardId, amount] of rows) {
        if (lsn !== expectedLsn) throw new ShardLogError(`log has a gap: expected lsn ${expectedLsn}, found ${lsn}`);
        if (amount === 0n || shardId <= 0n || shardId > BigInt(Number.MAX_SAFE_INTEGER)) {
          throw new ShardLogError(`log entry ${lsn} is invalid (shard ${shardId}, amount ${amount})`);
        }
        onEntry(lsn, Number(shardId), amount);
        expectedLsn++;
      }
      if (rows.length < replayBatchRows) break;
    }
    if (expectedLsn - 1n !== this.lastLsn) {
      throw new ShardLogError(`log replay ended at lsn ${expectedLsn - 1n}, but the log's last lsn is ${this.lastLsn}`);
    }
    return this.lastLsn;
  }

  sizeBytes(): number {
    const row = this.db.prepare('SELECT page_count * page_size AS bytes FROM pragma_page_count(), pragma_page_size()').get() as { bytes: number };
    return row.bytes;
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}
