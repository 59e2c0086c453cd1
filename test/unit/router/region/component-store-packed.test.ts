// ComponentStore.storePacked: a batch's totals go to each primary as one
// packed item (sketches as their own items in the same group); a group its
// node refuses is stored again one component at a time, so a refusal is only
// that component's; `applied` counts the components that moved a held one
// forward, whichever way they were stored. Directory and nodes are fakes that
// record what was sent.
import { status } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { ComponentStore } from '../../../../src/router/region/component-store.ts';
import { decodeComponent, decodePackedComponents, type RegionComponent } from '../../../../src/wire/internal/index.ts';
import type { ApplyItem } from '../../../../src/router/nodes/index.ts';

interface Sent {
  address: string;
  items: ApplyItem[];
}

function component(round: bigint, sketch?: Buffer): RegionComponent {
  return { origin: 'eu', version: { term: 1n, round }, total: round * 10n, asOfUnixMs: 5, generation: 0, ...(sketch ? { sketch } : {}) };
}

/** Counters c0..c5: even ones on pair 0 (primary p0), odd ones on pair 1 (p1); shard id = 100 + index; c5 is a distinct counter. */
function fakes(answer: (sent: Sent) => { code: number; message: string; applied: boolean[]; changed: string[] }): {
  store: ComponentStore;
  sent: Sent[];
} {
  const sent: Sent[] = [];
  const counterOf = (name: string): unknown => {
    const index = Number(name.slice(1));
    return {
      name,
      kind: index === 5 ? 'distinct' : 'total',
      window: { bucketMs: 0, retentionMs: 0 },
      shards: [{ shardId: 100 + index, pairIndex: index % 2 }],
      generation: 0,
    };
  };
  const directory = {
    get: counterOf,
    getOrCreate: async (name: string) => counterOf(name),
    getOrCreateMany: async () => undefined,
    pair: (pairIndex: number) => ({ primary: `p${pairIndex}` }),
    tombstone: () => undefined,
  };
  const pool = {
    get: (address: string) => ({
      sender: {
        send: async (items: ApplyItem[]) => {
          const one = { address, items };
          sent.push(one);
          return answer(one);
        },
      },
    }),
  };
  const deleteUpTo = async (): Promise<boolean> => false;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a fake of the parts storePacked uses
  const store = new ComponentStore(directory as any, pool as any, 1_000, async () => undefined, deleteUpTo);
  return { store, sent };
}

const sketch = Buffer.from([1, 2, 3]);

describe('component store: packed', () => {
  it('one packed item per primary for the totals, a sketch as its own item; applied is the rows the nodes moved', async () => {
    const { store, sent } = fakes(({ items }) => ({
      code: status.OK,
      message: '',
      applied: items.map(() => true),
      changed: items.map((item) =>
        item.op === 'REGION_COMPONENTS' ? String(decodePackedComponents(item.component as Buffer).length - 1) : '1',
      ),
    }));
    const batch = ['c0', 'c1', 'c2', 'c3', 'c4', 'c5'].map((counter, index) => ({
      counter,
      component: component(BigInt(index + 1), counter === 'c5' ? sketch : undefined),
    }));
    const { settled, applied } = await store.storePacked(batch);
    expect(settled.every((outcome) => outcome.status === 'fulfilled')).toBe(true);
    expect(sent.map(({ address }) => address).sort()).toEqual(['p0', 'p1']);
    const p0 = sent.find(({ address }) => address === 'p0')!.items;
    expect(p0.map((item) => item.op)).toEqual(['REGION_COMPONENTS']);
    expect(p0[0]!.shardId).toBe('100');
    expect(decodePackedComponents(p0[0]!.component as Buffer).map((row) => [row.shardId, row.component.total])).toEqual([
      [100, 10n],
      [102, 30n],
      [104, 50n],
    ]);
    const p1 = sent.find(({ address }) => address === 'p1')!.items;
    expect(p1.map((item) => item.op)).toEqual(['REGION_COMPONENT', 'REGION_COMPONENTS']);
    expect(decodeComponent(p1[0]!.component as Buffer).sketch).toEqual(sketch);
    expect(decodePackedComponents(p1[1]!.component as Buffer).map((row) => row.shardId)).toEqual([101, 103]);
    // p0: 3 rows, 2 moved; p1: the sketch moved, 2 rows, 1 moved.
    expect(applied).toBe(2 + 1 + 1);
  });

  it('a group its node refuses is stored one component at a time: only the refused component fails', async () => {
    const { store, sent } = fakes(({ items }) => {
      if (items.some((item) => item.op === 'REGION_COMPONENTS'))
        return { code: status.INVALID_ARGUMENT, message: 'unknown op REGION_COMPONENTS', applied: [], changed: [] };
      if (items[0]!.shardId === '102') return { code: status.NOT_FOUND, message: 'shard 102 was dropped', applied: [], changed: [] };
      return { code: status.OK, message: '', applied: [true], changed: ['1'] };
    });
    const batch = ['c0', 'c1', 'c2', 'c3'].map((counter, index) => ({ counter, component: component(BigInt(index + 1)) }));
    const { settled, applied } = await store.storePacked(batch);
    expect(settled.map((outcome) => outcome.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    expect(((settled[2] as PromiseRejectedResult).reason as Error).message).toMatch(/shard 102 was dropped/);
    expect(applied).toBe(3);
    // Two packed groups refused, then four one-component items.
    expect(sent.filter(({ items }) => items[0]!.op === 'REGION_COMPONENTS')).toHaveLength(2);
    expect(sent.filter(({ items }) => items.length === 1 && items[0]!.op === 'REGION_COMPONENT')).toHaveLength(4);
  });
});
