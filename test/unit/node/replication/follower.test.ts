// The follower side of replication with real logs: log matching (an append
// or truncation lands only where the previous entry's lsn and epoch match),
// and snapshot install: a follower filled from a primary's checkpoint in
// chunks, then its tail, holds exactly the primary's state of every kind and
// its keys, wherever the fold stopped. An install cut short starts over.
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { Registry } from 'prom-client';
import {
  ShardLog,
  EntryKind,
  bytesChecksum,
  chunkChecksum,
  encodeGeneration,
  type LogEntry,
  type StoredEntry,
} from '../../../../src/node/log/index.ts';
import { NodeMemory, checkpointFolder, encodeWindowSetting } from '../../../../src/node/state/node-memory.ts';
import { DedupIndex } from '../../../../src/node/state/dedup-index.ts';
import { rebuildMemory } from '../../../../src/node/state/recovery.ts';
import { createFollower } from '../../../../src/node/replication/follower.ts';
import { encodeEntryColumns } from '../../../../src/node/log/records/entry-columns.ts';
import { createNodeMetrics } from '../../../../src/node/node-metrics.ts';
import type { NodeState } from '../../../../src/node/state/node-state.ts';
import { packRegisterChanges } from '../../../../src/sketch/index.ts';
import type { shardV1 } from '../../../../src/common/index.ts';
import { ErrorCode, TallyError } from '../../../../src/wire/index.ts';
import { encodePackedComponents } from '../../../../src/wire/internal/index.ts';
import { makeTempDir, removeTempDir } from '../../../helpers/temp-dir.ts';
import { seededRandom } from '../../../helpers/seeded-random.ts';
import { waitFor } from '../../../helpers/cluster.ts';

const windowMs = 60_000;
const nowMs = 100_000;
const silent = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

interface Node {
  log: ShardLog;
  memory: NodeMemory;
  dedup: DedupIndex;
  state: NodeState;
  follower: ReturnType<typeof createFollower>;
}

function openNode(dir: string, epoch = 2n): Node {
  const log = ShardLog.open(dir, checkpointFolder);
  const memory = new NodeMemory();
  const dedup = new DedupIndex(windowMs);
  rebuildMemory(log, memory, dedup, nowMs, windowMs);
  const state: NodeState = {
    ready: true,
    role: { role: 'follower', epoch, peer: 'primary', syncRequired: false, epochStartLsn: 0n, configVersion: 0n },
    confirmedLsn: 0n,
  };
  const follower = createFollower({
    state,
    log,
    memory,
    dedup,
    metrics: createNodeMetrics(new Registry()),
    logger: silent,
    rebuild: () => rebuildMemory(log, memory, dedup, nowMs, windowMs),
  });
  return { log, memory, dedup, state, follower };
}

/** Entries of every kind over a few shards: windowed totals, keys, fences, member flips, sketch registers, peer regions' packed components, clears, cleared-away keys, drops. */
function entriesOfEveryKind(
  random: () => number,
  count: number,
  sequence: { next: number; members: Map<string, boolean>; generations: Map<number, number> },
): LogEntry[] {
  const entries: LogEntry[] = [];
  for (let index = 0; index < count; index++) {
    const roll = random();
    const shardId = 1 + Math.floor(random() * 6);
    if (roll < 0.05)
      entries.push({
        shardId: 1,
        amount: 0n,
        idempotencyKey: Buffer.alloc(0),
        fenceShardCount: 0,
        kind: EntryKind.windowConfig,
        payload: encodeWindowSetting({ bucketMs: 1_000, retentionMs: 3_600_000 }),
      });
    else if (roll < 0.25) {
      const member = BigInt(Math.floor(random() * 40));
      const id = `${shardId + 10}:${member}`;
      const present = sequence.members.get(id) ?? false;
      sequence.members.set(id, !present);
      entries.push({
        shardId: shardId + 10,
        amount: present ? -1n : 1n,
        idempotencyKey: Buffer.alloc(0),
        fenceShardCount: 0,
        kind: EntryKind.memberFlip,
        member,
      });
    } else if (roll < 0.4) {
      entries.push({
        shardId: shardId + 20,
        amount: 0n,
        idempotencyKey: Buffer.alloc(0),
        fenceShardCount: 0,
        kind: EntryKind.distinct,
        payload: packRegisterChanges([[Math.floor(random() * 16_384), 1 + Math.floor(random() * 20)]]),
      });
    } else if (roll < 0.7) {
      entries.push({
        shardId,
        amount: BigInt(1 + Math.floor(random() * 100)),
        idempotencyKey: Buffer.from(`key-${sequence.next++}`),
        fenceShardCount: 0,
      });
    } else if (roll < 0.75) {
      entries.push({ shardId, amount: 0n, idempotencyKey: Buffer.from(`fence-${sequence.next++}`), fenceShardCount: 4 });
    } else if (roll < 0.79) {
      // Components of a few shards in one entry, versions in any order: each shard keeps its newest per origin.
      const rows = Array.from({ length: 1 + Math.floor(random() * 3) }, () => ({
        shardId: shardId + [0, 20][Math.floor(random() * 2)]!,
        component: {
          origin: random() < 0.5 ? 'eu' : 'us',
          version: { term: BigInt(1 + Math.floor(random() * 3)), round: BigInt(Math.floor(random() * 50)) },
          total: BigInt(Math.floor(random() * 1_000) - 100),
          asOfUnixMs: 1_000 + sequence.next++,
          generation: 0,
        },
      }));
      entries.push({
        shardId: rows[0]!.shardId,
        amount: 0n,
        idempotencyKey: Buffer.alloc(0),
        fenceShardCount: 0,
        kind: EntryKind.regionComponents,
        payload: encodePackedComponents(rows),
      });
    } else if (roll >= 0.97 && roll < 0.985) {
      // A clear of any kind of shard to its next generation, or a key cleared away.
      if (random() < 0.5) {
        entries.push({
          shardId,
          amount: 0n,
          idempotencyKey: Buffer.from(`cleared-${sequence.next++}`),
          fenceShardCount: 0,
          kind: EntryKind.clearedKey,
        });
      } else {
        const cleared = shardId + [0, 10, 20][Math.floor(random() * 3)]!;
        for (const id of [...sequence.members.keys()]) if (id.startsWith(`${cleared}:`)) sequence.members.delete(id);
        const generation = (sequence.generations.get(cleared) ?? 0) + 1;
        sequence.generations.set(cleared, generation);
        entries.push({
          shardId: cleared,
          amount: 0n,
          idempotencyKey: Buffer.alloc(0),
          fenceShardCount: 0,
          kind: EntryKind.clear,
          payload: encodeGeneration(generation),
        });
      }
    } else if (roll >= 0.985) {
      // A drop of any kind of shard; later entries for it bring it back (as after its tombstone expired).
      const dropped = shardId + [0, 10, 20][Math.floor(random() * 3)]!;
      for (const id of [...sequence.members.keys()]) if (id.startsWith(`${dropped}:`)) sequence.members.delete(id);
      entries.push({ shardId: dropped, amount: 0n, idempotencyKey: Buffer.alloc(0), fenceShardCount: 0, kind: EntryKind.drop });
    } else {
      entries.push({
        shardId,
        amount: BigInt(Math.floor(random() * 200) - 100) || 1n,
        idempotencyKey: Buffer.alloc(0),
        fenceShardCount: 0,
      });
    }
  }
  return entries;
}

/** An entry as the follower receives it: decoded, every field set. */
function toWire(entry: StoredEntry): shardV1.LogEntryMsg__Output {
  return {
    lsn: entry.lsn.toString(),
    epoch: entry.epoch.toString(),
    shardId: String(entry.shardId),
    amount: entry.amount.toString(),
    idempotencyKey: entry.idempotencyKey,
    atMs: String(entry.atMs),
    fenceShardCount: entry.fenceShardCount,
    kind: entry.kind ?? 0,
    member: (entry.member ?? 0n).toString(),
    payload: entry.payload ?? Buffer.alloc(0),
  };
}

/** A replication block with its checksum, as the primary sends it. */
function checked(columns: Buffer): { columns: Buffer; columnsCrc32: number; columnsChecked: boolean } {
  return { columns, columnsCrc32: bytesChecksum(columns), columnsChecked: true };
}

/** A sender from before checksums on the wire. */
const unchecked = { columnsCrc32: 0, columnsChecked: false, chunkCrc32: 0, chunkChecked: false };

function append(node: Node, entries: StoredEntry[], prevLsn: bigint, prevEpoch: bigint, epoch = node.state.role.epoch): boolean {
  const request: Omit<shardV1.AppendEntriesRequest__Output, 'protocol' | 'records' | 'recordsCrc32' | 'moreFollows'> = {
    epoch: epoch.toString(),
    truncate: false,
    truncateAfterLsn: '0',
    entryCount: entries.length,
    ...checked(encodeEntryColumns(entries)),
    prevLsn: prevLsn.toString(),
    prevEpoch: prevEpoch.toString(),
  };
  return node.follower.appendEntries(request).ok;
}

/** A ReplicateStream frame's request: the primary's stored records and rows (readWireFrom), with their checksum. */
function recordsRequest(
  records: Buffer,
  entryCount: number,
  prevLsn: bigint,
  prevEpoch: bigint,
  epoch: bigint,
): Omit<shardV1.AppendEntriesRequest__Output, 'protocol'> {
  return {
    epoch: epoch.toString(),
    truncate: false,
    truncateAfterLsn: '0',
    entryCount,
    columns: Buffer.alloc(0),
    columnsCrc32: 0,
    columnsChecked: false,
    records,
    recordsCrc32: bytesChecksum(records),
    moreFollows: false,
    prevLsn: prevLsn.toString(),
    prevEpoch: prevEpoch.toString(),
  };
}

/** Every stored row and record of a log, as SQLite holds them. */
function storedOf(log: ShardLog): unknown {
  const db = new Database(log.file, { readonly: true });
  try {
    return [db.prepare('SELECT * FROM log ORDER BY lsn').all(), db.prepare('SELECT * FROM records ORDER BY first_lsn').all()];
  } finally {
    db.close();
  }
}

/** Everything memory holds, serialized per shard: equal states give equal results. */
function stateOf(memory: NodeMemory): unknown {
  const ids = [...new Set([...memory.totals.shardIds(), ...Array.from({ length: 30 }, (_, index) => index + 1)])].sort((a, b) => a - b);
  const state = memory.checkpointOf(ids);
  return {
    totals: [...state.totals].filter(([, total]) => total !== 0n),
    parts: [...state.parts].map(([id, parts]) => [id, [...parts].map(([name, data]) => [name, data.toString('hex')])]),
  };
}

/** Installs the primary's checkpoint into the follower through InstallSnapshot, in chunks of about chunkBytes. */
async function install(primary: ShardLog, follower: Node, chunkBytes: number, stopAfterChunks = Infinity): Promise<number> {
  const view = primary.openView();
  try {
    const chunks = [...view.snapshotChunks(chunkBytes, nowMs - windowMs)];
    let sent = 0;
    for (const [index, chunk] of chunks.entries()) {
      if (sent >= stopAfterChunks) break;
      const request: Omit<shardV1.InstallSnapshotRequest__Output, 'protocol'> = {
        epoch: follower.state.role.epoch.toString(),
        snapshotId: 'snap-1',
        chunkIndex: index,
        snapshotLsn: view.checkpointLsn.toString(),
        snapshotEpoch: view.checkpointEpoch.toString(),
        shards: chunk.shards.map(([shardId, total]) => ({ shardId: String(shardId), total: total.toString() })),
        parts: chunk.parts.map((piece) => ({ ...piece, shardId: String(piece.shardId) })),
        keys: chunk.keys.map(toWire),
        done: index === chunks.length - 1,
        chunkCrc32: chunkChecksum(chunk),
        chunkChecked: true,
      };
      follower.follower.installSnapshot(request);
      sent++;
    }
    if (sent === chunks.length) {
      // The last chunk is answered before memory is rebuilt; the node is not ready until then.
      expect(follower.state.ready).toBe(false);
      await waitFor(() => follower.state.ready, { timeoutMs: 5_000, intervalMs: 10, what: 'the follower to be ready after the install' });
    }
    return chunks.length;
  } finally {
    view.close();
  }
}

describe('follower', () => {
  const dirs: string[] = [];
  const logs: ShardLog[] = [];
  const dir = (name: string): string => {
    const made = makeTempDir(name);
    dirs.push(made);
    return made;
  };
  afterEach(() => {
    for (const log of logs.splice(0)) log.close();
    for (const made of dirs.splice(0)) removeTempDir(made);
  });

  function primaryWith(count: number, seed: number): { log: ShardLog; memory: NodeMemory } {
    const log = ShardLog.open(dir('primary'), checkpointFolder);
    logs.push(log);
    const random = seededRandom(seed);
    const sequence = { next: 0, members: new Map<string, boolean>(), generations: new Map<number, number>() };
    for (let batch = 0; batch * 50 < count; batch++)
      log.append(entriesOfEveryKind(random, 50, sequence), batch < 4 ? 1n : 2n, nowMs - 5_000 + batch);
    const memory = new NodeMemory();
    rebuildMemory(log, memory, new DedupIndex(windowMs), nowMs, windowMs);
    return { log, memory };
  }

  it('snapshot install: a chunk 0 that would take back entries of the current epoch (a stale install delivered late) is refused and changes nothing', () => {
    const { log: primary } = primaryWith(300, 17);
    const node = openNode(dir('follower'));
    logs.push(node.log);
    const entries = primary.readFrom(1n, 300);
    expect(append(node, entries, 0n, 0n)).toBe(true);
    expect(node.log.lastLsn).toBe(300n);
    expect(node.log.lastEpoch).toBe(2n);
    const stateBefore = stateOf(node.memory);
    const stale = (snapshotLsn: string, epoch: string): Omit<shardV1.InstallSnapshotRequest__Output, 'protocol'> => ({
      epoch: '2',
      snapshotId: 'late',
      chunkIndex: 0,
      snapshotLsn,
      snapshotEpoch: epoch,
      shards: [],
      parts: [],
      keys: [],
      done: false,
      ...unchecked,
    });
    expect(() => node.follower.installSnapshot(stale('250', '2'))).toThrow(/refused as stale/);
    expect(node.log.installing).toBe(false);
    expect(node.log.lastLsn).toBe(300n);
    expect(stateOf(node.memory)).toEqual(stateBefore);
  });

  it('records frames land as the primary stored them (same rows, records and checksums) and apply as a replay does; a frame replayed or answered twice changes nothing', () => {
    const { log: primary, memory: primaryMemory } = primaryWith(400, 23);
    const node = openNode(dir('follower'));
    logs.push(node.log);
    const frames: { records: Buffer; entryCount: number; prevLsn: bigint; prevEpoch: bigint }[] = [];
    for (let fromLsn = 1n; fromLsn <= primary.lastLsn;) {
      const read = primary.readWireFrom(fromLsn, 70, 4_000);
      frames.push({
        records: read.bytes,
        entryCount: read.entryCount,
        prevLsn: fromLsn - 1n,
        prevEpoch: primary.entryEpoch(fromLsn - 1n)!,
      });
      fromLsn = read.lastLsn + 1n;
    }
    expect(frames.length).toBeGreaterThan(3);
    for (const [index, frame] of frames.entries()) {
      const request = recordsRequest(frame.records, frame.entryCount, frame.prevLsn, frame.prevEpoch, 2n);
      expect(node.follower.appendEntries(request).ok).toBe(true);
      // The same frame again (a replay, or a stream's frame delivered twice): refused by log matching, nothing written.
      const stored = storedOf(node.log);
      const again = node.follower.appendEntries(request);
      expect(again.ok).toBe(false);
      expect(again.lastLsn).toBe(node.log.lastLsn.toString());
      expect(storedOf(node.log)).toEqual(stored);
      if (index > 0) {
        const earlier = frames[index - 1]!;
        expect(
          node.follower.appendEntries(recordsRequest(earlier.records, earlier.entryCount, earlier.prevLsn, earlier.prevEpoch, 2n)).ok,
        ).toBe(false);
      }
    }
    expect(node.log.lastLsn).toBe(primary.lastLsn);
    expect(storedOf(node.log)).toEqual(storedOf(primary));
    expect(stateOf(node.memory)).toEqual(stateOf(primaryMemory));
    expect(node.state.confirmedLsn).toBe(primary.lastLsn);
  });

  it('a records frame damaged, truncated, miscounted or of a stale epoch is refused before anything is written', () => {
    const { log: primary } = primaryWith(200, 29);
    const node = openNode(dir('follower'));
    logs.push(node.log);
    const read = primary.readWireFrom(1n, 200, 1 << 20);
    const stored = storedOf(node.log);
    const refusedWith = (request: Omit<shardV1.AppendEntriesRequest__Output, 'protocol'>, pattern: RegExp, code: string): void => {
      let thrown: unknown;
      try {
        node.follower.appendEntries(request);
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(TallyError);
      expect((thrown as TallyError).code).toBe(code);
      expect((thrown as TallyError).message).toMatch(pattern);
      expect(node.log.lastLsn).toBe(0n);
      expect(storedOf(node.log)).toEqual(stored);
    };
    const damaged = Buffer.from(read.bytes);
    damaged[Math.floor(damaged.length / 2)] = damaged[Math.floor(damaged.length / 2)]! ^ 0x10;
    // The frame's own checksum first.
    refusedWith(
      { ...recordsRequest(damaged, read.entryCount, 0n, 0n, 2n), recordsCrc32: bytesChecksum(read.bytes) },
      /fail their checksum/,
      ErrorCode.invalidArgument,
    );
    // A frame whose checksum was computed over damaged bytes: each piece's own CRC-32 still catches it.
    refusedWith(recordsRequest(damaged, read.entryCount, 0n, 0n, 2n), /replicated records/, ErrorCode.invalidArgument);
    refusedWith(
      recordsRequest(read.bytes.subarray(0, read.bytes.length - 3), read.entryCount, 0n, 0n, 2n),
      /malformed/,
      ErrorCode.invalidArgument,
    );
    refusedWith(recordsRequest(read.bytes, read.entryCount + 1, 0n, 0n, 2n), /malformed/, ErrorCode.invalidArgument);
    refusedWith(recordsRequest(read.bytes, read.entryCount, 1n, 1n, 2n), /malformed/, ErrorCode.invalidArgument);
    refusedWith(recordsRequest(read.bytes, read.entryCount, 0n, 0n, 1n), /stale epoch/, ErrorCode.failedPrecondition);
    expect(node.follower.appendEntries(recordsRequest(read.bytes, read.entryCount, 0n, 0n, 2n)).ok).toBe(true);
    expect(storedOf(node.log)).toEqual(storedOf(primary));
  });

  it('appends only where the previous entry matches (lsn and epoch); a mismatch changes nothing', () => {
    const { log: primary } = primaryWith(200, 7);
    const node = openNode(dir('follower'));
    logs.push(node.log);
    const entries = primary.readFrom(1n, 100);
    expect(append(node, entries.slice(0, 50), 0n, 0n)).toBe(true);
    expect(node.log.lastLsn).toBe(50n);
    // Right lsn, wrong epoch at it: the logs diverged there.
    expect(append(node, entries.slice(50, 60), 50n, entries[49]!.epoch + 1n)).toBe(false);
    // A gap.
    expect(append(node, entries.slice(60, 70), 60n, entries[59]!.epoch)).toBe(false);
    expect(node.log.lastLsn).toBe(50n);
    expect(append(node, entries.slice(50, 100), 50n, entries[49]!.epoch)).toBe(true);
    expect(node.log.lastLsn).toBe(100n);
    expect(node.state.confirmedLsn).toBe(100n);
    // An older epoch's primary is refused outright.
    expect(() => append(node, [], 100n, entries[99]!.epoch, 1n)).toThrow(TallyError);
  });

  it('a replication block or snapshot chunk whose checksum fails is refused INVALID_ARGUMENT before anything is written', async () => {
    const { log: primary } = primaryWith(200, 7);
    const node = openNode(dir('follower'));
    logs.push(node.log);
    const entries = primary.readFrom(1n, 100);
    const good = checked(encodeEntryColumns(entries.slice(0, 50)));
    // One amount's low byte moved in flight: still a block that decodes, now to other totals.
    const moved = Buffer.from(good.columns);
    moved[50 * 8 + 3]! ^= 0x01;
    const request = (columns: Omit<ReturnType<typeof checked>, 'columns'> & { columns: Buffer }) => ({
      epoch: node.state.role.epoch.toString(),
      truncate: false,
      truncateAfterLsn: '0',
      entryCount: 50,
      prevLsn: '0',
      prevEpoch: '0',
      chunkCrc32: 0,
      chunkChecked: false,
      ...columns,
    });
    expect(() => node.follower.appendEntries(request({ ...good, columns: moved }))).toThrow(/fails its checksum/);
    expect(node.log.lastLsn).toBe(0n);
    expect(node.follower.appendEntries(request(good)).ok).toBe(true);
    expect(node.log.lastLsn).toBe(50n);

    // A snapshot chunk whose total moved: refused, no install begun.
    const fresh = openNode(dir('follower'));
    logs.push(fresh.log);
    while (primary.foldSlice(primary.lastLsn, 500, 0, nowMs) > 0);
    const view = primary.openView();
    try {
      const [chunk] = [...view.snapshotChunks(1 << 20, nowMs - windowMs)];
      const wire = {
        epoch: fresh.state.role.epoch.toString(),
        snapshotId: 'snap-crc',
        chunkIndex: 0,
        snapshotLsn: view.checkpointLsn.toString(),
        snapshotEpoch: view.checkpointEpoch.toString(),
        shards: chunk!.shards.map(([shardId, total]) => ({ shardId: String(shardId), total: total.toString() })),
        parts: chunk!.parts.map((piece) => ({ ...piece, shardId: String(piece.shardId) })),
        keys: chunk!.keys.map(toWire),
        done: true,
        chunkCrc32: chunkChecksum(chunk!),
        chunkChecked: true,
        columnsCrc32: 0,
        columnsChecked: false,
      };
      wire.shards[0]!.total = (BigInt(wire.shards[0]!.total) + 1n).toString();
      expect(() => fresh.follower.installSnapshot(wire)).toThrow(/fails its checksum/);
      expect(fresh.log.installing).toBe(false);
      expect(fresh.log.lastLsn).toBe(0n);
    } finally {
      view.close();
    }
  });

  it("an append that finds the disk full fails RESOURCE_EXHAUSTED and changes nothing (log, memory, keys, confirmed lsn); the primary's retry lands once there is room", () => {
    const primary = ShardLog.open(dir('primary'), checkpointFolder);
    logs.push(primary);
    const keyed = (index: number): LogEntry => ({
      shardId: 1 + (index % 5),
      amount: 2n,
      idempotencyKey: Buffer.from(`${index}-${'k'.repeat(100)}`),
      fenceShardCount: 0,
    });
    primary.append([keyed(0)], 2n, nowMs);
    primary.append(
      Array.from({ length: 500 }, (_, index) => keyed(index + 1)),
      2n,
      nowMs,
    );
    const node = openNode(dir('follower'));
    logs.push(node.log);
    expect(append(node, primary.readFrom(1n, 1), 0n, 0n)).toBe(true);
    const before = { lastLsn: node.log.lastLsn, state: stateOf(node.memory), keys: node.dedup.size, confirmedLsn: node.state.confirmedLsn };
    node.log.setPageCountMax(1);
    const tail = primary.readFrom(2n, 1_000);
    expect(() => append(node, tail, 1n, 2n)).toThrow(expect.objectContaining({ code: 'resource_exhausted' }));
    expect({
      lastLsn: node.log.lastLsn,
      state: stateOf(node.memory),
      keys: node.dedup.size,
      confirmedLsn: node.state.confirmedLsn,
    }).toEqual(before);
    expect(node.dedup.get(1 + (1 % 5), keyed(1).idempotencyKey, nowMs)).toBeUndefined();
    // The primary sends the same entries again (it retries what was not confirmed).
    node.log.setPageCountMax(1_000_000);
    expect(append(node, tail, 1n, 2n)).toBe(true);
    expect(node.log.lastLsn).toBe(501n);
    expect(node.state.confirmedLsn).toBe(501n);
    expect(node.memory.totals.get(1)).toBe(2n * 101n);
  });

  it("a truncation whose kept entry does not match is refused and drops nothing; a matching one drops only an older epoch's tail", () => {
    const node = openNode(dir('follower'), 3n);
    logs.push(node.log);
    const plain = (shardId: number): LogEntry => ({ shardId, amount: 1n, idempotencyKey: Buffer.alloc(0), fenceShardCount: 0 });
    node.log.append([plain(1), plain(1)], 1n, nowMs);
    node.log.append([plain(1), plain(2), plain(2)], 2n, nowMs);
    rebuildMemory(node.log, node.memory, node.dedup, nowMs, windowMs);
    const truncate = (afterLsn: bigint, prevEpoch: bigint) =>
      node.follower.appendEntries({
        epoch: '3',
        truncate: true,
        truncateAfterLsn: afterLsn.toString(),
        entryCount: 0,
        columns: Buffer.alloc(0),
        prevLsn: afterLsn.toString(),
        prevEpoch: prevEpoch.toString(),
        ...unchecked,
      }).ok;
    expect(truncate(2n, 2n)).toBe(false);
    expect(node.log.lastLsn).toBe(5n);
    expect(truncate(2n, 1n)).toBe(true);
    expect(node.log.lastLsn).toBe(2n);
    expect(node.memory.totals.get(2)).toBe(0n);
    expect(node.memory.totals.get(1)).toBe(2n);
  });

  it('snapshot install: checkpoint in chunks, then the tail, equals the primary in every kind and key, wherever the fold stopped', async () => {
    for (const [foldTo, chunkBytes] of [
      [0n, 1_024],
      [137n, 1_024],
      [400n, 4_096],
      [600n, 1_024],
    ] as const) {
      const { log: primary, memory: primaryMemory } = primaryWith(600, 11);
      while (primary.foldSlice(foldTo, 64, nowMs - windowMs, nowMs) > 0);
      expect(primary.checkpointLsn).toBe(foldTo);
      const node = openNode(dir('follower'));
      logs.push(node.log);
      // The follower held a diverged log of its own: install replaces it.
      node.log.append([{ shardId: 99, amount: 5n, idempotencyKey: Buffer.from('stray'), fenceShardCount: 0 }], 1n, nowMs);
      const chunkCount = await install(primary, node, chunkBytes);
      expect(chunkCount).toBeGreaterThan(foldTo > 0n ? 1 : 0);
      expect(node.log.installing).toBe(false);
      expect(node.log.lastLsn).toBe(foldTo);
      expect(node.log.entryEpoch(foldTo)).toBe(primary.entryEpoch(foldTo));
      const tail = foldTo < primary.lastLsn ? primary.readFrom(foldTo + 1n, 10_000) : [];
      if (tail.length > 0) expect(append(node, tail, foldTo, primary.entryEpoch(foldTo)!)).toBe(true);
      expect(node.log.lastLsn).toBe(primary.lastLsn);
      expect(stateOf(node.memory)).toEqual(stateOf(primaryMemory));
      expect(node.memory.totals.get(99)).toBe(0n);
      // Every key of the window deduplicates on the follower, as on the primary.
      for (let key = 0; key < 100; key++) {
        for (let shardId = 1; shardId <= 6; shardId++) {
          const id = Buffer.from(`key-${key}`);
          expect(node.dedup.get(shardId, id, nowMs)?.lsn, `key-${key} on shard ${shardId}`).toBe(
            new DedupIndexOf(primary).get(shardId, id)?.lsn,
          );
        }
      }
      // Restarting the follower recovers the same state from its own log.
      node.log.close();
      const reopened = openNode(node.log.file.replace(/\/node\.sqlite$/, ''));
      logs.push(reopened.log);
      expect(stateOf(reopened.memory)).toEqual(stateOf(primaryMemory));
      expect(reopened.log.nodeId).toBe(node.log.nodeId);
    }
  });

  it('snapshot install: a part larger than a chunk arrives in pieces and is joined byte for byte (member bitmap, sketch)', async () => {
    const log = ShardLog.open(dir('primary'), checkpointFolder);
    logs.push(log);
    const random = seededRandom(17);
    const members = new Set<bigint>();
    while (members.size < 5_000) members.add(BigInt(Math.floor(random() * 2 ** 40)));
    const flips: LogEntry[] = [...members].map((member) => ({
      shardId: 7,
      amount: 1n,
      idempotencyKey: Buffer.alloc(0),
      fenceShardCount: 0,
      kind: EntryKind.memberFlip,
      member,
    }));
    const registers: LogEntry[] = Array.from({ length: 2_000 }, (_, index) => ({
      shardId: 8,
      amount: 0n,
      idempotencyKey: Buffer.alloc(0),
      fenceShardCount: 0,
      kind: EntryKind.distinct,
      payload: packRegisterChanges([[index * 8, 1 + (index % 30)]]),
    }));
    log.append(flips, 1n, nowMs);
    log.append(registers, 1n, nowMs);
    while (log.foldSlice(log.lastLsn, 1_000, nowMs - windowMs, nowMs) > 0);
    const primaryMemory = new NodeMemory();
    rebuildMemory(log, primaryMemory, new DedupIndex(windowMs), nowMs, windowMs);
    const parts = log.checkpointState([7, 8]).parts;
    // Both parts are several pieces long at this chunk size.
    expect(parts.get(7)!.get('members')!.length).toBeGreaterThan(4 * 2_048);
    const node = openNode(dir('follower'));
    logs.push(node.log);
    await install(log, node, 4_096);
    const installed = node.log.checkpointState([7, 8]).parts;
    expect(Buffer.isBuffer(installed.get(7)!.get('members'))).toBe(true);
    expect(installed.get(7)!.get('members')!.equals(parts.get(7)!.get('members')!)).toBe(true);
    expect(installed.get(8)!.get('sketch')!.equals(parts.get(8)!.get('sketch')!)).toBe(true);
    expect(stateOf(node.memory)).toEqual(stateOf(primaryMemory));
    expect(node.memory.memberCount(7)).toBe(5_000);
  });

  it('snapshot install: cut short, the log reopens empty (never half a snapshot) and the install starts over', async () => {
    const { log: primary } = primaryWith(600, 13);
    while (primary.foldSlice(500n, 100, nowMs - windowMs, nowMs) > 0);
    const followerDir = dir('follower');
    const node = openNode(followerDir);
    const chunkCount = await install(primary, node, 1_024, 2);
    expect(chunkCount).toBeGreaterThan(2);
    expect(node.log.installing).toBe(true);
    node.log.close();
    const reopened = openNode(followerDir);
    logs.push(reopened.log);
    expect(reopened.log.abandonedInstall).toBe(true);
    expect(reopened.log.installing).toBe(false);
    expect(reopened.log.lastLsn).toBe(0n);
    expect(reopened.memory.totals.shardCount).toBe(0);
    // A chunk that is not chunk 0 of a fresh install is refused.
    expect(() =>
      reopened.follower.installSnapshot({
        epoch: '2',
        snapshotId: 'snap-1',
        chunkIndex: 2,
        snapshotLsn: '500',
        snapshotEpoch: '2',
        shards: [],
        parts: [],
        keys: [],
        done: true,
        ...unchecked,
      }),
    ).toThrow(/not the one expected/);
    await install(primary, reopened, 1_024);
    expect(reopened.log.lastLsn).toBe(500n);
  });

  it('node identity: made once per data directory, kept across reopen, new after the directory is wiped', () => {
    const made = dir('identity');
    const first = ShardLog.open(made);
    const id = first.nodeId;
    first.close();
    const again = ShardLog.open(made);
    expect(again.nodeId).toBe(id);
    again.close();
    removeTempDir(made);
    const wiped = ShardLog.open(made);
    logs.push(wiped);
    expect(wiped.nodeId).not.toBe(id);
  });
});

/** The primary's own key index, rebuilt from its log. */
class DedupIndexOf {
  private readonly dedup = new DedupIndex(windowMs);
  constructor(log: ShardLog) {
    rebuildMemory(log, new NodeMemory(), this.dedup, nowMs, windowMs);
  }
  get(shardId: number, key: Buffer) {
    return this.dedup.get(shardId, key, nowMs);
  }
}
