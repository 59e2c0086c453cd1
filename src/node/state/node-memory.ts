// Everything a node holds in memory, per shard: totals, window buckets,
// distinct-count sketches, member sets, the generation of cleared shards,
// and tombstones of dropped shards.
// Changed only by applying log
// entries — after their commit, during replay, and (on a scratch copy) when a
// checkpoint folds them — so memory, replay and checkpoint cannot disagree.
import assert from 'node:assert/strict';
import { HllSketch, unpackRegisterChanges } from '../../sketch/index.ts';
import { MemberSet } from '../../membership/index.ts';
import {
  compareVersions,
  decodeComponent,
  decodePackedComponents,
  mergeComponent,
  packComponents,
  unpackComponents,
  type RegionComponent,
} from '../../wire/internal/index.ts';
import { type WindowSetting } from '../../wire/index.ts';
import { WindowBuckets } from '../../window/index.ts';
import { ShardTotals } from './shard-totals.ts';
import { ChangeFeed } from './change-feed.ts';
import {
  EntryKind,
  droppedPart,
  encodeDroppedAt,
  decodeDroppedAt,
  encodeGeneration,
  decodeGeneration,
  entryShardIds,
  type CheckpointFolder,
  type CheckpointState,
  type LogEntry,
  type StoredEntry,
} from '../log/index.ts';

/** A windowConfig entry's payload: bucketMs then retentionMs, 8 bytes each. */
export function encodeWindowSetting(setting: WindowSetting): Buffer {
  const payload = Buffer.alloc(16);
  payload.writeBigUInt64BE(BigInt(setting.bucketMs), 0);
  payload.writeBigUInt64BE(BigInt(setting.retentionMs), 8);
  return payload;
}

export function decodeWindowSetting(payload: Buffer): WindowSetting {
  assert.equal(payload.length, 16, 'window setting payload is 16 bytes');
  return { bucketMs: Number(payload.readBigUInt64BE(0)), retentionMs: Number(payload.readBigUInt64BE(8)) };
}

// Checkpoint part names.
const windowPart = 'window';
const sketchPart = 'sketch';
const membersPart = 'members';
/** A cleared shard's generation (8 bytes, big-endian); a shard never cleared has none (generation 0). */
const generationPart = 'generation';
/** Peer regions' components of the shard's counter: region-component records. */
const regionsPart = 'regions';
function encodeWindowPart(setting: WindowSetting, buckets: readonly [number, bigint][]): Buffer {
  const data = Buffer.alloc(20 + 16 * buckets.length);
  encodeWindowSetting(setting).copy(data, 0);
  data.writeUInt32BE(buckets.length, 16);
  buckets.forEach(([startMs, total], index) => {
    data.writeBigUInt64BE(BigInt(startMs), 20 + 16 * index);
    data.writeBigInt64BE(total, 28 + 16 * index);
  });
  return data;
}

function decodeWindowPart(data: Buffer): { setting: WindowSetting; buckets: [number, bigint][] } {
  assert.ok(data.length >= 20 && data.length === 20 + 16 * data.readUInt32BE(16), 'window checkpoint part is malformed');
  const buckets: [number, bigint][] = [];
  for (let offset = 20; offset < data.length; offset += 16)
    buckets.push([Number(data.readBigUInt64BE(offset)), data.readBigInt64BE(offset + 8)]);
  return { setting: decodeWindowSetting(data.subarray(0, 16)), buckets };
}

export class NodeMemory {
  readonly totals = new ShardTotals();
  readonly windows = new WindowBuckets();
  private readonly sketches = new Map<number, HllSketch>();
  private readonly memberSets = new Map<number, MemberSet>();
  /**
   * Dropped shards (their counter was deleted) to the drop's commit time.
   * Shard ids are never reused, so a tombstone is only the id: it stays for
   * droppedShardTombstoneMs, far longer than an increment routed before the
   * delete can take to arrive, and refuses that increment.
   */
  private readonly tombstones = new Map<number, number>();
  private tombstoneCursor: Iterator<[number, number]> | undefined;
  /** Shards cleared at least once, to their generation; every other shard is at 0. */
  private readonly generations = new Map<number, number>();
  /** Per shard, per origin region: the newest component held (docs/regions.md). */
  private readonly components = new Map<number, Map<string, RegionComponent>>();
  /** The region feed's change ring: made on the feed's first call (startChangeFeed), gone with a clear. */
  private changes: ChangeFeed | undefined;

  /** The feed of changed shards from now on (ChangedShards); the one under way when there is one. */
  changeFeed(ringEntries: number): { feed: ChangeFeed; started: boolean } {
    if (this.changes !== undefined) return { feed: this.changes, started: false };
    this.changes = new ChangeFeed(ringEntries);
    return { feed: this.changes, started: true };
  }

  /** Shards cleared at least once (they may hold no total). */
  clearedShardIds(): IterableIterator<number> {
    return this.generations.keys();
  }

  /** Applies one committed entry, accepted at atMs. */
  apply(entry: LogEntry, atMs: number): void {
    const { shardId, amount } = entry;
    const kind = entry.kind ?? EntryKind.increment;
    // Only what moves a total or a generation is news for the region feed.
    if (
      this.changes !== undefined &&
      (kind === EntryKind.increment ? amount !== 0n : kind === EntryKind.memberFlip || kind === EntryKind.drop || kind === EntryKind.clear)
    )
      this.changes.note(shardId);
    // The primary refuses writes to a dropped shard; one it accepted (the
    // tombstone had expired there) brings the shard back wherever it replays,
    // whether or not this copy still held the tombstone.
    if (this.tombstones.size > 0 && kind !== EntryKind.drop) this.tombstones.delete(shardId);
    if (kind === EntryKind.regionComponents) {
      for (const row of decodePackedComponents(entry.payload!)) {
        if (this.tombstones.size > 0) this.tombstones.delete(row.shardId);
        this.holdComponent(row.shardId, row.component);
      }
      return;
    }
    switch (kind) {
      case EntryKind.increment:
        if (amount === 0n) return; // a key fence
        this.totals.add(shardId, amount);
        this.windows.add(shardId, atMs, amount);
        return;
      case EntryKind.memberFlip: {
        let members = this.memberSets.get(shardId);
        if (members === undefined) this.memberSets.set(shardId, (members = new MemberSet()));
        // Only real flips are logged: a flip that changes nothing means the log and memory disagree.
        const flipped = amount === 1n ? members.add(entry.member!) : members.remove(entry.member!);
        assert.ok(flipped, `member ${entry.member} of shard ${shardId} flipped to the state it already had`);
        this.totals.add(shardId, amount);
        return;
      }
      case EntryKind.distinct: {
        let sketch = this.sketches.get(shardId);
        if (sketch === undefined) this.sketches.set(shardId, (sketch = new HllSketch()));
        for (const [index, rank] of unpackRegisterChanges(entry.payload!)) sketch.observe(index, rank);
        return;
      }
      case EntryKind.windowConfig: {
        const { bucketMs, retentionMs } = decodeWindowSetting(entry.payload!);
        const previous = this.windows.configOf(shardId);
        if (previous !== undefined && previous.bucketMs === bucketMs && retentionMs > previous.retentionMs) {
          // A longer retention must not revive buckets that had expired when
          // it was set: which ones those are depends only on the log, not on
          // when a sweep or a fold happened to run.
          const alive = this.windows.buckets(shardId).filter(([startMs]) => startMs + bucketMs > atMs - previous.retentionMs);
          this.windows.load(shardId, previous, alive);
        }
        this.windows.configure(shardId, bucketMs, retentionMs);
        return;
      }
      case EntryKind.drop:
        this.empty(shardId);
        // Peer regions' parts go with the counter; a local clear keeps them (they are other regions' totals).
        this.components.delete(shardId);
        this.windows.configure(shardId, 0, 0);
        this.generations.delete(shardId);
        this.tombstones.set(shardId, atMs);
        return;
      case EntryKind.clear: {
        this.empty(shardId);
        // The window keeps its setting: increments after the clear land in fresh buckets.
        const setting = this.windows.configOf(shardId);
        if (setting !== undefined) this.windows.load(shardId, setting, []);
        this.generations.set(shardId, decodeGeneration(entry.payload!));
        return;
      }
      case EntryKind.regionComponent:
        this.holdComponent(shardId, decodeComponent(entry.payload!));
        return;
      case EntryKind.clearedKey:
        // Only its key counts, recorded by whoever applies the row (group commit, follower, replay of keys).
        return;
    }
  }

  /** The max-register: keeps the newer of the held component and this one (the held one on a tie). */
  private holdComponent(shardId: number, component: RegionComponent): void {
    let held = this.components.get(shardId);
    if (held === undefined) this.components.set(shardId, (held = new Map()));
    held.set(component.origin, mergeComponent(held.get(component.origin), component));
  }

  /** Frees a shard's total, sketch and member set. */
  private empty(shardId: number): void {
    this.totals.delete(shardId);
    this.sketches.delete(shardId);
    this.memberSets.delete(shardId);
  }

  /** Shards cleared at least once (so at a generation above 0). */
  get clearedShardCount(): number {
    return this.generations.size;
  }

  /** How many clears the shard has seen (0: never cleared). */
  generationOf(shardId: number): number {
    return this.generations.size === 0 ? 0 : (this.generations.get(shardId) ?? 0);
  }

  /** True when the shard was dropped (its counter deleted) and its tombstone is still kept. */
  isDropped(shardId: number): boolean {
    return this.tombstones.size > 0 && this.tombstones.has(shardId);
  }

  /** Tombstones kept. */
  get droppedCount(): number {
    return this.tombstones.size;
  }

  /**
   * Forgets tombstones of drops committed before beforeMs, visiting at most
   * visitsMax of them, round-robin from where the last call stopped (a Map
   * iterator stays valid while the Map changes). Returns how many it forgot.
   */
  pruneTombstones(beforeMs: number, visitsMax: number): number {
    const visitCount = Math.min(visitsMax, this.tombstones.size);
    let pruned = 0;
    for (let visit = 0; visit < visitCount; visit++) {
      let next = this.tombstoneCursor?.next();
      if (next === undefined || next.done === true) {
        this.tombstoneCursor = this.tombstones.entries();
        next = this.tombstoneCursor.next();
      }
      if (next.done === true) break;
      const [shardId, droppedAtMs] = next.value;
      if (droppedAtMs >= beforeMs) continue;
      this.tombstones.delete(shardId);
      pruned++;
    }
    return pruned;
  }

  /**
   * Why these entries cannot follow this memory, or undefined: a member flip
   * to the state the member already has means the logs have diverged.
   * Checked before a follower writes anything.
   */
  flipProblem(entries: readonly LogEntry[]): string | undefined {
    const flipped = new Map<string, boolean>();
    // Shards emptied by an entry of this block: their members are all absent after it.
    const emptied = new Set<number>();
    for (const entry of entries) {
      if (entry.kind === EntryKind.drop || entry.kind === EntryKind.clear) {
        emptied.add(entry.shardId);
        for (const id of flipped.keys()) if (id.startsWith(`${entry.shardId}:`)) flipped.delete(id);
        continue;
      }
      if (entry.kind !== EntryKind.memberFlip) continue;
      const id = `${entry.shardId}:${entry.member}`;
      const present = flipped.get(id) ?? (!emptied.has(entry.shardId) && this.hasMember(entry.shardId, entry.member!));
      if (present === (entry.amount === 1n))
        return `member ${entry.member} of shard ${entry.shardId} is already ${present ? 'present' : 'absent'}`;
      flipped.set(id, !present);
    }
    return undefined;
  }

  hasMember(shardId: number, member: bigint): boolean {
    return this.memberSets.get(shardId)?.has(member) ?? false;
  }

  memberCount(shardId: number): number {
    return this.memberSets.get(shardId)?.size ?? 0;
  }

  /** The peer regions' components held for a shard, by origin. */
  componentsOf(shardId: number): ReadonlyMap<string, RegionComponent> | undefined {
    return this.components.get(shardId);
  }

  /** True when `component` is newer than the one held from its origin (so it is worth logging). */
  advancesComponent(shardId: number, component: RegionComponent): boolean {
    const held = this.components.get(shardId)?.get(component.origin);
    return held === undefined || compareVersions(component.version, held.version) > 0;
  }

  register(shardId: number, index: number): number {
    return this.sketches.get(shardId)?.get(index) ?? 0;
  }

  sketch(shardId: number): HllSketch | undefined {
    return this.sketches.get(shardId);
  }

  windowSetting(shardId: number): WindowSetting {
    return this.windows.configOf(shardId) ?? { bucketMs: 0, retentionMs: 0 };
  }

  /** Bytes held by sketches and member sets (totals and buckets are small and counted elsewhere). */
  structureBytes(): { sketchBytes: number; memberBytes: number; sketches: number; memberSets: number } {
    let sketchBytes = 0;
    let memberBytes = 0;
    for (const sketch of this.sketches.values()) sketchBytes += sketch.memoryBytes();
    for (const members of this.memberSets.values()) memberBytes += members.memoryBytes();
    return { sketchBytes, memberBytes, sketches: this.sketches.size, memberSets: this.memberSets.size };
  }

  clear(): void {
    this.totals.clear();
    this.windows.clear();
    this.sketches.clear();
    this.memberSets.clear();
    this.tombstones.clear();
    this.tombstoneCursor = undefined;
    this.generations.clear();
    this.components.clear();
    // A rebuilt memory is another lifetime: a position in the old feed means nothing in it.
    this.changes = undefined;
  }

  /** Loads a checkpoint (into empty memory). */
  load(state: CheckpointState): void {
    for (const [shardId, total] of state.totals) this.totals.add(shardId, total);
    for (const [shardId, parts] of state.parts) {
      for (const [part, data] of parts) {
        if (part === windowPart) {
          const { setting, buckets } = decodeWindowPart(data);
          this.windows.load(shardId, setting, buckets);
        } else if (part === sketchPart) {
          this.sketches.set(shardId, HllSketch.deserialize(data));
        } else if (part === membersPart) {
          this.memberSets.set(shardId, MemberSet.deserialize(data));
        } else if (part === droppedPart) {
          this.tombstones.set(shardId, decodeDroppedAt(data));
        } else if (part === regionsPart) {
          this.components.set(shardId, new Map(unpackComponents(data).map((component) => [component.origin, component])));
        } else if (part === generationPart) {
          const generation = decodeGeneration(data);
          assert.ok(generation >= 1, `shard ${shardId} has a malformed generation part`);
          this.generations.set(shardId, generation);
        } else {
          assert.fail(`unknown checkpoint part ${part} of shard ${shardId}`);
        }
      }
    }
  }

  /** The checkpoint state of some shards. */
  checkpointOf(shardIds: readonly number[]): CheckpointState {
    const totals = new Map<number, bigint>();
    const parts = new Map<number, Map<string, Buffer>>();
    for (const shardId of shardIds) {
      const droppedAtMs = this.tombstones.get(shardId);
      if (droppedAtMs !== undefined) {
        // Nothing but the tombstone: no total row, no other part.
        parts.set(shardId, new Map([[droppedPart, encodeDroppedAt(droppedAtMs)]]));
        continue;
      }
      totals.set(shardId, this.totals.get(shardId));
      const shardParts = new Map<string, Buffer>();
      const setting = this.windows.configOf(shardId);
      if (setting !== undefined) shardParts.set(windowPart, encodeWindowPart(setting, this.windows.buckets(shardId)));
      const sketch = this.sketches.get(shardId);
      if (sketch !== undefined) shardParts.set(sketchPart, sketch.serialize());
      const members = this.memberSets.get(shardId);
      if (members !== undefined) shardParts.set(membersPart, members.serialize());
      const generation = this.generations.get(shardId);
      if (generation !== undefined) shardParts.set(generationPart, encodeGeneration(generation));
      const components = this.components.get(shardId);
      if (components !== undefined && components.size > 0) shardParts.set(regionsPart, packComponents(components.values()));
      if (shardParts.size > 0) parts.set(shardId, shardParts);
    }
    return { totals, parts };
  }
}

/** Folds entries into a checkpoint with the same apply() as memory, dropping expired window buckets. */
export const checkpointFolder: CheckpointFolder = {
  fold(state: CheckpointState, entries: readonly StoredEntry[], nowMs: number): CheckpointState {
    const scratch = new NodeMemory();
    scratch.load(state);
    let logTimeMs = 0;
    for (const entry of entries) {
      scratch.apply(entry, entry.atMs);
      if (entry.atMs > logTimeMs) logTimeMs = entry.atMs;
    }
    const shardIds = [...new Set([...state.totals.keys(), ...state.parts.keys(), ...entryShardIds(entries)])];
    // Expired as of the log's own time (never later than now), so the
    // checkpoint depends on the entries folded, not on when the fold ran.
    scratch.windows.expire(Math.min(nowMs, logTimeMs), scratch.windows.shardCount);
    return scratch.checkpointOf(shardIds);
  },
};
