// ChangedShards, the region publisher's feed, against real nodes: bad input
// is refused and changes nothing; a first call answers every shard, a later
// one only what changed since its position; after a node restart or a
// failover the old position is unknown, the answer is full again, and no
// shard's total is below what the feed answered before (a failover never
// takes back what the feed showed).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { credentials, status, type ServiceError } from '@grpc/grpc-js';
import { ShardNodeClient, type shardV1 } from '../../src/common/index.ts';
import { decodeShardColumns, shardProtocolStamp } from '../../src/wire/internal/index.ts';
import { startCluster, waitFor, waitForHealthy, type TestCluster } from '../helpers/cluster.ts';

function changedShards(address: string, request: Partial<shardV1.ChangedShardsRequest>): Promise<shardV1.ChangedShardsResponse__Output> {
  const rpc = new ShardNodeClient(address, credentials.createInsecure());
  return new Promise((resolve, reject) =>
    rpc.ChangedShards(
      { shardsMax: 1_000, protocol: shardProtocolStamp, ...request },
      { deadline: Date.now() + 5_000 },
      (error, response) => {
        rpc.close();
        if (error || response === undefined) reject(error ?? new Error('no response'));
        else resolve(response);
      },
    ),
  );
}

/** The answer's totals by shard id. */
function totalsOf(response: shardV1.ChangedShardsResponse__Output): Map<number, bigint> {
  const columns = decodeShardColumns(response);
  return new Map(Array.from(columns.shardIds, (shardId, index) => [shardId, columns.totals[index]!]));
}

describe('region feed (ChangedShards)', () => {
  let cluster: TestCluster;
  const shardOf = new Map<string, number>();

  beforeAll(async () => {
    cluster = await startCluster({ pairs: 1, routerArgs: ['--failover-timeout-ms', '1500', '--follower-timeout-ms', '800'] });
    for (const name of ['feed:a', 'feed:b', 'feed:c']) {
      await cluster.client.increment(name, 5n);
      shardOf.set(name, (await cluster.client.describe(name)).placements[0]!.shardId);
    }
  }, 60_000);

  afterAll(async () => {
    await cluster?.stop();
  });

  it('feed: bad input is refused INVALID_ARGUMENT and changes nothing', async () => {
    const primary = cluster.cluster.node(0, 'primary').address;
    const bad: Partial<shardV1.ChangedShardsRequest>[] = [
      { shardsMax: 0 },
      { shardsMax: 100_001 },
      { feedId: 'x'.repeat(65) },
      { sinceSeq: '18446744073709551615' },
      { fullAfterShardId: '9007199254740993' },
    ];
    for (const request of bad)
      await expect(changedShards(primary, request), JSON.stringify(request)).rejects.toMatchObject({ code: status.INVALID_ARGUMENT });
    expect((await cluster.client.read('feed:a')).total).toBe(5n);
    const full = await changedShards(primary, {});
    expect(full.full).toBe(true);
    expect(totalsOf(full).get(shardOf.get('feed:a')!)).toBe(5n);
  });

  it('feed: a first call answers every shard; a later one only the shards changed since its position, each once', async () => {
    const primary = cluster.cluster.node(0, 'primary').address;
    const first = await changedShards(primary, {});
    expect(first.full).toBe(true);
    expect(first.more).toBe(false);
    expect([...totalsOf(first).keys()].sort()).toEqual([...shardOf.values()].sort());
    await cluster.client.increment('feed:b', 3n);
    await cluster.client.increment('feed:b', -1n);
    await cluster.client.increment('feed:c', 4n);
    const next = await changedShards(primary, { feedId: first.feedId, sinceSeq: first.seq });
    expect(next.full).toBe(false);
    expect(next.feedId).toBe(first.feedId);
    expect(totalsOf(next)).toEqual(
      new Map([
        [shardOf.get('feed:b')!, 7n],
        [shardOf.get('feed:c')!, 9n],
      ]),
    );
    const idle = await changedShards(primary, { feedId: next.feedId, sinceSeq: next.seq });
    expect(decodeShardColumns(idle).shardIds.length).toBe(0);
    expect(idle.seq).toBe(next.seq);
    // A full answer in pages of one shard: every shard once, in id order, then the position of its first page.
    const pages: number[] = [];
    let page = await changedShards(primary, { shardsMax: 1 });
    const resumeSeq = page.seq;
    for (;;) {
      pages.push(...decodeShardColumns(page).shardIds);
      if (!page.more) break;
      page = await changedShards(primary, {
        shardsMax: 1,
        feedId: page.feedId,
        sinceSeq: resumeSeq,
        fullAfterShardId: String(pages.at(-1)),
      });
      expect(page.full).toBe(true);
    }
    expect(pages).toEqual([...shardOf.values()].sort((a, b) => a - b));
  });

  it('feed: after a restart of the primary and after a failover, an old position answers full, never below what it answered before', async () => {
    const primaryNode = cluster.cluster.node(0, 'primary');
    const followerNode = cluster.cluster.node(0, 'follower');
    const before = await changedShards(primaryNode.address, {});
    const seen = totalsOf(before);
    // Increments the follower confirmed right before the kill: the feed answered them, the promoted follower must hold them.
    await cluster.client.increment('feed:a', 10n);
    const last = await changedShards(primaryNode.address, { feedId: before.feedId, sinceSeq: before.seq });
    for (const [shardId, total] of totalsOf(last)) seen.set(shardId, total);
    expect(seen.get(shardOf.get('feed:a')!)).toBe(15n);

    await primaryNode.process.stop('SIGKILL');
    const promoted = await waitFor(
      async () => {
        const answer = await changedShards(followerNode.address, { feedId: last.feedId, sinceSeq: last.seq }).catch(() => undefined);
        return answer?.role === 'primary' ? answer : undefined;
      },
      // A failover and the promoted node's first confirmed answer: seconds alone, longer beside the suite's other chaos files.
      { timeoutMs: 45_000, what: 'the promoted follower answering the feed as primary' },
    );
    expect(promoted.full).toBe(true);
    expect(promoted.feedId).not.toBe(last.feedId);
    const afterFailover = totalsOf(promoted);
    for (const [shardId, total] of seen) expect(afterFailover.get(shardId), `shard ${shardId}`).toBeGreaterThanOrEqual(total);
    expect(afterFailover.get(shardOf.get('feed:a')!)).toBe(15n);

    // The old primary back on its disk (now the follower): a memory rebuilt from the log is another feed.
    await primaryNode.process.start();
    await waitForHealthy(cluster.client);
    const restarted = await waitFor(
      async () => {
        const answer = await changedShards(primaryNode.address, { feedId: before.feedId, sinceSeq: before.seq }).catch(
          (error: ServiceError) => (error.code === status.UNAVAILABLE ? undefined : Promise.reject(error)),
        );
        return answer;
      },
      { timeoutMs: 20_000 },
    );
    expect(restarted.full).toBe(true);
    expect(restarted.feedId).not.toBe(before.feedId);
    const rebuilt = totalsOf(restarted);
    for (const [shardId, total] of seen) expect(rebuilt.get(shardId), `shard ${shardId}`).toBeGreaterThanOrEqual(total);
  }, 120_000);
});
