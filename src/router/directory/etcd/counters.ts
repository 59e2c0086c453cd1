// Counters created and deleted on etcd. Creation: calls arriving together
// share one transaction (each call all or nothing), each new name's key
// compared as absent, with shard ids from a block this router reserved from
// shard-id-next. Deletes: counters (a drop per shard, and for a DeleteCounter
// in a region that peers the name's tombstone, in the same transaction), a
// peer region's delete up to an incarnation, and tombstones past retention,
// each conditioned on the keys it read, so routers racing on one name delete
// it once.
import assert from 'node:assert';
import type { IRequestOp } from 'etcd3';
import { ErrorCode, TallyError, newCountersPerCallMax } from '../../../wire/index.ts';
import { directoryChangeAttemptsMax, etcdTxnBytesMax, etcdTxnOpsMax, shardIdsPerReservation } from '../../../common/index.ts';
import type { CounterInfo, CounterKind, DeleteOptions, ShardTask, Tombstone } from '../contract.ts';
import type { DirectoryModel } from '../model.ts';
import { staleError, storeError } from './client.ts';
import {
  counterKeyPrefix,
  shardIdNextKey,
  encodeCounter,
  encodeTask,
  encodeTombstone,
  taskKeyPrefix,
  tombstoneKeyPrefix,
  type StoredCounter,
} from './schema.ts';
import type { EtcdMirror } from './mirror.ts';
import type { CommitOutcome, EtcdTransactions } from './transactions.ts';

interface CreationRequest {
  names: string[];
  kind: CounterKind;
  partitions: number;
  attempts: number;
  resolve: () => void;
  reject: (error: Error) => void;
}

export interface CreationContext {
  mirror: EtcdMirror;
  txns: EtcdTransactions;
  /** The clock of stored data (createdMs). */
  now: () => number;
  staleReason: () => string | undefined;
  assertFresh: () => void;
}

export class CounterCreation {
  private queue: CreationRequest[] = [];
  private scheduled = false;
  /** Shard ids this router reserved and has not handed out: [next, end). Lost at close, never reused. */
  private readonly reserved = { next: 0, end: 0 };

  constructor(private readonly context: CreationContext) {}

  /**
   * See Directory.getOrCreateMany. Every name is checked against memory
   * before anything is created; the new ones join this router's next
   * creation transaction (calls arriving together share one), which
   * compares each name's key as absent: a name another router created
   * first fails the compare, and once the watch brings that counter here
   * it is used (or refused, if of another kind).
   */
  async getOrCreateMany(names: readonly string[], kind: CounterKind, partitions: number): Promise<CounterInfo[]> {
    const { model } = this.context.mirror;
    // A write resolves its counters here: not on a view this router cannot vouch for.
    this.context.assertFresh();
    // Bounded: each round either finds every counter or creates the missing ones.
    for (let attempt = 1; ; attempt++) {
      const missing = model.missing(names, kind);
      if (missing.size === 0) return model.inOrder(names);
      if (attempt > directoryChangeAttemptsMax)
        throw new TallyError(
          ErrorCode.unavailable,
          `creating ${missing.size} counters: they were deleted as soon as created, ${attempt - 1} times`,
        );
      model.checkCreation(missing.size, kind, partitions);
      this.context.assertFresh();
      await this.request([...missing], kind, partitions);
    }
  }

  /** Fails every queued call (the directory is closing). */
  close(error: Error): void {
    for (const request of this.queue.splice(0)) request.reject(error);
  }

  /**
   * Inside the lane: at least `count` reserved shard ids at hand. Takes a
   * block from shard-id-next in one transaction conditioned on its
   * revision, so two routers never reserve the same ids; what was left of
   * the previous block is dropped (never handed out).
   */
  async reserveShardIds(count: number): Promise<void> {
    if (this.reserved.end - this.reserved.next >= count) return;
    const size = Math.max(count, shardIdsPerReservation);
    const { txns, mirror } = this.context;
    for (let attempt = 1; ; attempt++) {
      this.context.assertFresh();
      const first = mirror.shardIdNext;
      if ((await txns.commit([shardIdNextKey], [txns.put(shardIdNextKey, Buffer.from(String(first + size)))])) === 'committed') {
        this.reserved.next = first;
        this.reserved.end = first + size;
        return;
      }
      if (attempt >= directoryChangeAttemptsMax)
        throw new TallyError(ErrorCode.unavailable, `reserving shard ids: other routers reserved first ${attempt} times`);
    }
  }

  /**
   * Hands out reserved shard ids, for good: once in a transaction whose
   * outcome may be unknown, an id is never offered again.
   */
  takeShardIds(count: number): number[] {
    assert(this.reserved.end - this.reserved.next >= count, 'shard ids reserved before they are taken');
    const ids: number[] = [];
    for (let index = 0; index < count; index++) ids.push(this.reserved.next++);
    return ids;
  }

  /** Resolves once every name exists in memory (of whatever kind: the caller checks). */
  private request(names: string[], kind: CounterKind, partitions: number): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queue.push({ names, kind, partitions, attempts: 0, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    void this.context.txns.lane.run(() => this.drain());
  }

  /** Creates what the queued calls need, several calls per transaction; each call all or nothing. */
  private async drain(): Promise<void> {
    try {
      await this.drainQueue();
    } catch (error) {
      // Shard ids could not be reserved: nothing was created.
      for (const request of this.queue.splice(0)) request.reject(storeError(error));
    } finally {
      this.scheduled = false;
      // A call may have queued after the last round, while this one was finishing.
      if (this.queue.length > 0) this.schedule();
    }
  }

  /** One transaction per round; a round the store refuses fails its calls, others go on. */
  private async drainQueue(): Promise<void> {
    while (this.queue.length > 0) {
      const reason = this.context.staleReason();
      if (reason !== undefined) {
        const error = staleError(reason);
        for (const request of this.queue.splice(0)) request.reject(error);
        return;
      }
      await this.reserveShardIds(this.shardIdsWanted());
      const batch = this.takeBatch();
      if (batch.requests.length === 0) continue;
      let outcome: CommitOutcome;
      try {
        outcome = await this.context.txns.commit(batch.read, batch.ops);
      } catch (error) {
        for (const request of batch.requests) request.reject(storeError(error));
        continue;
      }
      if (outcome === 'committed') {
        for (const request of batch.requests) request.resolve();
        continue;
      }
      // Another router created some of these names first: plan again from memory.
      const again = batch.requests.filter((request) => {
        if (++request.attempts < directoryChangeAttemptsMax) return true;
        request.reject(
          new TallyError(ErrorCode.unavailable, `creating counters: other routers changed the directory first ${request.attempts} times`),
        );
        return false;
      });
      this.queue.unshift(...again);
    }
  }

  /** Shard ids the next creation batch may need (at most): the queued calls' missing names, up to a batch. */
  private shardIdsWanted(): number {
    const { model } = this.context.mirror;
    const seen = new Set<string>();
    let wanted = 0;
    for (const request of this.queue) {
      const shardCount = request.kind === 'membership' ? request.partitions : 1;
      for (const name of request.names) {
        if (model.has(name) || seen.has(name)) continue;
        seen.add(name);
        wanted += shardCount;
      }
      if (seen.size >= newCountersPerCallMax) break;
    }
    return wanted;
  }

  /**
   * Takes the queued calls one transaction can serve, in arrival order:
   * their new counters, shard ids from shard-id-next, placement as one at a
   * time would place them. A call whose names clash in kind with an earlier
   * call's stays queued, as does one the reserved ids cannot serve; one
   * past a cap fails as it would alone.
   */
  private takeBatch(): { requests: CreationRequest[]; read: string[]; ops: IRequestOp[] } {
    const { model } = this.context.mirror;
    const planned = new Map<string, CounterKind>();
    const requests: CreationRequest[] = [];
    const kept: CreationRequest[] = [];
    const read: string[] = [];
    const ops: IRequestOp[] = [];
    const totals = model.placementTotals();
    let plannedShards = 0;
    let bytes = 0;
    let full = false;
    const createdMs = this.context.now();
    for (const request of this.queue) {
      if (full) {
        kept.push(request);
        continue;
      }
      const missing = request.names.filter((name) => !model.has(name));
      if (missing.length === 0) {
        request.resolve();
        continue;
      }
      if (missing.some((name) => planned.has(name) && planned.get(name) !== request.kind)) {
        kept.push(request);
        continue;
      }
      const added = missing.filter((name) => !planned.has(name));
      const shardCount = request.kind === 'membership' ? request.partitions : 1;
      const idsLeft = this.reserved.end - this.reserved.next;
      if (planned.size + added.length > newCountersPerCallMax || added.length * shardCount > idsLeft) {
        kept.push(request);
        full = true;
        continue;
      }
      try {
        model.checkCreation(added.length, request.kind, request.partitions, { counters: planned.size, shards: plannedShards });
      } catch (error) {
        request.reject(error as Error);
        continue;
      }
      for (const name of added) {
        const fields = model.newCounter(name, request.kind, createdMs, request.partitions);
        const chosen = model.place([], fields.shardCount, totals);
        const ids = this.takeShardIds(fields.shardCount);
        const stored: StoredCounter = {
          kind: fields.kind,
          window: fields.window,
          createdMs,
          autoscale: fields.autoscale,
          generation: fields.generation,
          ttlMs: fields.ttlMs,
          shards: chosen.map((pairIndex, index): [number, number] => [ids[index]!, pairIndex]),
          writableShardCount: fields.shardCount,
          growths: [],
          clearKeys: [],
        };
        const key = counterKeyPrefix + name;
        const value = encodeCounter(name, stored);
        bytes += 2 * Buffer.byteLength(key) + value.length;
        read.push(key);
        ops.push(this.context.txns.put(key, value));
        planned.set(name, request.kind);
      }
      plannedShards += added.length * shardCount;
      requests.push(request);
      if (bytes >= etcdTxnBytesMax) full = true;
    }
    this.queue = kept;
    return { requests, read, ops };
  }
}

export interface DeletionParts {
  model: DirectoryModel;
  txns: EtcdTransactions;
  /** The store's tombstones as the watch applied them. */
  tombstones: ReadonlyMap<string, Tombstone>;
  now: () => number;
  nextTombstones(names: readonly string[], deletedMs: number): Tombstone[];
  prunable(beforeMs: number): Tombstone[];
  /** Waits until every live router has applied the last change (or its lease lapsed). */
  awaitAcknowledged(what: string): Promise<void>;
}

export class EtcdDeletion {
  constructor(private readonly parts: DeletionParts) {}

  /**
   * Deletes the counters that exist: each counter's key goes with a drop per
   * shard (and its tombstone, with `tombstone: 'next'`). As many whole
   * counters per transaction as etcdTxnOpsMax allows (one for every real
   * delete; TTL expiry hands 50 at a time): a crash between two leaves the
   * later ones to a later sweep. A counter re-created meanwhile (by another
   * router) is not this call's to delete.
   */
  async deleteCounters(names: readonly string[], options: DeleteOptions): Promise<CounterInfo[]> {
    const { model, txns } = this.parts;
    const targets = [...new Set(names)].flatMap((name) => model.get(name) ?? []);
    const deleted: CounterInfo[] = [];
    // A tombstone is one more operation (and one more key read) per counter.
    const perCounterOps = options.tombstone === 'next' ? 2 : 1;
    for (let start = 0; start < targets.length;) {
      let end = start;
      let ops = 0;
      while (end < targets.length && (end === start || ops + perCounterOps + targets[end]!.shards.length <= etcdTxnOpsMax)) {
        ops += perCounterOps + targets[end]!.shards.length;
        end++;
      }
      const chunk = targets.slice(start, end);
      start = end;
      deleted.push(
        ...(await txns.change<CounterInfo[]>('deleting counters', () => {
          const live = chunk.filter((counter) => model.same(model.get(counter.name), counter));
          if (live.length === 0) return { done: [] };
          const createdMs = this.parts.now();
          const chunkOps: IRequestOp[] = [];
          for (const counter of live) chunkOps.push(txns.remove(counterKeyPrefix + counter.name), ...this.drops(counter, createdMs));
          const tombstones =
            options.tombstone === 'next'
              ? this.parts.nextTombstones(
                  live.map((counter) => counter.name),
                  createdMs,
                )
              : [];
          for (const tombstone of tombstones) chunkOps.push(this.putTombstone(tombstone));
          const read = live.map((counter) => counterKeyPrefix + counter.name);
          for (const tombstone of tombstones) read.push(tombstoneKeyPrefix + tombstone.name);
          return { read, ops: chunkOps, result: () => live };
        })),
      );
    }
    // Every live router forgets them before the delete returns (or its lease
    // lapses): none goes on reading or writing the old shards afterwards.
    if (deleted.length > 0) await this.parts.awaitAcknowledged(`the delete of ${deleted.length} counter(s)`);
    return deleted;
  }

  /** See Directory.deleteUpTo: one transaction read on the counter's key and the tombstone's. */
  async deleteUpTo(name: string, incarnation: number): Promise<{ deleted: CounterInfo | undefined; applied: boolean }> {
    const { model, txns, tombstones } = this.parts;
    const outcome = await txns.change<{ deleted: CounterInfo | undefined; applied: boolean }>(
      `deleting ${name} up to incarnation ${incarnation}`,
      () => {
        if ((tombstones.get(name)?.incarnation ?? 0) >= incarnation) return { done: { deleted: undefined, applied: false } };
        const counter = model.get(name);
        const deletedMs = this.parts.now();
        const ops: IRequestOp[] = [this.putTombstone({ name, incarnation, deletedMs })];
        if (counter !== undefined) ops.push(txns.remove(counterKeyPrefix + name), ...this.drops(counter, deletedMs));
        return { read: [counterKeyPrefix + name, tombstoneKeyPrefix + name], ops, result: () => ({ deleted: counter, applied: true }) };
      },
    );
    if (outcome.deleted !== undefined) await this.parts.awaitAcknowledged(`the delete of ${name}`);
    return outcome;
  }

  /** See Directory.pruneTombstones: each tombstone removed only as memory holds it (a newer delete, or a counter, keeps it). */
  async pruneTombstones(beforeMs: number): Promise<number> {
    const { model, txns, tombstones } = this.parts;
    let pruned = 0;
    for (const stale of this.parts.prunable(beforeMs)) {
      const key = tombstoneKeyPrefix + stale.name;
      pruned += await txns.change<number>(`pruning the tombstone of ${stale.name}`, () => {
        const held = tombstones.get(stale.name);
        if (held === undefined || held.incarnation !== stale.incarnation || model.has(stale.name)) return { done: 0 };
        return { read: [key, counterKeyPrefix + stale.name], ops: [txns.remove(key)], result: () => 1 };
      });
    }
    return pruned;
  }

  /** A drop per shard: it replaces a clear still owed (it frees everything anyway). */
  private drops(counter: CounterInfo, createdMs: number): IRequestOp[] {
    return counter.shards.map((shard) => {
      const task: ShardTask = { shardId: shard.shardId, pairIndex: shard.pairIndex, kind: 'drop', generation: 0, createdMs };
      return this.parts.txns.put(taskKeyPrefix + task.shardId, encodeTask(task));
    });
  }

  private putTombstone(tombstone: Tombstone): IRequestOp {
    return this.parts.txns.put(tombstoneKeyPrefix + tombstone.name, encodeTombstone(tombstone.incarnation, tombstone.deletedMs));
  }
}
