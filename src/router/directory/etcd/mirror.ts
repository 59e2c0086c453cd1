// This router's copy of the etcd directory: the DirectoryModel, plus what
// only etcd's side needs (the revision memory holds of every key, live
// routers' presence, shard-id-next, counters with a growth announced).
// Memory changes only here, by applying what etcd returned (a read at one
// revision, then the watch's events in revision order), this router's own
// changes too.
import assert from 'node:assert';
import type { IEvent, IKeyValue } from 'etcd3';
import { monotonicNowMs } from '../../../wire/index.ts';
import { type Logger } from '../../../common/index.ts';
import type { CounterInfo, PairInfo, Tombstone } from '../contract.ts';
import type { DirectoryModel } from '../model.ts';
import {
  counterKeyPrefix,
  pairKeyPrefix,
  routerKeyPrefix,
  shardIdNextKey,
  taskKeyPrefix,
  tombstoneKeyPrefix,
  checkCounter,
  checkTombstone,
  checkPair,
  checkTask,
  extendsCounter,
  invalid,
  isCount,
  isObject,
  pairOfStored,
  parseId,
  parseJson,
} from './schema.ts';

/** What memory keeps of a counter besides its CounterInfo. */
export interface CounterRecord {
  createRevision: number;
  modRevision: number;
  clearKeys: readonly [string, number, number][];
  /** Real time this router first applied the counter with shards announced but not writable. */
  announcedSinceMs: number | undefined;
}

/** Shared by every counter without recent keyed clears (nearly all): memory per counter stays small. */
const noClearKeys: readonly [string, number, number][] = Object.freeze([]);

export class EtcdMirror {
  private readonly records = new Map<string, CounterRecord>();
  /** Counters with announced shards not yet writable. */
  readonly announced = new Set<string>();
  private readonly pairRevisions: number[] = [];
  /** Pairs seen before a lower index (not expected: pairs are added in order). */
  private readonly pendingPairs = new Map<number, { pair: PairInfo; modRevision: number }>();
  private readonly taskRevisions = new Map<number, number>();
  private readonly tombstoneRevisions = new Map<string, number>();
  /** Live routers (their presence keys) and the revision each has applied. */
  readonly routers = new Map<string, { seenRevision: number; modRevision: number }>();
  shardIdNext = 1;
  private shardIdNextRevision = 0;
  appliedRevision = 0;
  /** The highest revision applied that every live router must acknowledge (a growth announced, a clear, a delete, a pair out of sync). */
  ackWantedRevision = 0;
  /** The revision of the change being applied now (a deletion's, for forgetCounter). */
  private appliedRevisionInFlight = 0;

  constructor(
    readonly model: DirectoryModel,
    private readonly prefixBytes: Buffer,
    private readonly logger: Logger,
    /** After every batch applied: waiters and the presence acknowledgement. */
    private readonly onApplied: () => void,
    /** The store's tombstones by name, kept as etcd holds them. */
    private readonly tombstones: Map<string, Tombstone> = new Map(),
  ) {}

  record(name: string): CounterRecord | undefined {
    return this.records.get(name);
  }

  pairRevision(pairIndex: number): number | undefined {
    return this.pairRevisions[pairIndex];
  }

  /** Routers whose presence has not yet seen `revision`. */
  unacknowledged(revision: number): string[] {
    const behind: string[] = [];
    for (const [id, presence] of this.routers) if (presence.seenRevision < revision) behind.push(id);
    return behind;
  }

  /** Every key read at `revision`: applies the difference with memory. strict: a bad value throws (at load). */
  applySnapshot(kvs: readonly IKeyValue[], revision: number, strict: boolean): void {
    const present = new Set<string>();
    for (const kv of kvs) present.add(this.relativeKey(kv.key));
    this.appliedRevisionInFlight = revision;
    for (const relative of this.heldKeys()) if (!present.has(relative)) this.applyOne(relative, undefined, strict);
    // Creation order: liveCounters walks counters in it.
    const ordered = [...kvs].sort((left, right) => Number(left.create_revision) - Number(right.create_revision));
    for (const kv of ordered) {
      const relative = this.relativeKey(kv.key);
      if (this.revisionOf(relative) !== Number(kv.mod_revision)) this.applyOne(relative, kv, strict);
    }
    if (revision > this.appliedRevision) this.appliedRevision = revision;
    this.onApplied();
  }

  applyEvents(events: readonly IEvent[]): void {
    for (const event of events) {
      // A delete event's kv carries the revision of the delete.
      this.appliedRevisionInFlight = Number(event.kv.mod_revision);
      this.applyOne(this.relativeKey(event.kv.key), event.type === 'Put' ? event.kv : undefined, false);
      const revision = Number(event.kv.mod_revision);
      if (revision > this.appliedRevision) this.appliedRevision = revision;
    }
    this.onApplied();
  }

  /** The mod revision memory holds for a key, or undefined when memory holds no such key. */
  revisionOf(relative: string): number | undefined {
    if (relative.startsWith(counterKeyPrefix)) return this.records.get(relative.slice(counterKeyPrefix.length))?.modRevision;
    if (relative.startsWith(pairKeyPrefix)) {
      const pairIndex = Number(relative.slice(pairKeyPrefix.length));
      return this.pairRevisions[pairIndex] ?? this.pendingPairs.get(pairIndex)?.modRevision;
    }
    if (relative === shardIdNextKey) return this.shardIdNextRevision === 0 ? undefined : this.shardIdNextRevision;
    if (relative.startsWith(taskKeyPrefix)) return this.taskRevisions.get(Number(relative.slice(taskKeyPrefix.length)));
    if (relative.startsWith(routerKeyPrefix)) return this.routers.get(relative.slice(routerKeyPrefix.length))?.modRevision;
    if (relative.startsWith(tombstoneKeyPrefix)) return this.tombstoneRevisions.get(relative.slice(tombstoneKeyPrefix.length));
    return undefined;
  }

  private relativeKey(key: Buffer): string {
    assert(key.subarray(0, this.prefixBytes.length).equals(this.prefixBytes), 'a key outside the prefix');
    return key.subarray(this.prefixBytes.length).toString('utf8');
  }

  /** Every key memory holds (pairs excepted: never deleted). */
  private *heldKeys(): Generator<string> {
    for (const name of this.model.counterNames()) yield counterKeyPrefix + name;
    if (this.shardIdNextRevision > 0) yield shardIdNextKey;
    for (const shardId of this.model.shardTasks.shardIds()) yield taskKeyPrefix + shardId;
    for (const id of this.routers.keys()) yield routerKeyPrefix + id;
    for (const name of this.tombstoneRevisions.keys()) yield tombstoneKeyPrefix + name;
  }

  /** Applies one key's new value (undefined: deleted). strict: a bad value throws rather than being logged and skipped. */
  private applyOne(relative: string, kv: IKeyValue | undefined, strict: boolean): void {
    try {
      if (relative.startsWith(counterKeyPrefix)) {
        const name = relative.slice(counterKeyPrefix.length);
        if (kv === undefined) this.forgetCounter(name);
        else this.applyCounter(name, kv);
      } else if (relative.startsWith(pairKeyPrefix)) {
        const pairIndex = parseId(relative.slice(pairKeyPrefix.length));
        if (pairIndex === undefined) invalid(relative, 'not a pair index');
        if (kv === undefined)
          this.logger.error('directory: a pair was deleted from etcd; pairs are never deleted, it is kept', { pair: pairIndex });
        else this.applyPair(pairIndex, kv);
      } else if (relative === shardIdNextKey) {
        if (kv === undefined) {
          this.logger.error('directory: shard-id-next was deleted from etcd; shard ids go on from the highest seen');
          this.shardIdNextRevision = 0;
          return;
        }
        const next = parseId(kv.value.toString('utf8'));
        if (next === undefined || next < 1) invalid(relative, 'not a shard id');
        this.shardIdNext = next;
        this.shardIdNextRevision = Number(kv.mod_revision);
      } else if (relative.startsWith(taskKeyPrefix)) {
        const shardId = parseId(relative.slice(taskKeyPrefix.length));
        if (shardId === undefined) invalid(relative, 'not a shard id');
        if (kv === undefined) this.forgetTask(shardId);
        else this.applyTask(shardId, kv);
      } else if (relative.startsWith(routerKeyPrefix)) {
        const id = relative.slice(routerKeyPrefix.length);
        if (kv === undefined) {
          this.routers.delete(id);
          return;
        }
        const value = parseJson(relative, kv.value);
        const seenRevision = isObject(value) && isCount(value.seenRevision) ? value.seenRevision : 0;
        this.routers.set(id, { seenRevision, modRevision: Number(kv.mod_revision) });
      } else if (relative.startsWith(tombstoneKeyPrefix)) {
        const name = relative.slice(tombstoneKeyPrefix.length);
        if (kv === undefined) {
          this.tombstones.delete(name);
          this.tombstoneRevisions.delete(name);
          return;
        }
        this.tombstones.set(name, { name, ...checkTombstone(name, parseJson(relative, kv.value)) });
        this.tombstoneRevisions.set(name, Number(kv.mod_revision));
      }
      // Other keys under the prefix (the supervisor's) are not the directory's.
    } catch (error) {
      if (strict) throw error;
      this.logger.error('directory: an etcd key could not be applied and is ignored', { key: relative, error: (error as Error).message });
    }
  }

  /** Applies a counter's value: in place when it is the same counter (same creation), a new CounterInfo when re-created. */
  private applyCounter(name: string, kv: IKeyValue): void {
    const stored = checkCounter(name, parseJson(`counter ${name}`, kv.value));
    const createRevision = Number(kv.create_revision);
    const modRevision = Number(kv.mod_revision);
    let counter: CounterInfo | undefined = this.model.get(name);
    let record = this.records.get(name);
    if (counter === undefined || record === undefined || record.createRevision !== createRevision || !extendsCounter(counter, stored)) {
      if (counter !== undefined) this.forgetCounter(name);
      counter = this.model.addCounter({
        name,
        kind: stored.kind,
        window: stored.window,
        createdMs: stored.createdMs,
        autoscale: stored.autoscale,
        generation: stored.generation,
        ttlMs: stored.ttlMs,
      });
      record = { createRevision, modRevision, clearKeys: [], announcedSinceMs: undefined };
      this.records.set(name, record);
    }
    const added = stored.shards.slice(counter.shards.length).map(([shardId, pairIndex], index) => ({
      shardIndex: counter.shards.length + index,
      shardId,
      pairIndex,
    }));
    this.model.addShards(counter, added, stored.writableShardCount);
    for (let index = counter.growths.length; index < stored.growths.length; index++) {
      const growth = stored.growths[index]!;
      this.model.addGrowth(counter, growth);
    }
    // A clear: every router acknowledges it (clearCounter waits for that).
    if (stored.generation !== counter.generation && modRevision > this.ackWantedRevision) this.ackWantedRevision = modRevision;
    this.model.updateCounter(counter, {
      window: stored.window,
      autoscale: stored.autoscale,
      generation: stored.generation,
      ttlMs: stored.ttlMs,
    });
    record.modRevision = modRevision;
    record.clearKeys = stored.clearKeys.length === 0 ? noClearKeys : stored.clearKeys;
    if (counter.writableShardCount < counter.shards.length) {
      // Announced: acknowledge through presence; memory already reads the new shards.
      record.announcedSinceMs ??= monotonicNowMs();
      this.announced.add(name);
      if (modRevision > this.ackWantedRevision) this.ackWantedRevision = modRevision;
    } else {
      record.announcedSinceMs = undefined;
      this.announced.delete(name);
    }
  }

  private forgetCounter(name: string): void {
    if (this.model.removeCounter(name) === undefined) return;
    this.records.delete(name);
    this.announced.delete(name);
    // A delete: every router acknowledges it (deleteCounters waits for that).
    if (this.appliedRevisionInFlight > this.ackWantedRevision) this.ackWantedRevision = this.appliedRevisionInFlight;
  }

  private applyPair(pairIndex: number, kv: IKeyValue): void {
    const pair = pairOfStored(pairIndex, checkPair(pairIndex, parseJson(`pair ${pairIndex}`, kv.value)));
    const modRevision = Number(kv.mod_revision);
    const pairs = this.model.allPairs();
    if (pairIndex < pairs.length) {
      // Out of sync: every router acknowledges it (updatePair waits), so none
      // reads the follower for an exact sum once its primary acknowledges alone.
      if (pairs[pairIndex]!.inSync && !pair.inSync && modRevision > this.ackWantedRevision) this.ackWantedRevision = modRevision;
      this.model.putPair(pair);
      this.pairRevisions[pairIndex] = modRevision;
      return;
    }
    this.pendingPairs.set(pairIndex, { pair, modRevision });
    for (let next = this.pendingPairs.get(pairs.length); next !== undefined; next = this.pendingPairs.get(pairs.length)) {
      this.pendingPairs.delete(pairs.length);
      this.model.putPair(next.pair);
      this.pairRevisions.push(next.modRevision);
    }
  }

  private applyTask(shardId: number, kv: IKeyValue): void {
    const stored = checkTask(shardId, parseJson(`shard task ${shardId}`, kv.value));
    this.model.setTask({
      shardId,
      pairIndex: stored.pairIndex,
      kind: stored.kind,
      generation: stored.generation,
      createdMs: stored.createdMs,
    });
    this.taskRevisions.set(shardId, Number(kv.mod_revision));
  }

  private forgetTask(shardId: number): void {
    this.model.deleteTask(shardId);
    this.taskRevisions.delete(shardId);
  }
}
