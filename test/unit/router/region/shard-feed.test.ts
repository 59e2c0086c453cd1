// The publisher's side of the region feed over fakes: a pair's answer maps
// shard ids to counters (one shard: its total; several: an exact read); the
// next call starts from the position the node gave; a pair that fails keeps
// its position and makes the round incomplete; a shard behind its counter's
// clear reads as cleared; a shard the index does not know yet is read
// exactly once the directory holds it.
import { describe, expect, it } from 'vitest';
import { createLogger, type shardV1 } from '../../../../src/common/index.ts';
import { encodeShardColumns } from '../../../../src/wire/internal/index.ts';
import type { CounterInfo, PairInfo } from '../../../../src/router/directory/index.ts';
import { isPublishable } from '../../../../src/router/region/index.ts';
import { ShardFeed } from '../../../../src/router/region/publish/shard-feed.ts';

function counterOf(name: string, shardIds: number[], settings: Partial<CounterInfo> = {}): CounterInfo {
  return {
    name,
    kind: 'total',
    window: { bucketMs: 0, retentionMs: 0 },
    generation: 0,
    shards: shardIds.map((shardId, shardIndex) => ({ shardIndex, shardId, pairIndex: 0 })),
    ...settings,
  } as unknown as CounterInfo;
}

const pair = { pairIndex: 0, primary: 'p0', follower: 'f0', epoch: 1n, inSync: false, primaryId: 'n0', followerId: '' } as PairInfo;

function answer(feedId: string, seq: number, shards: [number, bigint, number][], full = false): shardV1.ChangedShardsResponse__Output {
  return {
    feedId,
    seq: String(seq),
    full,
    more: false,
    fullAfterShardId: '0',
    ...encodeShardColumns({
      shardIds: Float64Array.from(shards, ([id]) => id),
      totals: BigInt64Array.from(shards, ([, total]) => total),
      generations: Uint32Array.from(shards, ([, , generation]) => generation),
    }),
    lsn: '1',
    role: 'primary',
    epoch: '1',
    nodeId: 'n0',
  };
}

function setup() {
  const counters = new Map<string, CounterInfo>([
    ['one', counterOf('one', [1])],
    ['many', counterOf('many', [2, 3])],
    ['win', counterOf('win', [4], { window: { bucketMs: 1_000, retentionMs: 60_000 } })],
    ['cleared', counterOf('cleared', [5], { generation: 2 })],
  ]);
  const requests: shardV1.ChangedShardsRequest[] = [];
  const answers: (shardV1.ChangedShardsResponse__Output | Error)[] = [];
  const feed = new ShardFeed(
    { liveCounters: () => counters.values(), get: (name) => counters.get(name), allPairs: () => [pair] },
    {
      read: async <Request, Response>(_address: string, _method: 'ChangedShards', request: Request): Promise<Response> => {
        requests.push(request as shardV1.ChangedShardsRequest);
        const next = answers.shift() ?? new Error('no answer queued');
        if (next instanceof Error) throw next;
        return next as Response;
      },
    },
    1_000,
    isPublishable,
    createLogger('test', 'error'),
  );
  return { counters, requests, answers, feed };
}

describe('shard feed', () => {
  it('shard feed: one-shard counters take the shard total, several-shard ones are read exactly, window counters never; a shard behind a clear reads 0', async () => {
    const { requests, answers, feed } = setup();
    answers.push(
      answer(
        'f1',
        10,
        [
          [1, 7n, 0],
          [2, 1n, 0],
          [4, 9n, 0],
          [5, 3n, 1],
        ],
        true,
      ),
    );
    const round = await feed.collect([], () => undefined);
    expect(requests[0]).toMatchObject({ feedId: '', sinceSeq: '0', fullAfterShardId: '0' });
    expect(round.totals).toEqual([
      { counter: 'one', total: 7n, generation: 0 },
      { counter: 'cleared', total: 0n, generation: 2 },
    ]);
    expect([...round.exactNames]).toEqual(['many']);
    expect(round.complete).toBe(true);
    answers.push(answer('f1', 12, [[1, 8n, 0]]));
    expect((await feed.collect([], () => undefined)).totals).toEqual([{ counter: 'one', total: 8n, generation: 0 }]);
    expect(requests[1]).toMatchObject({ feedId: 'f1', sinceSeq: '10' });
  });

  it('shard feed: a pair that fails keeps its position and leaves the round incomplete', async () => {
    const { requests, answers, feed } = setup();
    answers.push(answer('f1', 10, [[1, 7n, 0]], true), new Error('unreachable'), answer('f1', 11, [[1, 9n, 0]]));
    await feed.collect([], () => undefined);
    const failed = await feed.collect([], () => undefined);
    expect(failed.complete).toBe(false);
    expect(failed.totals).toEqual([]);
    const next = await feed.collect([], () => undefined);
    expect(requests.slice(1).map((request) => request.sinceSeq)).toEqual(['10', '10']);
    expect(next.totals).toEqual([{ counter: 'one', total: 9n, generation: 0 }]);
  });

  it('shard feed: a shard of a counter made since the index was built is read exactly once the directory holds it; a written counter maps at once', async () => {
    const { counters, answers, feed } = setup();
    answers.push(answer('f1', 10, [], true));
    await feed.collect([], () => undefined);
    // Made through another router: the directory has it, the index not yet.
    counters.set('late', counterOf('late', [6]));
    answers.push(answer('f1', 11, [[6, 4n, 0]]));
    // The index is rebuilt at most every few rounds; until then the shard waits, then its counter is read exactly once.
    const exact: string[] = [];
    for (let round = 0; round < 4; round++) {
      answers.push(answer('f1', 11, []));
      exact.push(...(await feed.collect([], () => undefined)).exactNames);
    }
    expect(exact).toEqual(['late']);
    // Written through this router: indexed before the answers are mapped.
    counters.set('here', counterOf('here', [7]));
    answers.length = 0;
    answers.push(answer('f1', 12, [[7, 2n, 0]]));
    expect((await feed.collect(['here'], () => undefined)).totals).toEqual([{ counter: 'here', total: 2n, generation: 0 }]);
  });
});
