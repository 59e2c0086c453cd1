// Region components on a node: a max-register per (shard, origin region).
// Whatever order, duplication, replay or lateness the messages arrive in,
// the held component is the newest published, and the log (replay,
// checkpoint + tail, reopen) holds exactly what memory holds.
import { describe, expect, it } from 'vitest';
import { encodeComponent, mergeComponent, type RegionComponent } from '../../../src/wire/internal/index.ts';
import { EntryKind, type LogEntry, type ShardLog } from '../../../src/node/log/index.ts';
import { DedupIndex, NodeMemory, rebuildMemory } from '../../../src/node/state/index.ts';
import { seededRandom } from '../../helpers/seeded-random.ts';
import { useTempLogs } from '../../helpers/temp-log.ts';

const noKey = Buffer.alloc(0);
const windowMs = 60_000;

function componentEntry(shardId: number, component: RegionComponent): LogEntry {
  return {
    shardId,
    amount: 0n,
    idempotencyKey: noKey,
    fenceShardCount: 0,
    kind: EntryKind.regionComponent,
    payload: encodeComponent(component),
  };
}

/**
 * What an origin publishes for one counter: rounds of totals (a random walk,
 * negative steps included) under terms that rise at restarts, its tenure's
 * rounds starting again from 1.
 */
function publishedHistory(origin: string, random: () => number, count: number): RegionComponent[] {
  const history: RegionComponent[] = [];
  let term = 1n;
  let round = 0n;
  let total = 0n;
  for (let index = 0; index < count; index++) {
    if (random() < 0.1) {
      term += BigInt(1 + Math.floor(random() * 5));
      round = 0n;
    }
    round += BigInt(1 + Math.floor(random() * 3));
    total += BigInt(Math.floor(random() * 40) - 10);
    history.push({ origin, version: { term, round }, total, asOfUnixMs: 1_000 + index, generation: 0 });
  }
  return history;
}

/** Delivery as a bad network makes it: shuffled, some messages twice, some replayed much later. */
function deliveries(history: readonly RegionComponent[], random: () => number): RegionComponent[] {
  const sent = [...history];
  for (const component of history) if (random() < 0.3) sent.push(component);
  for (let index = sent.length - 1; index > 0; index--) {
    const other = Math.floor(random() * (index + 1));
    [sent[index], sent[other]] = [sent[other]!, sent[index]!];
  }
  // A replay of the oldest messages after everything else (a link resuming from too far back).
  return [...sent, ...history.slice(0, 5)];
}

function heldTotals(memory: NodeMemory, shardId: number): Record<string, bigint> {
  return Object.fromEntries(
    [...(memory.componentsOf(shardId) ?? new Map()).values()].map((component) => [component.origin, component.total]),
  );
}

describe('region components', () => {
  const { open, reopen } = useTempLogs('regions');

  it('merge: duplicated, reordered, replayed and late components leave the newest, and a naive sum would not', () => {
    for (const seed of [1, 2, 3, 4, 5, 6, 7, 8]) {
      const random = seededRandom(seed);
      const eu = publishedHistory('eu', random, 40);
      const ap = publishedHistory('ap', random, 25);
      const memory = new NodeMemory();
      let naive = 0n;
      const held = new Map<string, RegionComponent>();
      for (const component of deliveries([...eu, ...ap], random)) {
        memory.apply(componentEntry(3, component), 0);
        naive += component.total;
        held.set(component.origin, mergeComponent(held.get(component.origin), component));
      }
      const expected = { eu: eu.at(-1)!.total, ap: ap.at(-1)!.total };
      expect(heldTotals(memory, 3), `seed ${seed}`).toEqual(expected);
      expect(Object.fromEntries([...held].map(([origin, component]) => [origin, component.total]))).toEqual(expected);
      // What adding every message would give: wrong whenever a message was duplicated or replayed.
      expect(naive).not.toBe(expected.eu + expected.ap);
    }
  });

  it('merge: a component never moves back (an older version after a newer one changes nothing), and ties keep the held one', () => {
    const memory = new NodeMemory();
    const newer: RegionComponent = { origin: 'us', version: { term: 2n, round: 1n }, total: 10n, asOfUnixMs: 5, generation: 0 };
    const older: RegionComponent = { origin: 'us', version: { term: 1n, round: 900n }, total: 99n, asOfUnixMs: 9, generation: 0 };
    memory.apply(componentEntry(1, newer), 0);
    expect(memory.advancesComponent(1, older)).toBe(false);
    memory.apply(componentEntry(1, older), 0);
    expect(heldTotals(memory, 1)).toEqual({ us: 10n });
    const tie = { ...newer, total: 11n };
    expect(memory.advancesComponent(1, tie)).toBe(false);
    memory.apply(componentEntry(1, tie), 0);
    expect(heldTotals(memory, 1)).toEqual({ us: 10n });
  });

  it('log: replay, checkpoint + tail wherever the fold stops, and a reopen give the components memory holds; a drop frees them, a clear keeps them', () => {
    const log: ShardLog = open();
    const random = seededRandom(0x5e91);
    const live = new NodeMemory();
    const histories = ['eu', 'us', 'ap'].map((origin) => publishedHistory(origin, random, 30));
    const messages = deliveries(histories.flat(), random);
    let at = 0;
    for (let batch = 0; at < messages.length; batch++) {
      const entries: LogEntry[] = [];
      for (let item = 0; item < 1 + Math.floor(random() * 6) && at < messages.length; item++) {
        entries.push(componentEntry(1 + Math.floor(random() * 4), messages[at++]!));
        if (random() < 0.2) entries.push({ shardId: 1 + Math.floor(random() * 4), amount: 3n, idempotencyKey: noKey, fenceShardCount: 0 });
      }
      log.append(entries, 1n, 1_000 + batch);
      for (const entry of entries) live.apply(entry, 1_000 + batch);
    }
    log.append([{ shardId: 2, amount: 0n, idempotencyKey: noKey, fenceShardCount: 0, kind: EntryKind.drop }], 1n, 5_000);
    log.append(
      [
        {
          shardId: 3,
          amount: 0n,
          idempotencyKey: noKey,
          fenceShardCount: 0,
          kind: EntryKind.clear,
          payload: Buffer.from('0000000000000001', 'hex'),
        },
      ],
      1n,
      5_001,
    );
    live.apply({ shardId: 2, amount: 0n, idempotencyKey: noKey, fenceShardCount: 0, kind: EntryKind.drop }, 5_000);
    live.apply(
      {
        shardId: 3,
        amount: 0n,
        idempotencyKey: noKey,
        fenceShardCount: 0,
        kind: EntryKind.clear,
        payload: Buffer.from('0000000000000001', 'hex'),
      },
      5_001,
    );
    const expected = [1, 2, 3, 4].map((shardId) => heldTotals(live, shardId));
    expect(expected[1]).toEqual({});
    expect(Object.keys(expected[2]!).length).toBeGreaterThan(0);
    const rebuilt = (from: ShardLog): Record<string, bigint>[] => {
      const memory = new NodeMemory();
      rebuildMemory(from, memory, new DedupIndex(windowMs), 6_000, windowMs);
      return [1, 2, 3, 4].map((shardId) => heldTotals(memory, shardId));
    };
    expect(rebuilt(log)).toEqual(expected);
    for (const upto of [2n, log.lastLsn / 2n, log.lastLsn]) {
      while (log.foldSlice(upto, 7, 0, 6_000) > 0);
      expect(rebuilt(log)).toEqual(expected);
    }
    expect(rebuilt(reopen(log))).toEqual(expected);
  });
});
