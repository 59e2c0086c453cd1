// The embedded counter directory: one router, its directory in SQLite
// (fsync'd before a new shard receives anything, so a shard id is never
// reused, not even after its counter is deleted) and in memory for the hot
// path. The file is held under an exclusive lock: a second router on the
// same data directory refuses to start. See directory.ts for the contract.
import assert from 'node:assert';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import {
  ErrorCode,
  TallyError,
  monotonicNowMs,
  preparePrivateDir,
  preparePrivateFile,
  storageError,
  type MonotonicClock,
  type WindowSetting,
} from '../../../common/index.ts';
import { choosePairs } from '../placement.ts';
import { ShardTaskTable } from '../shard-task-table.ts';
import {
  capWarnings,
  checkCreationCaps,
  checkDrainable,
  checkPairAddable,
  checkPlaceable,
  checkShardCountChange,
  checkShardsTotalCap,
  countersInOrder,
  missingCounters,
} from '../checks.ts';
import { snapshotCounterOf, snapshotFormat, snapshotPairOf, snapshotVersion, type DirectorySnapshot } from '../snapshot.ts';
import {
  counterKinds,
  defaultDirectoryLimits,
  nextPairState,
  type ClearOutcome,
  type CounterInfo,
  type CounterKind,
  type Directory,
  type DirectoryLimits,
  type Growth,
  type ListedCounterRow,
  type NameRange,
  type PairAddresses,
  type PairInfo,
  type PairUpdate,
  type ShardInfo,
  type ShardTask,
} from '../contract.ts';

export class SqliteDirectory implements Directory {
  private readonly db: Database.Database;
  private readonly counters = new Map<string, CounterInfo>();
  private readonly pairs: PairInfo[] = [];
  private readonly shardsPerPair: number[] = [];
  /** Sum of shardsPerPair: what shardsTotalMax bounds. */
  private totalShardCount = 0;
  /** Things an operator should hear about at start (logged by main). */
  readonly warnings: string[] = [];
  private readonly insertCounter: Database.Statement;
  private readonly insertShard: Database.Statement;
  private readonly updateShardCount: Database.Statement;
  /** Drops and clears not yet confirmed by their node, by shard id. */
  private readonly shardTasks = new ShardTaskTable();
  /** Prepared once: a TTL slice upserts thousands of tasks (50 counters of up to 64 shards) in one transaction. */
  private readonly upsertShardTaskStatement: Database.Statement;
  private readonly deleteStatements: Record<'counter' | 'shards' | 'growths' | 'clearKeys', Database.Statement>;
  private readonly scanBounded: Database.Statement;
  private readonly scanUnbounded: Database.Statement;

  private constructor(
    db: Database.Database,
    configuredPairs: readonly PairAddresses[],
    private readonly now: () => number,
    private readonly limits: DirectoryLimits,
    /** Idle times of counters (lastWriteMonotonicMs); `now` is the clock of the stored data. */
    private readonly monotonicNow: MonotonicClock,
  ) {
    this.db = db;
    this.insertCounter = db.prepare('INSERT INTO counters (name, shard_count, created_ms, kind, autoscale) VALUES (?, ?, ?, ?, ?)');
    this.insertShard = db.prepare('INSERT INTO shards (counter, shard_index, pair_index, created_ms) VALUES (?, ?, ?, ?)');
    this.updateShardCount = db.prepare('UPDATE counters SET shard_count = ? WHERE name = ?');
    // Both walk the primary key's index from the start of the range: a page costs its rows.
    const scan = 'SELECT name, kind, shard_count, ttl_ms FROM counters WHERE name > ? AND name >= ?';
    this.scanBounded = db.prepare(`${scan} AND name < ? ORDER BY name LIMIT ?`);
    this.scanUnbounded = db.prepare(`${scan} ORDER BY name LIMIT ?`);
    this.upsertShardTaskStatement = db.prepare(
      'INSERT INTO shard_tasks (shard_id, pair_index, kind, generation, created_ms) VALUES (?, ?, ?, ?, ?) ON CONFLICT (shard_id) DO UPDATE SET kind = excluded.kind, generation = excluded.generation, created_ms = excluded.created_ms',
    );
    this.deleteStatements = {
      counter: db.prepare('DELETE FROM counters WHERE name = ?'),
      shards: db.prepare('DELETE FROM shards WHERE counter = ?'),
      growths: db.prepare('DELETE FROM growths WHERE counter = ?'),
      clearKeys: db.prepare('DELETE FROM clear_keys WHERE counter = ?'),
    };
    this.loadPairs(configuredPairs);
    this.loadCounters();
    this.loadShardTasks();
    this.warnings.push(...capWarnings({ counters: this.counters.size, shards: this.totalShardCount }, limits));
  }

  static open(
    dataDir: string,
    configuredPairs: readonly PairAddresses[],
    // eslint-disable-next-line no-restricted-properties -- the clock of stored rows (creation, growth, clear times); the router passes a steady one
    now: () => number = Date.now,
    limits: DirectoryLimits = defaultDirectoryLimits,
    monotonicNow: MonotonicClock = monotonicNowMs,
  ): SqliteDirectory {
    preparePrivateDir(dataDir);
    const file = path.join(dataDir, 'directory.sqlite');
    preparePrivateFile(file);
    // No busy wait: a lock held now is held by a live router, not by one finishing a write.
    const db = new Database(file, { timeout: 0 });
    try {
      // Held from the first access until close (the OS releases it when the
      // process dies): a second router on this file would hand out the same
      // shard ids and fight over roles, so it must not start.
      db.pragma('locking_mode = EXCLUSIVE');
      db.exec('BEGIN IMMEDIATE; COMMIT');
    } catch (error) {
      db.close();
      if ((error as { code?: string }).code === 'SQLITE_BUSY')
        throw new TallyError(
          ErrorCode.failedPrecondition,
          `the directory ${file} is in use by another router: one SQLite directory serves one router (run several routers on etcd: --etcd)`,
        );
      throw storageError(error, 'router');
    }
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    db.exec(`
      CREATE TABLE IF NOT EXISTS pairs (
        pair_index INTEGER PRIMARY KEY,
        primary_addr TEXT NOT NULL,
        follower_addr TEXT NOT NULL,
        epoch INTEGER NOT NULL,
        in_sync INTEGER NOT NULL DEFAULT 0
      );
      CREATE TABLE IF NOT EXISTS counters (
        name TEXT PRIMARY KEY,
        shard_count INTEGER NOT NULL,
        created_ms INTEGER NOT NULL
      );
      -- AUTOINCREMENT: a shard id is never reused, even after a crash.
      CREATE TABLE IF NOT EXISTS shards (
        shard_id INTEGER PRIMARY KEY AUTOINCREMENT,
        counter TEXT NOT NULL,
        shard_index INTEGER NOT NULL,
        pair_index INTEGER NOT NULL,
        created_ms INTEGER NOT NULL,
        UNIQUE (counter, shard_index)
      );
      CREATE TABLE IF NOT EXISTS growths (
        counter TEXT NOT NULL,
        previous_shard_count INTEGER NOT NULL,
        new_shard_count INTEGER NOT NULL,
        grown_ms INTEGER NOT NULL
      );
      CREATE INDEX IF NOT EXISTS growths_by_counter ON growths (counter);
      -- Drops and clears owed by nodes, until the shard's primary confirms.
      CREATE TABLE IF NOT EXISTS shard_tasks (
        shard_id INTEGER PRIMARY KEY,
        pair_index INTEGER NOT NULL,
        kind TEXT NOT NULL,
        created_ms INTEGER NOT NULL
      );
      -- Keys of recent clears: a retry of a keyed clear clears nothing more.
      CREATE TABLE IF NOT EXISTS clear_keys (
        counter TEXT NOT NULL,
        idem_key BLOB NOT NULL,
        generation INTEGER NOT NULL,
        cleared_ms INTEGER NOT NULL,
        PRIMARY KEY (counter, idem_key)
      );
      CREATE INDEX IF NOT EXISTS clear_keys_by_time ON clear_keys (cleared_ms);
    `);
    // Columns added after the first release: add them to older directories.
    const addColumn = (table: string, column: string, definition: string): void => {
      const columns = db.prepare(`SELECT name FROM pragma_table_info('${table}')`).all() as { name: string }[];
      if (!columns.some((entry) => entry.name === column)) db.exec(`ALTER TABLE ${table} ADD COLUMN ${column} ${definition}`);
    };
    addColumn('pairs', 'in_sync', 'INTEGER NOT NULL DEFAULT 0');
    addColumn('pairs', 'primary_id', "TEXT NOT NULL DEFAULT ''");
    addColumn('pairs', 'follower_id', "TEXT NOT NULL DEFAULT ''");
    addColumn('pairs', 'acked_lsn', 'INTEGER NOT NULL DEFAULT 0');
    // Rows from before identities are legacy (1); new pairs are inserted with 0.
    addColumn('pairs', 'legacy', 'INTEGER NOT NULL DEFAULT 1');
    addColumn('pairs', 'replaced', 'INTEGER NOT NULL DEFAULT 0');
    addColumn('pairs', 'added_online', 'INTEGER NOT NULL DEFAULT 0');
    addColumn('pairs', 'draining', 'INTEGER NOT NULL DEFAULT 0');
    addColumn('pairs', 'config_version', 'INTEGER NOT NULL DEFAULT 0');
    addColumn('counters', 'autoscale', 'INTEGER NOT NULL DEFAULT 1');
    addColumn('counters', 'kind', "TEXT NOT NULL DEFAULT 'total'");
    addColumn('counters', 'window_bucket_ms', 'INTEGER NOT NULL DEFAULT 0');
    addColumn('counters', 'window_retention_ms', 'INTEGER NOT NULL DEFAULT 0');
    addColumn('counters', 'generation', 'INTEGER NOT NULL DEFAULT 0');
    addColumn('shard_tasks', 'generation', 'INTEGER NOT NULL DEFAULT 0');
    // NULL: the router default applies; 0: never expires; else milliseconds.
    addColumn('counters', 'ttl_ms', 'INTEGER');
    try {
      return new SqliteDirectory(db, configuredPairs, now, limits, monotonicNow);
    } catch (error) {
      db.close();
      throw error;
    }
  }

  private loadPairs(configuredPairs: readonly PairAddresses[]): void {
    const stored = this.db
      .prepare(
        'SELECT pair_index, primary_addr, follower_addr, epoch, in_sync, primary_id, follower_id, acked_lsn, legacy, replaced, added_online, draining, config_version FROM pairs ORDER BY pair_index',
      )
      .safeIntegers(true)
      .all() as {
      pair_index: bigint;
      primary_addr: string;
      follower_addr: string;
      epoch: bigint;
      in_sync: bigint;
      primary_id: string;
      follower_id: string;
      acked_lsn: bigint;
      legacy: bigint;
      replaced: bigint;
      added_online: bigint;
      draining: bigint;
      config_version: bigint;
    }[];
    // Pairs added online may be missing from --pairs; any other missing pair is a configuration mistake.
    if (stored.length > configuredPairs.length && stored.slice(configuredPairs.length).some((row) => row.added_online !== 1n)) {
      throw new TallyError(
        ErrorCode.failedPrecondition,
        `the directory knows ${stored.length} node pairs but only ${configuredPairs.length} are configured`,
      );
    }
    for (const row of stored) {
      const configured = configuredPairs[Number(row.pair_index)] ?? { primary: row.primary_addr, follower: row.follower_addr };
      // A failover may have swapped the roles; the pair's members must stay the same.
      const storedSet = [row.primary_addr, row.follower_addr].sort().join(',');
      const configuredSet = [configured.primary, configured.follower].sort().join(',');
      if (storedSet !== configuredSet) {
        if (row.replaced !== 1n)
          throw new TallyError(
            ErrorCode.failedPrecondition,
            `pair ${row.pair_index} is ${storedSet} in the directory but ${configuredSet} in the configuration`,
          );
        // An operator replaced a node: the directory is the truth; --pairs is out of date.
        this.warnings.push(
          `pair ${row.pair_index} is ${storedSet} since a node replacement, but ${configuredSet} in --pairs: using the directory's (update --pairs)`,
        );
      }
      this.pairs.push({
        pairIndex: Number(row.pair_index),
        primary: row.primary_addr,
        follower: row.follower_addr,
        epoch: row.epoch,
        inSync: row.in_sync === 1n,
        primaryId: row.primary_id,
        followerId: row.follower_id,
        ackedLsn: row.acked_lsn,
        legacy: row.legacy === 1n,
        replaced: row.replaced === 1n,
        addedOnline: row.added_online === 1n,
        draining: row.draining === 1n,
        configVersion: row.config_version,
      });
      if (Number(row.pair_index) >= configuredPairs.length)
        this.warnings.push(
          `pair ${row.pair_index} (${row.primary_addr}, ${row.follower_addr}) was added online and is not in --pairs: using the directory's`,
        );
    }
    const insertPair = this.db.prepare('INSERT INTO pairs (pair_index, primary_addr, follower_addr, epoch, legacy) VALUES (?, ?, ?, ?, 0)');
    for (let pairIndex = stored.length; pairIndex < configuredPairs.length; pairIndex++) {
      const configured = configuredPairs[pairIndex]!;
      insertPair.run(pairIndex, configured.primary, configured.follower, 1);
      this.pairs.push({
        pairIndex,
        primary: configured.primary,
        follower: configured.follower,
        epoch: 1n,
        inSync: false,
        primaryId: '',
        followerId: '',
        ackedLsn: 0n,
        legacy: false,
        replaced: false,
        addedOnline: false,
        draining: false,
        configVersion: 0n,
      });
    }
    for (let pairIndex = 0; pairIndex < this.pairs.length; pairIndex++) this.shardsPerPair.push(0);
  }

  private loadCounters(): void {
    const counterRows = this.db
      .prepare(
        'SELECT name, shard_count, created_ms, autoscale, kind, window_bucket_ms, window_retention_ms, generation, ttl_ms FROM counters',
      )
      .all() as {
      name: string;
      shard_count: number;
      created_ms: number;
      autoscale: number;
      kind: string;
      window_bucket_ms: number;
      window_retention_ms: number;
      generation: number;
      ttl_ms: number | null;
    }[];
    // Last writes are not stored: every counter's idle clock starts now (a
    // restart postpones an expiry, never brings one forward).
    const loadedMs = this.monotonicNow();
    for (const row of counterRows) {
      if (!counterKinds.includes(row.kind as CounterKind))
        throw new TallyError(ErrorCode.internal, `directory: counter ${row.name} has unknown kind ${row.kind}`);
      this.counters.set(row.name, {
        name: row.name,
        kind: row.kind as CounterKind,
        window: { bucketMs: row.window_bucket_ms, retentionMs: row.window_retention_ms },
        shards: [],
        writableShardCount: 0,
        createdMs: row.created_ms,
        growths: [],
        autoscale: row.autoscale === 1,
        generation: row.generation,
        ttlMs: row.ttl_ms,
        lastWriteMonotonicMs: loadedMs,
      });
    }
    const growthRows = this.db.prepare('SELECT counter, previous_shard_count, grown_ms FROM growths ORDER BY rowid').all() as {
      counter: string;
      previous_shard_count: number;
      grown_ms: number;
    }[];
    for (const row of growthRows)
      this.counters.get(row.counter)?.growths.push({ previousShardCount: row.previous_shard_count, grownMs: row.grown_ms });
    const shardRows = this.db
      .prepare('SELECT shard_id, counter, shard_index, pair_index FROM shards ORDER BY counter, shard_index')
      .all() as {
      shard_id: number;
      counter: string;
      shard_index: number;
      pair_index: number;
    }[];
    for (const row of shardRows) {
      const counter = this.counters.get(row.counter);
      if (counter === undefined || row.shard_index !== counter.shards.length || row.pair_index >= this.pairs.length) {
        throw new TallyError(ErrorCode.internal, `directory is inconsistent at shard ${row.shard_id} of ${row.counter}`);
      }
      counter.shards.push({ shardIndex: row.shard_index, shardId: row.shard_id, pairIndex: row.pair_index });
      counter.writableShardCount = counter.shards.length;
      this.shardsPerPair[row.pair_index]!++;
      this.totalShardCount++;
    }
    for (const row of counterRows) {
      if (this.counters.get(row.name)!.shards.length !== row.shard_count) {
        throw new TallyError(ErrorCode.internal, `directory is inconsistent: ${row.name} should have ${row.shard_count} shards`);
      }
    }
  }

  private loadShardTasks(): void {
    const rows = this.db.prepare('SELECT shard_id, pair_index, kind, generation, created_ms FROM shard_tasks ORDER BY shard_id').all() as {
      shard_id: number;
      pair_index: number;
      kind: string;
      generation: number;
      created_ms: number;
    }[];
    for (const row of rows) {
      if ((row.kind !== 'drop' && row.kind !== 'clear') || row.pair_index >= this.pairs.length)
        throw new TallyError(ErrorCode.internal, `directory: shard task ${row.kind} of shard ${row.shard_id} is not one this router knows`);
      this.shardTasks.set({
        shardId: row.shard_id,
        pairIndex: row.pair_index,
        kind: row.kind,
        generation: row.generation,
        createdMs: row.created_ms,
      });
    }
  }

  async exportSnapshot(): Promise<DirectorySnapshot> {
    const highest = this.db.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'shards'").pluck(true).get() as number | undefined;
    return {
      format: snapshotFormat,
      version: snapshotVersion,
      exportedMs: this.now(),
      shardIdNext: (highest ?? 0) + 1,
      pairs: this.pairs.map(snapshotPairOf),
      counters: [...this.counters.values()].map(snapshotCounterOf),
      shardTasks: this.shardTasks.all().map((task) => ({ ...task })),
    };
  }

  /** The directory in dataDir as an export, its pairs as stored (no --pairs to check them against). Refused while a router holds it. */
  // eslint-disable-next-line no-restricted-properties -- the export's stored and shown timestamp
  static async exportFrom(dataDir: string, now: () => number = Date.now): Promise<DirectorySnapshot> {
    const file = path.join(dataDir, 'directory.sqlite');
    if (!fs.existsSync(file)) throw new TallyError(ErrorCode.notFound, `there is no directory in ${dataDir} (no directory.sqlite)`);
    const probe = new Database(file, { readonly: true, timeout: 0, fileMustExist: true });
    let stored: PairAddresses[];
    try {
      stored = probe
        .prepare('SELECT primary_addr AS "primary", follower_addr AS follower FROM pairs ORDER BY pair_index')
        .all() as PairAddresses[];
    } catch (error) {
      if ((error as { code?: string }).code === 'SQLITE_BUSY')
        throw new TallyError(ErrorCode.failedPrecondition, `the directory ${file} is in use by a router: stop it first`);
      throw storageError(error, 'router');
    } finally {
      probe.close();
    }
    const limits = { countersMax: Number.MAX_SAFE_INTEGER, shardsTotalMax: Number.MAX_SAFE_INTEGER };
    const directory = SqliteDirectory.open(dataDir, stored, now, limits);
    try {
      return await directory.exportSnapshot();
    } finally {
      await directory.close();
    }
  }

  /**
   * Writes an export into a new directory in dataDir (refused when one
   * with any pair or counter is there), keeping every shard id, epoch and
   * identity, and the next shard id. A growth another store had announced
   * but not activated is completed: with one router nobody else must see it.
   */
  // eslint-disable-next-line no-restricted-properties -- the clock of the rows an import stores
  static importSnapshot(dataDir: string, snapshot: DirectorySnapshot, now: () => number = Date.now): void {
    const directory = SqliteDirectory.open(dataDir, [], now, {
      countersMax: Number.MAX_SAFE_INTEGER,
      shardsTotalMax: Number.MAX_SAFE_INTEGER,
    });
    try {
      const db = directory.db;
      const used = db.prepare('SELECT (SELECT COUNT(*) FROM pairs) + (SELECT COUNT(*) FROM counters)').pluck(true).get() as number;
      if (used > 0) throw new TallyError(ErrorCode.failedPrecondition, `${dataDir} already holds a directory: import into an empty one`);
      const insertPair = db.prepare(
        'INSERT INTO pairs (pair_index, primary_addr, follower_addr, epoch, in_sync, primary_id, follower_id, acked_lsn, legacy, replaced, added_online, draining, config_version) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
      );
      const insertCounter = db.prepare(
        'INSERT INTO counters (name, shard_count, created_ms, kind, autoscale, window_bucket_ms, window_retention_ms, generation, ttl_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
      );
      const insertShard = db.prepare('INSERT INTO shards (shard_id, counter, shard_index, pair_index, created_ms) VALUES (?, ?, ?, ?, ?)');
      const insertGrowth = db.prepare('INSERT INTO growths (counter, previous_shard_count, new_shard_count, grown_ms) VALUES (?, ?, ?, ?)');
      const insertTask = db.prepare('INSERT INTO shard_tasks (shard_id, pair_index, kind, generation, created_ms) VALUES (?, ?, ?, ?, ?)');
      const flag = (value: boolean): number => (value ? 1 : 0);
      directory.transaction(() => {
        for (const pair of snapshot.pairs)
          insertPair.run(
            pair.pairIndex,
            pair.primary,
            pair.follower,
            BigInt(pair.epoch),
            flag(pair.inSync),
            pair.primaryId,
            pair.followerId,
            BigInt(pair.ackedLsn),
            flag(pair.legacy),
            flag(pair.replaced),
            flag(pair.addedOnline),
            flag(pair.draining),
            BigInt(pair.configVersion ?? '0'),
          );
        for (const counter of snapshot.counters) {
          insertCounter.run(
            counter.name,
            counter.shards.length,
            counter.createdMs,
            counter.kind,
            flag(counter.autoscale),
            counter.window.bucketMs,
            counter.window.retentionMs,
            counter.generation,
            counter.ttlMs,
          );
          counter.shards.forEach(([shardId, pairIndex], shardIndex) =>
            insertShard.run(shardId, counter.name, shardIndex, pairIndex, counter.createdMs),
          );
          const growths = [...counter.growths];
          if (counter.writableShardCount < counter.shards.length)
            growths.push({ previousShardCount: counter.writableShardCount, grownMs: now() });
          growths.forEach((growth, index) =>
            insertGrowth.run(
              counter.name,
              growth.previousShardCount,
              growths[index + 1]?.previousShardCount ?? counter.shards.length,
              growth.grownMs,
            ),
          );
        }
        for (const task of snapshot.shardTasks) insertTask.run(task.shardId, task.pairIndex, task.kind, task.generation, task.createdMs);
        // AUTOINCREMENT continues from here: no id below shardIdNext is given out again.
        db.prepare("DELETE FROM sqlite_sequence WHERE name = 'shards'").run();
        db.prepare("INSERT INTO sqlite_sequence (name, seq) VALUES ('shards', ?)").run(snapshot.shardIdNext - 1);
      })();
    } finally {
      directory.db.close();
    }
  }

  /** One router: nothing changes the directory behind this memory's back. */
  async readBarrier(): Promise<void> {}

  get(name: string): CounterInfo | undefined {
    return this.counters.get(name);
  }

  /**
   * Up to `limit` counters in `range`, in byte order of their UTF-8 names
   * (SQLite compares TEXT with memcmp, and UTF-8 byte order is code point
   * order). Read from the committed rows, not from memory: the primary
   * key's index makes a page O(limit) however many counters there are.
   */
  async scan(range: NameRange, limit: number): Promise<ListedCounterRow[]> {
    assert(Number.isInteger(limit) && limit > 0, `scan limit ${limit}`);
    const rows = (
      range.before === undefined
        ? this.scanUnbounded.all(range.after, range.from, limit)
        : this.scanBounded.all(range.after, range.from, range.before, limit)
    ) as { name: string; kind: string; shard_count: number; ttl_ms: number | null }[];
    return rows.map((row) => ({ name: row.name, kind: row.kind as CounterKind, shardCount: row.shard_count, ttlMs: row.ttl_ms }));
  }

  /**
   * The counter, created on its first use (see getOrCreateMany). Using a
   * counter as another kind than it was created as is FAILED_PRECONDITION.
   * Every write resolves its counter here or in getOrCreateMany: that is
   * when its last write time is taken (lastWriteMonotonicMs).
   */
  async getOrCreate(name: string, kind: CounterKind = 'total', partitions = 1): Promise<CounterInfo> {
    const existing = this.counters.get(name);
    if (existing !== undefined) {
      if (existing.kind !== kind)
        throw new TallyError(ErrorCode.failedPrecondition, `counter "${name}" is a ${existing.kind} counter, not a ${kind} counter`);
      existing.lastWriteMonotonicMs = this.monotonicNow();
      return existing;
    }
    this.create([name], kind, partitions);
    return this.counters.get(name)!;
  }

  /**
   * The named counters, one per name (names may repeat), each created on
   * its first use: with one shard, or for a membership counter with its
   * fixed partitions (one shard each, never grown: a member must always
   * live in the same partition). Every name is checked before anything is
   * created: a counter of another kind (FAILED_PRECONDITION) or a cap
   * (RESOURCE_EXHAUSTED) creates nothing. All of the call's new counters
   * are created in one transaction, one fsync. Synchronous from the first
   * check to the last change in memory: concurrent calls naming the same
   * new counter get one counter. Marks each counter written now (one store
   * per run of a name, none per item of a run).
   */
  async getOrCreateMany(names: readonly string[], kind: CounterKind = 'total', partitions = 1): Promise<CounterInfo[]> {
    const missing = missingCounters(this.counters, names, kind, this.monotonicNow());
    if (missing.size > 0) this.create([...missing], kind, partitions);
    return countersInOrder(this.counters, names);
  }

  /**
   * Creates counters that do not exist, in one transaction; memory changes
   * only after it commits, so a failure leaves memory as the rows are.
   */
  private create(names: readonly string[], kind: CounterKind, partitions: number): void {
    checkCreationCaps(names.length, kind, partitions, { counters: this.counters.size, shards: this.totalShardCount }, this.limits);
    const shardCount = kind === 'membership' ? partitions : 1;
    const autoscale = kind !== 'membership';
    const createdMs = this.now();
    const counters: CounterInfo[] = [];
    const createdShards: ShardInfo[][] = [];
    // Placement sees the shards placed earlier in this transaction.
    const totalShardsPerPair = [...this.shardsPerPair];
    this.transaction(() => {
      for (const name of names) {
        assert(!this.counters.has(name), `counter ${name} exists`);
        const counter: CounterInfo = {
          name,
          kind,
          window: { bucketMs: 0, retentionMs: 0 },
          shards: [],
          writableShardCount: 0,
          createdMs,
          growths: [],
          autoscale,
          generation: 0,
          ttlMs: null,
          lastWriteMonotonicMs: this.monotonicNow(),
        };
        this.insertCounter.run(name, shardCount, createdMs, kind, autoscale ? 1 : 0);
        createdShards.push(this.insertShards(counter, shardCount, totalShardsPerPair));
        counters.push(counter);
      }
    })();
    for (let index = 0; index < counters.length; index++) {
      const counter = counters[index]!;
      this.publish(counter, createdShards[index]!);
      this.counters.set(counter.name, counter);
    }
  }

  private checkShardsTotal(addCount: number): void {
    checkShardsTotalCap(addCount, this.totalShardCount, this.limits);
  }

  /** Grows a counter's shard set. No data moves; old shards stay in every sum. */
  async setShards(name: string, shardCount: number): Promise<{ previousShardCount: number; counter: CounterInfo }> {
    const counter = checkShardCountChange(name, this.counters.get(name), shardCount);
    const previousShardCount = counter.shards.length;
    if (shardCount > previousShardCount) {
      this.checkShardsTotal(shardCount - previousShardCount);
      const growth: Growth = { previousShardCount, grownMs: this.now() };
      const created = this.transaction(() => {
        this.db
          .prepare('INSERT INTO growths (counter, previous_shard_count, new_shard_count, grown_ms) VALUES (?, ?, ?, ?)')
          .run(name, previousShardCount, shardCount, growth.grownMs);
        const shards = this.insertShards(counter, shardCount - previousShardCount, [...this.shardsPerPair]);
        this.updateShardCount.run(shardCount, name);
        return shards;
      })();
      counter.growths.push(growth);
      this.publish(counter, created);
    }
    return { previousShardCount, counter };
  }

  /**
   * Inside a transaction: inserts the shard rows (the caller keeps the
   * counter's shard_count); memory changes only after commit (publish).
   * totalShardsPerPair: placed shards, with this transaction's; updated.
   */
  private insertShards(counter: CounterInfo, addCount: number, totalShardsPerPair: number[]): ShardInfo[] {
    const mine = this.pairs.map(() => 0);
    for (const shard of counter.shards) mine[shard.pairIndex]!++;
    checkPlaceable(this.pairs);
    const chosen = choosePairs(mine, totalShardsPerPair, addCount, (pairIndex) => this.pairs[pairIndex]!.draining);
    const created: ShardInfo[] = [];
    for (const pairIndex of chosen) {
      const shardIndex = counter.shards.length + created.length;
      const result = this.insertShard.run(counter.name, shardIndex, pairIndex, this.now());
      created.push({ shardIndex, shardId: Number(result.lastInsertRowid), pairIndex });
      totalShardsPerPair[pairIndex]!++;
    }
    return created;
  }

  private publish(counter: CounterInfo, created: readonly ShardInfo[]): void {
    for (const shard of created) {
      counter.shards.push(shard);
      // One router: nobody else must see a growth first.
      counter.writableShardCount = counter.shards.length;
      this.shardsPerPair[shard.pairIndex]!++;
    }
    this.totalShardCount += created.length;
  }

  /** Sets a total counter's window (persisted); nodes learn it with the next increment. */
  async setWindow(name: string, window: WindowSetting): Promise<CounterInfo> {
    const counter = this.counters.get(name);
    if (counter === undefined) throw new TallyError(ErrorCode.notFound, `counter "${name}" does not exist`);
    if (counter.kind !== 'total')
      throw new TallyError(ErrorCode.failedPrecondition, `counter "${name}" is a ${counter.kind} counter: only totals have windows`);
    this.write(() =>
      this.db
        .prepare('UPDATE counters SET window_bucket_ms = ?, window_retention_ms = ? WHERE name = ?')
        .run(window.bucketMs, window.retentionMs, name),
    );
    counter.window = { ...window };
    return counter;
  }

  /**
   * Sets a counter's own time to live (persisted): null follows the router
   * default, 0 never expires. Restarts its idle clock, as a write does: a
   * TTL shorter than the time the counter has already been idle must not
   * delete it the moment it is set.
   */
  async setTtl(name: string, ttlMs: number | null): Promise<CounterInfo> {
    const counter = this.counters.get(name);
    if (counter === undefined) throw new TallyError(ErrorCode.notFound, `counter "${name}" does not exist`);
    assert(ttlMs === null || (Number.isSafeInteger(ttlMs) && ttlMs >= 0), `ttl ${ttlMs}`);
    this.write(() => this.db.prepare('UPDATE counters SET ttl_ms = ? WHERE name = ?').run(ttlMs, name));
    counter.ttlMs = ttlMs;
    counter.lastWriteMonotonicMs = this.monotonicNow();
    return counter;
  }

  /**
   * Every counter, in creation order, as a live iterator: it survives
   * creations (visited at the end) and deletions (skipped) between steps,
   * so a sweep can walk it a slice at a time.
   */
  liveCounters(): IterableIterator<CounterInfo> {
    return this.counters.values();
  }

  /** Turns heat-driven growth on or off for one counter (persisted). */
  async setAutoscale(name: string, autoscale: boolean): Promise<CounterInfo> {
    const counter = this.counters.get(name);
    if (counter === undefined) throw new TallyError(ErrorCode.notFound, `counter "${name}" does not exist`);
    if (autoscale && counter.kind === 'membership')
      throw new TallyError(ErrorCode.failedPrecondition, `${name} is a membership counter: its partitions are fixed`);
    this.write(() => this.db.prepare('UPDATE counters SET autoscale = ? WHERE name = ?').run(autoscale ? 1 : 0, name));
    counter.autoscale = autoscale;
    return counter;
  }

  /**
   * Deletes a counter: its row, its shards and its growth history leave the
   * directory, and a drop per shard is recorded for the nodes, all in one
   * transaction (one fsync). Memory changes only after it commits, so from
   * then on the counter reads as never written and its name is free; its
   * shard ids are never given out again (AUTOINCREMENT remembers the
   * highest ever used, in sqlite_sequence, even across deletes and crashes).
   * NOT_FOUND when there is no such counter. Synchronous: a caller may
   * check a counter and delete it in the same turn.
   */
  async deleteCounter(name: string): Promise<CounterInfo> {
    if (!this.counters.has(name)) throw new TallyError(ErrorCode.notFound, `counter "${name}" does not exist`);
    return (await this.deleteCounters([name]))[0]!;
  }

  /**
   * Deletes counters that exist, all in one transaction (one fsync: TTL
   * expiry deletes many at once); names not in the directory are skipped.
   * Returns the counters deleted.
   */
  async deleteCounters(names: readonly string[]): Promise<CounterInfo[]> {
    const counters = [...new Set(names)].flatMap((name) => this.counters.get(name) ?? []);
    if (counters.length === 0) return [];
    const createdMs = this.now();
    const tasks: ShardTask[] = counters.flatMap((counter) =>
      counter.shards.map((shard): ShardTask => ({
        shardId: shard.shardId,
        pairIndex: shard.pairIndex,
        kind: 'drop',
        generation: 0,
        createdMs,
      })),
    );
    this.transaction(() => {
      for (const { name } of counters) {
        this.deleteStatements.counter.run(name);
        this.deleteStatements.shards.run(name);
        this.deleteStatements.growths.run(name);
        this.deleteStatements.clearKeys.run(name);
      }
      // A drop replaces a clear still owed: it frees everything anyway.
      for (const task of tasks) this.upsertShardTask(task);
    })();
    for (const counter of counters) {
      this.counters.delete(counter.name);
      for (const shard of counter.shards) this.shardsPerPair[shard.pairIndex]!--;
      this.totalShardCount -= counter.shards.length;
    }
    for (const task of tasks) this.shardTasks.set(task);
    return counters;
  }

  /** Inside a transaction: the one task owed for its shard from now on. */
  private upsertShardTask(task: ShardTask): void {
    this.upsertShardTaskStatement.run(task.shardId, task.pairIndex, task.kind, task.generation, task.createdMs);
  }

  /**
   * Clears a counter: bumps its generation, the cut, in one transaction
   * with a clear task per shard and, when keyed, the key. From the commit
   * on, every read and write the router sends carries the new generation:
   * shards that have not been cleared yet read as empty, and a write sent
   * before the cut is cleared away wherever it lands after the shard's
   * clear. A key seen within windowMs (for this counter) answers the clear
   * it made, applied=false, and changes nothing. NOT_FOUND when there is no
   * such counter.
   */
  async clearCounter(name: string, key: Buffer, windowMs: number): Promise<ClearOutcome> {
    const counter = this.counters.get(name);
    if (counter === undefined) throw new TallyError(ErrorCode.notFound, `counter "${name}" does not exist`);
    const nowMs = this.now();
    if (key.length > 0) {
      const seen = this.db
        .prepare('SELECT generation FROM clear_keys WHERE counter = ? AND idem_key = ? AND cleared_ms > ?')
        .pluck(true)
        .get(name, key, nowMs - windowMs) as number | undefined;
      if (seen !== undefined) return { counter, generation: seen, applied: false };
    }
    const generation = counter.generation + 1;
    const tasks: ShardTask[] = counter.shards.map((shard) => ({
      shardId: shard.shardId,
      pairIndex: shard.pairIndex,
      kind: 'clear',
      generation,
      createdMs: nowMs,
    }));
    this.transaction(() => {
      this.db.prepare('UPDATE counters SET generation = ? WHERE name = ?').run(generation, name);
      for (const task of tasks) this.upsertShardTask(task);
      if (key.length > 0) {
        this.db
          .prepare(
            'INSERT INTO clear_keys (counter, idem_key, generation, cleared_ms) VALUES (?, ?, ?, ?) ON CONFLICT (counter, idem_key) DO UPDATE SET generation = excluded.generation, cleared_ms = excluded.cleared_ms',
          )
          .run(name, key, generation, nowMs);
      }
      // Keys past the window go a slice at a time: clears are rare, this keeps the table bounded by the window.
      this.db
        .prepare('DELETE FROM clear_keys WHERE rowid IN (SELECT rowid FROM clear_keys WHERE cleared_ms <= ? LIMIT 1000)')
        .run(nowMs - windowMs);
    })();
    counter.generation = generation;
    for (const task of tasks) this.shardTasks.set(task);
    return { counter, generation, applied: true };
  }

  /** Drops and clears nodes still owe, oldest shard first. */
  pendingShardTasks(): ShardTask[] {
    return this.shardTasks.all();
  }

  /** See ShardTaskTable.forRound. */
  shardTasksForRound(perPairMax: number, skipPair: (pairIndex: number) => boolean): ShardTask[] {
    return this.shardTasks.forRound(perPairMax, skipPair, this.pairs.length);
  }

  /** The task owed for one shard, if any. */
  shardTask(shardId: number): ShardTask | undefined {
    return this.shardTasks.get(shardId);
  }

  get pendingShardTaskCount(): number {
    return this.shardTasks.size;
  }

  /**
   * Forgets tasks their node has confirmed (durable before it returns): only
   * as they were sent, so a newer clear or a drop recorded meanwhile stays owed.
   */
  async completeShardTasks(confirmed: readonly ShardTask[]): Promise<void> {
    const done = confirmed.filter((task) => this.shardTasks.isOwedAsSent(task));
    if (done.length === 0) return;
    this.transaction(() => {
      const remove = this.db.prepare('DELETE FROM shard_tasks WHERE shard_id = ? AND kind = ? AND generation = ?');
      for (const task of done) remove.run(task.shardId, task.kind, task.generation);
    })();
    for (const task of done) this.shardTasks.delete(task.shardId);
  }

  get pendingShardTaskCounts(): Readonly<Record<ShardTask['kind'], number>> {
    return this.shardTasks.countsByKind;
  }

  pair(pairIndex: number): PairInfo {
    const pair = this.pairs[pairIndex];
    if (pair === undefined) throw new Error(`no pair ${pairIndex}`);
    return pair;
  }

  /** Persists a change to a pair (roles, epoch, sync state, identities), fsync'd, then publishes it. */
  async updatePair(pairIndex: number, update: PairUpdate): Promise<PairInfo> {
    const pair = this.pair(pairIndex);
    const next = nextPairState(pair, update);
    this.write(() =>
      this.db
        .prepare(
          'UPDATE pairs SET primary_addr = ?, follower_addr = ?, epoch = ?, in_sync = ?, primary_id = ?, follower_id = ?, acked_lsn = ?, legacy = ?, replaced = ?, draining = ?, config_version = ? WHERE pair_index = ?',
        )
        .run(
          next.primary,
          next.follower,
          next.epoch,
          next.inSync ? 1 : 0,
          next.primaryId,
          next.followerId,
          next.ackedLsn,
          next.legacy ? 1 : 0,
          next.replaced ? 1 : 0,
          next.draining ? 1 : 0,
          next.configVersion,
          pairIndex,
        ),
    );
    Object.assign(pair, next);
    return pair;
  }

  /**
   * Runs `write` (a statement or a transaction): a failure leaves the file as
   * it was and memory is changed only after it returns; a full disk is
   * RESOURCE_EXHAUSTED, a failing one UNAVAILABLE (storageError).
   */
  private write<T>(write: () => T): T {
    try {
      return write();
    } catch (error) {
      throw storageError(error, 'router');
    }
  }

  /** db.transaction, its failures mapped as write's. */
  private transaction<T>(body: () => T): () => T {
    const run = this.db.transaction(body);
    return () => this.write(run);
  }

  async addPair(addresses: PairAddresses): Promise<PairInfo> {
    checkPairAddable(addresses, (address) => this.pairOf(address));
    const pairIndex = this.pairs.length;
    this.write(() =>
      this.db
        .prepare('INSERT INTO pairs (pair_index, primary_addr, follower_addr, epoch, legacy, added_online) VALUES (?, ?, ?, 1, 0, 1)')
        .run(pairIndex, addresses.primary, addresses.follower),
    );
    const pair: PairInfo = {
      pairIndex,
      primary: addresses.primary,
      follower: addresses.follower,
      epoch: 1n,
      inSync: false,
      primaryId: '',
      followerId: '',
      ackedLsn: 0n,
      legacy: false,
      replaced: false,
      addedOnline: true,
      draining: false,
      configVersion: 0n,
    };
    this.pairs.push(pair);
    this.shardsPerPair.push(0);
    return pair;
  }

  async setPairDraining(pairIndex: number, draining: boolean): Promise<PairInfo> {
    const pair = this.pair(pairIndex);
    if (draining) checkDrainable(pair, this.pairs);
    return this.updatePair(pairIndex, { draining });
  }

  shardCountOfPair(pairIndex: number): number {
    return this.shardsPerPair[pairIndex] ?? 0;
  }

  /** The pair whose primary or follower is at address, or undefined. */
  pairOf(address: string): PairInfo | undefined {
    return this.pairs.find((pair) => pair.primary === address || pair.follower === address);
  }

  allPairs(): readonly PairInfo[] {
    return this.pairs;
  }

  get counterCount(): number {
    return this.counters.size;
  }

  /** Shards over all counters. */
  get shardCount(): number {
    return this.totalShardCount;
  }

  /** One router owns the file: its copy is the directory. */
  get fresh(): boolean {
    return true;
  }

  /** No presence to share: the file is this router's alone. */
  liveRouterIds(): readonly string[] {
    return [];
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }
}
