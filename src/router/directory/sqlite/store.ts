// The embedded counter directory: one router, its directory in SQLite
// (fsync'd before a new shard receives anything, so a shard id is never
// reused, not even after its counter is deleted) and in memory for the hot
// path. Each change runs its SQL first and applies to the model after the
// commit, so a failure leaves memory as the rows are. See contract.ts for
// the contract, schema.ts for the file.
import assert from 'node:assert';
import type Database from 'better-sqlite3';
import { ErrorCode, TallyError, monotonicNowMs, storageError, type MonotonicClock, type WindowSetting } from '../../../wire/index.ts';
import {
  counterKinds,
  defaultDirectoryLimits,
  type ClearOutcome,
  type CounterInfo,
  type DeleteOptions,
  type Tombstone,
  type CounterKind,
  type Directory,
  type DirectoryLimits,
  type ListedCounterRow,
  type NameRange,
  type PairAddresses,
  type PairInfo,
  type PairUpdate,
  type ShardInfo,
  type ShardTask,
} from '../contract.ts';
import { DirectoryModel, newPair, type NewCounter } from '../model.ts';
import { snapshotFormat, snapshotVersion, type DirectorySnapshot } from '../snapshot.ts';
import { ModelBackedDirectory } from '../store-base.ts';
import { openDirectoryFile, pairOfRow, rowOfPair, selectPairs, upsertPair, type PairRow } from './schema.ts';

export class SqliteDirectory extends ModelBackedDirectory implements Directory {
  private readonly statements: ReturnType<typeof prepareStatements>;

  private constructor(
    private readonly db: Database.Database,
    configuredPairs: readonly PairAddresses[],
    private readonly now: () => number,
    limits: DirectoryLimits,
    monotonicNow: MonotonicClock,
  ) {
    super(new DirectoryModel(limits, monotonicNow));
    this.statements = prepareStatements(db);
    this.loadPairs(configuredPairs);
    this.loadCounters();
    this.loadShardTasks();
    this.loadTombstones();
    this.warnings.push(...this.model.capWarnings());
  }

  static open(
    dataDir: string,
    configuredPairs: readonly PairAddresses[],
    // eslint-disable-next-line no-restricted-properties -- the clock of stored rows (creation, growth, clear times); the router passes a steady one
    now: () => number = Date.now,
    limits: DirectoryLimits = defaultDirectoryLimits,
    monotonicNow: MonotonicClock = monotonicNowMs,
  ): SqliteDirectory {
    const db = openDirectoryFile(dataDir);
    try {
      return new SqliteDirectory(db, configuredPairs, now, limits, monotonicNow);
    } catch (error) {
      db.close();
      throw error;
    }
  }

  // ---- Loading ---------------------------------------------------------------

  /**
   * The stored pairs against --pairs (the model's rule), then the configured
   * pairs the file lacks registered. Pairs added online may be missing from
   * --pairs; any other missing pair is a configuration mistake.
   */
  private loadPairs(configuredPairs: readonly PairAddresses[]): void {
    const stored = (this.db.prepare(selectPairs).safeIntegers(true).all() as PairRow[]).map(pairOfRow);
    if (stored.length > configuredPairs.length && stored.slice(configuredPairs.length).some((pair) => !pair.addedOnline)) {
      throw new TallyError(
        ErrorCode.failedPrecondition,
        `the directory knows ${stored.length} node pairs but only ${configuredPairs.length} are configured`,
      );
    }
    for (const pair of stored) this.model.putPair(pair);
    this.warnings.push(...this.model.checkConfiguredPairs(configuredPairs));
    for (const pair of stored.slice(configuredPairs.length))
      this.warnings.push(
        `pair ${pair.pairIndex} (${pair.primary}, ${pair.follower}) was added online and is not in --pairs: using the directory's`,
      );
    const registered = configuredPairs.slice(stored.length).map((addresses, index) => newPair(stored.length + index, addresses, false));
    this.transaction(() => {
      for (const pair of registered) this.statements.upsertPair.run(...rowOfPair(pair));
    })();
    for (const pair of registered) this.model.putPair(pair);
  }

  private loadTombstones(): void {
    const rows = this.db.prepare('SELECT name, incarnation, deleted_ms FROM tombstones').all() as {
      name: string;
      incarnation: number;
      deleted_ms: number;
    }[];
    for (const row of rows) this.tombstoneTable.set(row.name, { name: row.name, incarnation: row.incarnation, deletedMs: row.deleted_ms });
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
    for (const row of counterRows) {
      if (!counterKinds.includes(row.kind as CounterKind))
        throw new TallyError(ErrorCode.internal, `directory: counter ${row.name} has unknown kind ${row.kind}`);
      this.model.addCounter({
        name: row.name,
        kind: row.kind as CounterKind,
        window: { bucketMs: row.window_bucket_ms, retentionMs: row.window_retention_ms },
        createdMs: row.created_ms,
        autoscale: row.autoscale === 1,
        generation: row.generation,
        ttlMs: row.ttl_ms,
      });
    }
    const growthRows = this.db.prepare('SELECT counter, previous_shard_count, grown_ms FROM growths ORDER BY rowid').all() as {
      counter: string;
      previous_shard_count: number;
      grown_ms: number;
    }[];
    for (const row of growthRows) {
      const counter = this.model.get(row.counter);
      if (counter !== undefined) this.model.addGrowth(counter, { previousShardCount: row.previous_shard_count, grownMs: row.grown_ms });
    }
    const shardRows = this.db
      .prepare('SELECT shard_id, counter, shard_index, pair_index FROM shards ORDER BY counter, shard_index')
      .all() as { shard_id: number; counter: string; shard_index: number; pair_index: number }[];
    const pairCount = this.model.allPairs().length;
    for (const row of shardRows) {
      const counter = this.model.get(row.counter);
      if (counter === undefined || row.shard_index !== counter.shards.length || row.pair_index >= pairCount) {
        throw new TallyError(ErrorCode.internal, `directory is inconsistent at shard ${row.shard_id} of ${row.counter}`);
      }
      this.model.addShards(counter, [{ shardIndex: row.shard_index, shardId: row.shard_id, pairIndex: row.pair_index }]);
    }
    for (const row of counterRows) {
      if (this.model.get(row.name)!.shards.length !== row.shard_count) {
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
      if ((row.kind !== 'drop' && row.kind !== 'clear') || row.pair_index >= this.model.allPairs().length)
        throw new TallyError(ErrorCode.internal, `directory: shard task ${row.kind} of shard ${row.shard_id} is not one this router knows`);
      this.model.setTask({
        shardId: row.shard_id,
        pairIndex: row.pair_index,
        kind: row.kind,
        generation: row.generation,
        createdMs: row.created_ms,
      });
    }
  }

  // ---- Reads beyond memory ----------------------------------------------------

  async exportSnapshot(): Promise<DirectorySnapshot> {
    const highest = this.db.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'shards'").pluck(true).get() as number | undefined;
    return {
      format: snapshotFormat,
      version: snapshotVersion,
      exportedMs: this.now(),
      shardIdNext: (highest ?? 0) + 1,
      ...this.model.snapshotParts(),
    };
  }

  /** One router: nothing changes the directory behind this memory's back. */
  async readBarrier(): Promise<void> {}

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
        ? this.statements.scanUnbounded.all(range.after, range.from, limit)
        : this.statements.scanBounded.all(range.after, range.from, range.before, limit)
    ) as { name: string; kind: string; shard_count: number; ttl_ms: number | null }[];
    return rows.map((row) => ({ name: row.name, kind: row.kind as CounterKind, shardCount: row.shard_count, ttlMs: row.ttl_ms }));
  }

  // ---- Counters ---------------------------------------------------------------

  /** See Directory.getOrCreate. */
  async getOrCreate(name: string, kind: CounterKind = 'total', partitions = 1): Promise<CounterInfo> {
    const existing = this.model.resolve(name, kind);
    if (existing !== undefined) return existing;
    this.create([name], kind, partitions);
    return this.model.get(name)!;
  }

  /**
   * See Directory.getOrCreateMany: all of the call's new counters in one
   * transaction, one fsync. Synchronous from the first check to the last
   * change in memory: concurrent calls naming the same new counter get one.
   */
  async getOrCreateMany(names: readonly string[], kind: CounterKind = 'total', partitions = 1): Promise<CounterInfo[]> {
    const missing = this.model.missing(names, kind);
    if (missing.size > 0) this.create([...missing], kind, partitions);
    return this.model.inOrder(names);
  }

  /** See Directory.resolveSlots. */
  async resolveSlots(names: readonly string[], kind: CounterKind, slots: Int32Array): Promise<void> {
    const missing = this.model.missing(names, kind);
    if (missing.size > 0) this.create([...missing], kind, 1);
    this.model.slotsOf(names, slots);
  }

  /** Creates counters that do not exist, in one transaction; memory changes only after it commits. */
  private create(names: readonly string[], kind: CounterKind, partitions: number): void {
    this.model.checkCreation(names.length, kind, partitions);
    const createdMs = this.now();
    // Placement sees the shards placed earlier in this transaction.
    const totals = this.model.placementTotals();
    const created: [NewCounter, ShardInfo[]][] = [];
    this.transaction(() => {
      for (const name of names) {
        assert(!this.model.has(name), `counter ${name} exists`);
        const fields = this.model.newCounter(name, kind, createdMs, partitions);
        this.statements.insertCounter.run(name, fields.shardCount, createdMs, kind, fields.autoscale ? 1 : 0);
        created.push([fields, this.insertShards(name, [], fields.shardCount, totals)]);
      }
    })();
    for (const [fields, shards] of created) this.model.addShards(this.model.addCounter(fields), shards);
  }

  /** Grows a counter's shard set. No data moves; old shards stay in every sum. */
  async setShards(name: string, shardCount: number): Promise<{ previousShardCount: number; counter: CounterInfo }> {
    const counter = this.model.checkShardCountChange(name, shardCount);
    const previousShardCount = counter.shards.length;
    if (shardCount > previousShardCount) {
      this.model.checkShardsTotal(shardCount - previousShardCount);
      const growth = { previousShardCount, grownMs: this.now() };
      const created = this.transaction(() => {
        this.statements.insertGrowth.run(name, previousShardCount, shardCount, growth.grownMs);
        const shards = this.insertShards(name, counter.shards, shardCount - previousShardCount, this.model.placementTotals());
        this.statements.updateShardCount.run(shardCount, name);
        return shards;
      })();
      this.model.addGrowth(counter, growth);
      // One router: nobody else must see a growth first.
      this.model.addShards(counter, created);
    }
    return { previousShardCount, counter };
  }

  /** Inside a transaction: places and inserts the shard rows; the caller keeps shard_count and applies after commit. */
  private insertShards(name: string, held: readonly ShardInfo[], addCount: number, totals: number[]): ShardInfo[] {
    return this.model.place(held, addCount, totals).map((pairIndex, index) => {
      const shardIndex = held.length + index;
      const result = this.statements.insertShard.run(name, shardIndex, pairIndex, this.now());
      return { shardIndex, shardId: Number(result.lastInsertRowid), pairIndex };
    });
  }

  /** Sets a total counter's window (persisted); nodes learn it with the next increment. */
  async setWindow(name: string, window: WindowSetting): Promise<CounterInfo> {
    const counter = this.model.existing(name);
    this.model.checkWindowSettable(counter);
    this.write(() => this.statements.updateWindow.run(window.bucketMs, window.retentionMs, name));
    this.model.updateCounter(counter, { window });
    return counter;
  }

  /**
   * Sets a counter's own time to live (persisted): null follows the router
   * default, 0 never expires. Restarts its idle clock, as a write does: a
   * TTL shorter than the time the counter has already been idle must not
   * delete it the moment it is set.
   */
  async setTtl(name: string, ttlMs: number | null): Promise<CounterInfo> {
    const counter = this.model.existing(name);
    assert(ttlMs === null || (Number.isSafeInteger(ttlMs) && ttlMs >= 0), `ttl ${ttlMs}`);
    this.write(() => this.statements.updateTtl.run(ttlMs, name));
    this.model.updateCounter(counter, { ttlMs });
    this.model.touch(counter);
    return counter;
  }

  /** Turns heat-driven growth on or off for one counter (persisted). */
  async setAutoscale(name: string, autoscale: boolean): Promise<CounterInfo> {
    const counter = this.model.existing(name);
    this.model.checkAutoscaleSettable(counter, autoscale);
    this.write(() => this.statements.updateAutoscale.run(autoscale ? 1 : 0, name));
    this.model.updateCounter(counter, { autoscale });
    return counter;
  }

  /**
   * Deletes a counter (see deleteCounters). NOT_FOUND when there is no such
   * counter. Synchronous: a caller may check a counter and delete it in the
   * same turn.
   */
  async deleteCounter(name: string): Promise<CounterInfo> {
    this.model.existing(name);
    return (await this.deleteCounters([name]))[0]!;
  }

  /**
   * Deletes counters that exist: their rows, shards and growth history leave
   * the directory and a drop per shard is recorded for the nodes, all in one
   * transaction (one fsync: TTL expiry deletes many at once). Memory changes
   * only after it commits; the shard ids are never given out again
   * (AUTOINCREMENT remembers the highest ever used, in sqlite_sequence,
   * even across deletes and crashes). Names not in the directory are skipped.
   */
  async deleteCounters(names: readonly string[], options: DeleteOptions = {}): Promise<CounterInfo[]> {
    const counters = [...new Set(names)].flatMap((name) => this.model.get(name) ?? []);
    if (counters.length === 0) return [];
    const createdMs = this.now();
    const tombstones =
      options.tombstone === 'next'
        ? this.nextTombstones(
            counters.map((counter) => counter.name),
            createdMs,
          )
        : [];
    this.commitDelete(counters, tombstones, createdMs);
    return counters;
  }

  /** See Directory.deleteUpTo. */
  async deleteUpTo(name: string, incarnation: number): Promise<{ deleted: CounterInfo | undefined; applied: boolean }> {
    if ((this.tombstoneTable.get(name)?.incarnation ?? 0) >= incarnation) return { deleted: undefined, applied: false };
    const counter = this.model.get(name);
    const deletedMs = this.now();
    this.commitDelete(counter === undefined ? [] : [counter], [{ name, incarnation, deletedMs }], deletedMs);
    return { deleted: counter, applied: true };
  }

  /** See Directory.pruneTombstones. */
  async pruneTombstones(retentionMs: number): Promise<number> {
    const gone = this.prunable(this.now() - retentionMs);
    if (gone.length === 0) return 0;
    this.transaction(() => {
      for (const tombstone of gone) this.statements.deleteTombstone.run(tombstone.name, tombstone.incarnation);
    })();
    for (const tombstone of gone) this.tombstoneTable.delete(tombstone.name);
    return gone.length;
  }

  /** One transaction: the counters' rows go, a drop per shard is owed, the tombstones are recorded; then memory. */
  private commitDelete(counters: readonly CounterInfo[], tombstones: readonly Tombstone[], createdMs: number): void {
    const tasks: ShardTask[] = counters.flatMap((counter) =>
      counter.shards.map((shard): ShardTask => ({
        shardId: shard.shardId,
        pairIndex: shard.pairIndex,
        kind: 'drop',
        generation: 0,
        createdMs,
      })),
    );
    const { deleteCounter, deleteShards, deleteGrowths, deleteClearKeys } = this.statements;
    this.transaction(() => {
      for (const { name } of counters)
        for (const statement of [deleteCounter, deleteShards, deleteGrowths, deleteClearKeys]) statement.run(name);
      // A drop replaces a clear still owed: it frees everything anyway.
      for (const task of tasks) this.upsertShardTask(task);
      for (const tombstone of tombstones) this.statements.upsertTombstone.run(tombstone.name, tombstone.incarnation, tombstone.deletedMs);
    })();
    for (const counter of counters) this.model.removeCounter(counter.name);
    for (const task of tasks) this.model.setTask(task);
    for (const tombstone of tombstones) this.tombstoneTable.set(tombstone.name, tombstone);
  }

  /** Inside a transaction: the one task owed for its shard from now on. */
  private upsertShardTask(task: ShardTask): void {
    this.statements.upsertShardTask.run(task.shardId, task.pairIndex, task.kind, task.generation, task.createdMs);
  }

  /** See Directory.clearCounter: a key seen within windowMs answers the clear it made. */
  async clearCounter(name: string, key: Buffer, windowMs: number): Promise<ClearOutcome> {
    const counter = this.model.existing(name);
    const nowMs = this.now();
    if (key.length > 0) {
      const seen = this.statements.selectClearKey.get(name, key, nowMs - windowMs) as number | undefined;
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
      this.statements.updateGeneration.run(generation, name);
      for (const task of tasks) this.upsertShardTask(task);
      if (key.length > 0) this.statements.upsertClearKey.run(name, key, generation, nowMs);
      // Keys past the window go a slice at a time: clears are rare, this keeps the table bounded by the window.
      this.statements.pruneClearKeys.run(nowMs - windowMs);
    })();
    this.model.updateCounter(counter, { generation });
    for (const task of tasks) this.model.setTask(task);
    return { counter, generation, applied: true };
  }

  /**
   * Forgets tasks their node has confirmed (durable before it returns): only
   * as they were sent, so a newer clear or a drop recorded meanwhile stays owed.
   */
  async completeShardTasks(confirmed: readonly ShardTask[]): Promise<void> {
    const done = confirmed.filter((task) => this.model.shardTasks.isOwedAsSent(task));
    if (done.length === 0) return;
    this.transaction(() => {
      for (const task of done) this.statements.deleteShardTask.run(task.shardId, task.kind, task.generation);
    })();
    for (const task of done) this.model.deleteTask(task.shardId);
  }

  // ---- Pairs --------------------------------------------------------------------

  /** Persists a change to a pair (roles, epoch, sync state, identities), fsync'd, then publishes it. */
  async updatePair(pairIndex: number, update: PairUpdate): Promise<PairInfo> {
    const next = this.model.nextPair(pairIndex, update);
    this.write(() => this.statements.upsertPair.run(...rowOfPair(next)));
    return this.model.putPair(next);
  }

  async addPair(addresses: PairAddresses): Promise<PairInfo> {
    this.model.checkPairAddable(addresses);
    const pair = newPair(this.model.allPairs().length, addresses, true);
    this.write(() => this.statements.upsertPair.run(...rowOfPair(pair)));
    return this.model.putPair(pair);
  }

  async setPairDraining(pairIndex: number, draining: boolean): Promise<PairInfo> {
    this.model.checkDrainable(pairIndex, draining);
    return this.updatePair(pairIndex, { draining });
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

  // ---- Writing ------------------------------------------------------------------

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
}

/** Prepared once: a TTL slice upserts thousands of tasks (50 counters of up to 64 shards) in one transaction. */
function prepareStatements(db: Database.Database) {
  // Both scans walk the primary key's index from the start of the range: a page costs its rows.
  const scan = 'SELECT name, kind, shard_count, ttl_ms FROM counters WHERE name > ? AND name >= ?';
  return {
    upsertPair: db.prepare(upsertPair),
    insertCounter: db.prepare('INSERT INTO counters (name, shard_count, created_ms, kind, autoscale) VALUES (?, ?, ?, ?, ?)'),
    insertShard: db.prepare('INSERT INTO shards (counter, shard_index, pair_index, created_ms) VALUES (?, ?, ?, ?)'),
    insertGrowth: db.prepare('INSERT INTO growths (counter, previous_shard_count, new_shard_count, grown_ms) VALUES (?, ?, ?, ?)'),
    updateShardCount: db.prepare('UPDATE counters SET shard_count = ? WHERE name = ?'),
    updateWindow: db.prepare('UPDATE counters SET window_bucket_ms = ?, window_retention_ms = ? WHERE name = ?'),
    updateTtl: db.prepare('UPDATE counters SET ttl_ms = ? WHERE name = ?'),
    updateAutoscale: db.prepare('UPDATE counters SET autoscale = ? WHERE name = ?'),
    updateGeneration: db.prepare('UPDATE counters SET generation = ? WHERE name = ?'),
    scanBounded: db.prepare(`${scan} AND name < ? ORDER BY name LIMIT ?`),
    scanUnbounded: db.prepare(`${scan} ORDER BY name LIMIT ?`),
    upsertShardTask: db.prepare(
      'INSERT INTO shard_tasks (shard_id, pair_index, kind, generation, created_ms) VALUES (?, ?, ?, ?, ?) ON CONFLICT (shard_id) DO UPDATE SET kind = excluded.kind, generation = excluded.generation, created_ms = excluded.created_ms',
    ),
    deleteShardTask: db.prepare('DELETE FROM shard_tasks WHERE shard_id = ? AND kind = ? AND generation = ?'),
    deleteCounter: db.prepare('DELETE FROM counters WHERE name = ?'),
    deleteShards: db.prepare('DELETE FROM shards WHERE counter = ?'),
    deleteGrowths: db.prepare('DELETE FROM growths WHERE counter = ?'),
    deleteClearKeys: db.prepare('DELETE FROM clear_keys WHERE counter = ?'),
    upsertTombstone: db.prepare(
      'INSERT INTO tombstones (name, incarnation, deleted_ms) VALUES (?, ?, ?) ON CONFLICT (name) DO UPDATE SET incarnation = excluded.incarnation, deleted_ms = excluded.deleted_ms',
    ),
    deleteTombstone: db.prepare('DELETE FROM tombstones WHERE name = ? AND incarnation = ?'),
    selectClearKey: db.prepare('SELECT generation FROM clear_keys WHERE counter = ? AND idem_key = ? AND cleared_ms > ?').pluck(true),
    upsertClearKey: db.prepare(
      'INSERT INTO clear_keys (counter, idem_key, generation, cleared_ms) VALUES (?, ?, ?, ?) ON CONFLICT (counter, idem_key) DO UPDATE SET generation = excluded.generation, cleared_ms = excluded.cleared_ms',
    ),
    pruneClearKeys: db.prepare('DELETE FROM clear_keys WHERE rowid IN (SELECT rowid FROM clear_keys WHERE cleared_ms <= ? LIMIT 1000)'),
  };
}
