// The node's write-ahead log in SQLite: every accepted increment is a row,
// committed (fsync'd) before it is acknowledged, tagged with the epoch of the
// primary that wrote it. It never holds an entry that was not accepted, and a
// log it cannot read stops the node from starting.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { INT64_MAX, INT64_MIN, replayBatchRows } from '../common/index.ts';

export interface LogEntry {
  shardId: number;
  /** 0 only for a key fence: a row that records a key without changing the total. */
  amount: bigint;
  /** Empty when the increment had no idempotency key. */
  idempotencyKey: Buffer;
  /**
   * 0 for an increment. For a key fence: the counter's shard count when the
   * fence was set; attempts of the key routed with fewer shards may no longer
   * apply at this shard.
   */
  fenceShardCount: number;
}

/** An entry as stored: with its sequence number and the epoch that wrote it. */
export interface StoredEntry extends LogEntry {
  lsn: bigint;
  epoch: bigint;
  atMs: number;
}

const schemaVersion = 3;

export class ShardLogError extends Error {
  override name = 'ShardLogError';
}

function checkEntry(entry: LogEntry): void {
  assert.ok(entry.amount <= INT64_MAX && entry.amount >= INT64_MIN, 'log entry amount out of range');
  assert.ok(entry.fenceShardCount === 0 || (entry.amount === 0n && entry.idempotencyKey.length > 0), 'a key fence carries a key and no amount');
  assert.ok(entry.amount !== 0n || entry.fenceShardCount > 0, 'a zero-amount entry must be a key fence');
  assert.ok(Number.isSafeInteger(entry.shardId) && entry.shardId > 0, 'log entry shard id invalid');
}

export class ShardLog {
  private readonly db: Database.Database;
  private readonly insert: Database.Statement;
  private readonly selectFrom: Database.Statement;
  private readonly appendTransaction: (entries: readonly LogEntry[], firstLsn: bigint, epoch: bigint, atMs: number) => void;
  private nextLsn: bigint;
  private lastEntryEpoch: bigint;
  private foldedLsn: bigint;

  private constructor(db: Database.Database, readonly file: string) {
    this.db = db;
    this.insert = db.prepare('INSERT INTO log (lsn, epoch, shard_id, amount, idem_key, fence_shard_count, at_ms) VALUES (?, ?, ?, ?, ?, ?, ?)');
    this.selectFrom = db
      .prepare('SELECT lsn, epoch, shard_id, amount, idem_key, fence_shard_count, at_ms FROM log WHERE lsn >= ? ORDER BY lsn LIMIT ?')
      .safeIntegers(true)
      .raw(true);
    this.appendTransaction = db.transaction((entries: readonly LogEntry[], firstLsn: bigint, epoch: bigint, atMs: number) => {
      let lsn = firstLsn;
      for (const entry of entries) {
        this.insert.run(lsn, epoch, entry.shardId, entry.amount, entry.idempotencyKey.length > 0 ? entry.idempotencyKey : null, entry.fenceShardCount || null, atMs);
        lsn++;
      }
    });
    this.nextLsn = 1n;
    this.lastEntryEpoch = 0n;
    this.foldedLsn = BigInt(this.getMeta('checkpoint_lsn') ?? '0');
    this.refreshTail();
  }

  private refreshTail(): void {
    const last = this.db.prepare('SELECT lsn, epoch FROM log ORDER BY lsn DESC LIMIT 1').safeIntegers(true).get() as { lsn: bigint; epoch: bigint } | undefined;
    const lastEpoch = this.getMeta('checkpoint_epoch');
    // Every entry may have been folded into the checkpoint: the tail is then the checkpoint's.
    if (last === undefined || last.lsn < this.foldedLsn) {
      this.nextLsn = this.foldedLsn + 1n;
      this.lastEntryEpoch = BigInt(lastEpoch ?? '0');
    } else {
      this.nextLsn = last.lsn + 1n;
      this.lastEntryEpoch = last.epoch;
    }
  }

  /** Every entry up to this lsn is folded into the checkpoint's shard totals. */
  get checkpointLsn(): bigint {
    return this.foldedLsn;
  }

  /** The checkpoint's shard totals (the fold of every entry up to checkpointLsn). */
  checkpointTotals(shardIds?: readonly number[]): Map<number, bigint> {
    const filter = shardIds === undefined ? '' : ` WHERE shard_id IN (${shardIds.map(() => '?').join(',')})`;
    const rows = this.db.prepare(`SELECT shard_id, total FROM checkpoint${filter}`).safeIntegers(true).raw(true).all(...(shardIds ?? [])) as [bigint, bigint][];
    return new Map(rows.map(([shardId, total]) => [Number(shardId), total]));
  }

  /**
   * Folds entries after the checkpoint, up to uptoLsn and at most sliceRows
   * of them, into the checkpoint's totals, then deletes them — except keyed
   * rows younger than keepKeysSinceMs, which idempotency still needs. One
   * transaction: a crash leaves either the old checkpoint with its rows or
   * the new one without them. Returns the rows folded.
   */
  foldSlice(uptoLsn: bigint, sliceRows: number, keepKeysSinceMs: number): number {
    if (uptoLsn <= this.foldedLsn) return 0;
    const rows = this.db
      .prepare('SELECT lsn, epoch, shard_id, amount FROM log WHERE lsn > ? AND lsn <= ? ORDER BY lsn LIMIT ?')
      .safeIntegers(true)
      .raw(true)
      .all(this.foldedLsn, uptoLsn, sliceRows) as [bigint, bigint, bigint, bigint][];
    if (rows.length === 0) return 0;
    let expectedLsn = this.foldedLsn + 1n;
    const sums = new Map<number, bigint>();
    for (const [lsn, , shardId, amount] of rows) {
      if (lsn !== expectedLsn) throw new ShardLogError(`log has a gap: expected lsn ${expectedLsn}, found ${lsn}`);
      sums.set(Number(shardId), (sums.get(Number(shardId)) ?? 0n) + amount);
      expectedLsn++;
    }
    const [newLsn, newEpoch] = [rows[rows.length - 1]![0], rows[rows.length - 1]![1]];
    const current = this.checkpointTotals([...sums.keys()]);
    const upsert = this.db.prepare('INSERT INTO checkpoint (shard_id, total) VALUES (?, ?) ON CONFLICT (shard_id) DO UPDATE SET total = excluded.total');
    this.db.transaction(() => {
      for (const [shardId, sum] of sums) {
        const total = (current.get(shardId) ?? 0n) + sum;
        assert.ok(total <= INT64_MAX && total >= INT64_MIN, 'a folded shard total left int64');
        upsert.run(shardId, total);
      }
      this.db.prepare('DELETE FROM log WHERE lsn > ? AND lsn <= ? AND (idem_key IS NULL OR at_ms < ?)').run(this.foldedLsn, newLsn, keepKeysSinceMs);
      this.setMeta('checkpoint_lsn', newLsn.toString());
      this.setMeta('checkpoint_epoch', newEpoch.toString());
    })();
    this.foldedLsn = newLsn;
    return rows.length;
  }

  /** Deletes folded keyed rows older than the dedup window, oldest first, at most `limit`. */
  pruneFoldedKeys(keepKeysSinceMs: number, limit: number): number {
    return this.db
      .prepare('DELETE FROM log WHERE lsn IN (SELECT lsn FROM log WHERE lsn <= ? ORDER BY lsn LIMIT ?) AND at_ms < ?')
      .run(this.foldedLsn, limit, keepKeysSinceMs).changes;
  }

  /** Keyed entries written since sinceMs, folded or not: what the dedup index is rebuilt from. */
  replayKeys(sinceMs: number, onKey: (lsn: bigint, shardId: number, key: Buffer, atMs: number, fenceShardCount: number) => void): void {
    const rows = this.db
      .prepare('SELECT lsn, shard_id, idem_key, at_ms, fence_shard_count FROM log WHERE idem_key IS NOT NULL AND at_ms >= ? ORDER BY lsn')
      .safeIntegers(true)
      .raw(true)
      .iterate(sinceMs) as IterableIterator<[bigint, bigint, Buffer, bigint, bigint | null]>;
    for (const [lsn, shardId, key, atMs, fenceShardCount] of rows) onKey(lsn, Number(shardId), key, Number(atMs), Number(fenceShardCount ?? 0n));
  }

  /** Opens (or creates) the log in dataDir. Throws ShardLogError when it cannot be trusted. */
  static open(dataDir: string): ShardLog {
    fs.mkdirSync(dataDir, { recursive: true });
    const file = path.join(dataDir, 'node.sqlite');
    let db: Database.Database | undefined;
    try {
      db = new Database(file);
      // WAL + FULL: every commit is fsync'd before better-sqlite3 returns.
      // better-sqlite3 leaves WAL at synchronous=NORMAL, which can lose the
      // last commits on power loss; we set what we mean.
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = FULL');
      db.exec(`
        CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE IF NOT EXISTS log (
          lsn INTEGER PRIMARY KEY,
          epoch INTEGER NOT NULL,
          shard_id INTEGER NOT NULL,
          amount INTEGER NOT NULL,
          idem_key BLOB,
          fence_shard_count INTEGER,
          at_ms INTEGER NOT NULL
        );
        -- Shard totals folded from every entry up to meta checkpoint_lsn.
        CREATE TABLE IF NOT EXISTS checkpoint (shard_id INTEGER PRIMARY KEY, total INTEGER NOT NULL);
      `);
      const version = db.prepare("SELECT value FROM meta WHERE key = 'schema_version'").get() as { value: string } | undefined;
      if (version === undefined) {
        db.prepare("INSERT INTO meta (key, value) VALUES ('schema_version', ?)").run(String(schemaVersion));
      } else if (Number(version.value) !== schemaVersion) {
        throw new ShardLogError(`log ${file} has schema version ${version.value}; this node reads ${schemaVersion}`);
      }
      return new ShardLog(db, file);
    } catch (error) {
      db?.close();
      if (error instanceof ShardLogError) throw error;
      throw new ShardLogError(`cannot open log ${file}: ${(error as Error).message}`);
    }
  }

  /** Sequence number of the last committed entry (0 for an empty log). */
  get lastLsn(): bigint {
    return this.nextLsn - 1n;
  }

  /** Epoch of the last committed entry (0 for an empty log). */
  get lastEpoch(): bigint {
    return this.lastEntryEpoch;
  }

  /** Commits entries written under `epoch` in one transaction (one fsync). Returns the last lsn. */
  append(entries: readonly LogEntry[], epoch: bigint, atMs: number): bigint {
    assert.ok(entries.length > 0, 'append of no entries');
    for (const entry of entries) checkEntry(entry);
    const firstLsn = this.nextLsn;
    this.appendTransaction(entries, firstLsn, epoch, atMs);
    this.nextLsn = firstLsn + BigInt(entries.length);
    this.lastEntryEpoch = epoch;
    return this.lastLsn;
  }

  /** Follower side: commits a primary's entries, which must continue this log exactly. */
  appendReplicated(entries: readonly StoredEntry[]): bigint {
    assert.ok(entries.length > 0, 'append of no entries');
    const transaction = this.db.transaction(() => {
      let expectedLsn = this.nextLsn;
      for (const entry of entries) {
        checkEntry(entry);
        assert.equal(entry.lsn, expectedLsn, 'replicated entries must continue the log');
        this.insert.run(entry.lsn, entry.epoch, entry.shardId, entry.amount, entry.idempotencyKey.length > 0 ? entry.idempotencyKey : null, entry.fenceShardCount || null, entry.atMs);
        expectedLsn++;
      }
    });
    transaction();
    this.nextLsn = entries[entries.length - 1]!.lsn + 1n;
    this.lastEntryEpoch = entries[entries.length - 1]!.epoch;
    return this.lastLsn;
  }

  /**
   * Up to `limit` entries from lsn `fromLsn` on, in order. Throws when fromLsn
   * is already folded into the checkpoint (its rows are gone): a peer that far
   * behind needs the checkpoint, not the log.
   */
  readFrom(fromLsn: bigint, limit: number): StoredEntry[] {
    if (fromLsn <= this.foldedLsn) throw new ShardLogError(`entries from lsn ${fromLsn} are folded into the checkpoint at ${this.foldedLsn}`);
    const rows = this.selectFrom.all(fromLsn, limit) as [bigint, bigint, bigint, bigint, Buffer | null, bigint | null, bigint][];
    return rows.map(([lsn, epoch, shardId, amount, key, fenceShardCount, atMs]) => ({
      lsn,
      epoch,
      shardId: Number(shardId),
      amount,
      idempotencyKey: key ?? Buffer.alloc(0),
      fenceShardCount: Number(fenceShardCount ?? 0n),
      atMs: Number(atMs),
    }));
  }

  /** Epoch of the entry at lsn, or undefined when there is none. */
  epochAt(lsn: bigint): bigint | undefined {
    const row = this.db.prepare('SELECT epoch FROM log WHERE lsn = ?').safeIntegers(true).get(lsn) as { epoch: bigint } | undefined;
    return row?.epoch;
  }

  /** The highest epoch among entries after lsn (0 when there are none). */
  maxEpochAfter(lsn: bigint): bigint {
    const row = this.db.prepare('SELECT max(epoch) AS epoch FROM log WHERE lsn > ?').safeIntegers(true).get(lsn) as { epoch: bigint | null };
    return row.epoch ?? 0n;
  }

  /** Drops every entry after lsn: a tail that was never acknowledged (a deposed primary's). */
  truncateAfter(lsn: bigint): number {
    if (lsn < this.foldedLsn) throw new ShardLogError(`cannot drop entries after lsn ${lsn}: the checkpoint already covers up to ${this.foldedLsn}`);
    const result = this.db.prepare('DELETE FROM log WHERE lsn > ?').run(lsn);
    this.refreshTail();
    return result.changes;
  }

  /**
   * Replays the entries after the checkpoint in lsn order up to uptoLsn
   * (default: all); with checkpointTotals() that is the whole log. Throws
   * ShardLogError on a gap or a bad row: a log with a hole must not yield a
   * silently smaller total.
   */
  replay(
    onEntry: (lsn: bigint, shardId: number, amount: bigint, key: Buffer | null, atMs: number, fenceShardCount: number) => void,
    uptoLsn: bigint = this.lastLsn,
  ): bigint {
    const select = this.db
      .prepare('SELECT lsn, shard_id, amount, idem_key, at_ms, fence_shard_count FROM log WHERE lsn > ? AND lsn <= ? ORDER BY lsn LIMIT ?')
      .safeIntegers(true)
      .raw(true);
    const endLsn = uptoLsn < this.lastLsn ? uptoLsn : this.lastLsn;
    // Entries up to the checkpoint are in its totals (checkpointTotals); the tail follows it.
    let expectedLsn = this.foldedLsn + 1n;
    if (endLsn < this.foldedLsn) throw new ShardLogError(`cannot replay up to lsn ${endLsn}: the checkpoint already covers up to ${this.foldedLsn}`);
    // Bounded: each step advances by replayBatchRows until the end.
    const stepsMax = Number(endLsn / BigInt(replayBatchRows)) + 2;
    for (let step = 0; step < stepsMax && expectedLsn <= endLsn; step++) {
      const rows = select.all(expectedLsn - 1n, endLsn, replayBatchRows) as [bigint, bigint, bigint, Buffer | null, bigint, bigint | null][];
      for (const [lsn, shardId, amount, key, atMs, fenceShardCount] of rows) {
        if (lsn !== expectedLsn) throw new ShardLogError(`log has a gap: expected lsn ${expectedLsn}, found ${lsn}`);
        const validFence = fenceShardCount === null || (amount === 0n && key !== null && fenceShardCount > 0n);
        if ((amount === 0n && fenceShardCount === null) || !validFence || shardId <= 0n || shardId > BigInt(Number.MAX_SAFE_INTEGER)) {
          throw new ShardLogError(`log entry ${lsn} is invalid (shard ${shardId}, amount ${amount})`);
        }
        onEntry(lsn, Number(shardId), amount, key, Number(atMs), Number(fenceShardCount ?? 0n));
        expectedLsn++;
      }
      if (rows.length < replayBatchRows) break;
    }
    if (expectedLsn - 1n !== endLsn) {
      throw new ShardLogError(`log replay ended at lsn ${expectedLsn - 1n}, but the log reaches ${endLsn}`);
    }
    return endLsn;
  }

  /**
   * Replays entries up to uptoLsn (optionally only some shards, filtered in
   * SQL) in slices, yielding to the event loop between them, so a long log
   * never blocks writes or health checks. Entries past uptoLsn are ignored,
   * so concurrent appends do not change the answer.
   */
  async replaySliced(onEntry: (lsn: bigint, shardId: number, amount: bigint) => void, uptoLsn: bigint, shardIds?: readonly number[]): Promise<void> {
    const filter = shardIds === undefined ? '' : ` AND shard_id IN (${shardIds.map(() => '?').join(',')})`;
    const select = this.db
      .prepare(`SELECT lsn, shard_id, amount FROM log WHERE lsn > ? AND lsn <= ?${filter} ORDER BY lsn LIMIT ?`)
      .safeIntegers(true)
      .raw(true);
    let afterLsn = this.foldedLsn;
    const stepsMax = Number(uptoLsn / BigInt(replayBatchRows)) + 2;
    for (let step = 0; step < stepsMax; step++) {
      const rows = select.all(afterLsn, uptoLsn, ...(shardIds ?? []), replayBatchRows) as [bigint, bigint, bigint][];
      for (const [lsn, shardId, amount] of rows) onEntry(lsn, Number(shardId), amount);
      if (rows.length < replayBatchRows) return;
      afterLsn = rows[rows.length - 1]![0];
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  getMeta(key: string): string | undefined {
    const row = this.db.prepare('SELECT value FROM meta WHERE key = ?').get(key) as { value: string } | undefined;
    return row?.value;
  }

  /** Durable before it returns (synchronous=FULL). */
  setMeta(key: string, value: string): void {
    this.db.prepare('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value').run(key, value);
  }

  sizeBytes(): number {
    const row = this.db.prepare('SELECT page_count * page_size AS bytes FROM pragma_page_count(), pragma_page_size()').get() as { bytes: number };
    return row.bytes;
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}
