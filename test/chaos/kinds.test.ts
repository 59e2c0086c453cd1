// Distinct sketches, window buckets and member sets under attack: SIGKILL
// every node while checkpoints fold every 50 ms, fail a membership counter
// over to its follower, and corrupt a partition's count on disk to see
// rebuild find it (and repair it only when asked).
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { status } from '@grpc/grpc-js';
import { rowChecksum } from '../../src/node/log/checksums.ts';
import { startCluster, scrapeMetric, waitFor, waitForHealthy, type TestCluster } from '../helpers/cluster.ts';
import { rejection } from '../helpers/rejection.ts';
import { partitionOf } from '../../src/membership/index.ts';

const failoverArgs = ['--failover-timeout-ms', '1500', '--follower-timeout-ms', '800'];

describe('chaos: distinct, window and membership state', () => {
  let tc: TestCluster | undefined;
  afterEach(async () => {
    await tc?.stop();
    tc = undefined;
  });

  it(
    'kinds: sketches, window buckets and member sets survive SIGKILL of every node and a restart, from checkpoint + tail',
    { timeout: 90_000 },
    async () => {
      tc = await startCluster({ pairs: 1, metrics: true, nodeArgs: ['--checkpoint-interval-ms', '50'] });
      const { client, cluster } = tc;
      await client.configure('pageviews', { window: { bucketMs: 1_000, retentionMs: 600_000 } });
      await client.setShards('pageviews', 3);
      let views = 0n;
      for (let round = 0; round < 4; round++) {
        await client.addDistinct(
          'visitors',
          Array.from({ length: 2_500 }, (_, index) => `v${round * 2_000 + index}`),
        );
        for (let step = 0; step < 20; step++) {
          await client.increment('pageviews', round + 1);
          views += BigInt(round + 1);
        }
        for (let member = 0; member < 50; member++) await client.setMember('likes', BigInt(round * 50 + member), true);
        await client.setMember('likes', BigInt(round * 50), false);
        // Some state folds into the checkpoint, some stays in the log's tail.
        if (round === 1)
          await waitFor(async () => (await scrapeMetric(cluster.nodes[0]!.metricsPort, 'tally_checkpoint_lsn')) > 0, {
            timeoutMs: 10_000,
            what: 'a checkpoint',
          });
      }
      const likes = Array.from({ length: 200 }, (_, member) => BigInt(member));
      const before = {
        visitors: await client.countDistinct('visitors'),
        window: (await client.readWindow('pageviews', 600_000)).total,
        likes: (await client.read('likes')).total,
        present: await client.isMember('likes', likes),
      };
      expect(before.window).toBe(views);
      expect(before.likes).toBe(196n);

      await Promise.all(cluster.nodes.map((node) => node.process.stop('SIGKILL')));
      await Promise.all(cluster.nodes.map((node) => node.process.start()));
      await waitForHealthy(client);

      const visitors = await waitFor(() => client.countDistinct('visitors'), { timeoutMs: 15_000, what: 'the restarted cluster' });
      expect(visitors).toEqual(before.visitors);
      expect(Math.abs(visitors.estimate - 8_500) / 8_500).toBeLessThan(0.03);
      expect((await client.readWindow('pageviews', 600_000)).total).toBe(views);
      expect((await client.read('pageviews')).total).toBe(views);
      expect((await client.read('likes')).total).toBe(196n);
      expect(await client.isMember('likes', likes)).toEqual(before.present);
      expect((await client.rebuild('likes')).drift).toBe(0n);
      // Adding the same members again still changes nothing after recovery.
      expect((await client.addDistinct('visitors', ['v0', 'v1', 'v7999'])).registersChanged).toBe(0);
    },
  );

  it(
    'membership: with the follower in sync, SIGKILL of the primary during flips fails over and keeps every member and the count',
    { timeout: 90_000 },
    async () => {
      tc = await startCluster({ pairs: 1, routerArgs: [...failoverArgs, '--member-partitions', '4'] });
      const { client, cluster } = tc;
      for (let member = 0n; member < 100n; member++) await client.setMember('follows', member, true);
      await waitForHealthy(client);
      await waitFor(async () => (await client.clusterStatus()).nodes.every((node) => node.inSync), {
        timeoutMs: 15_000,
        what: 'the pair to be in sync',
      });
      const oldPrimary = cluster.node(0, 'primary');
      // Each caller owns 20 members, so the last acknowledged call decides each
      // member's state; a failed call leaves it unknown until a later one succeeds.
      const expected = new Map<bigint, boolean | undefined>(Array.from({ length: 160 }, (_, member) => [BigInt(member), member < 100]));
      let stop = false;
      let acknowledged = 0;
      const flippers = Array.from({ length: 8 }, async (_, caller) => {
        for (let step = 0; !stop; step++) {
          const member = BigInt(caller * 20 + ((step * 7) % 20));
          const present = (step + caller) % 3 !== 0;
          try {
            await client.setMember('follows', member, present);
            expected.set(member, present);
            acknowledged++;
          } catch {
            expected.set(member, undefined);
          }
        }
      });
      // As many acknowledged flips as members before the kill, and as many again on the promoted node.
      await waitFor(() => acknowledged >= 160, { timeoutMs: 15_000, what: '160 flips acknowledged before the kill' });
      await oldPrimary.process.stop('SIGKILL');
      await waitFor(async () => (await client.describe('follows')).placements[0]!.primary !== oldPrimary.address, {
        timeoutMs: 15_000,
        what: 'the follower to be promoted',
      });
      const acknowledgedAtPromotion = acknowledged;
      await waitFor(() => acknowledged >= acknowledgedAtPromotion + 160, {
        timeoutMs: 15_000,
        what: '160 flips acknowledged after the promotion',
      });
      stop = true;
      await Promise.all(flippers);
      const members = Array.from({ length: 160 }, (_, member) => BigInt(member));
      const present = await client.isMember('follows', members);
      // Every acknowledged flip survived the failover: each member is as its last acknowledged call left it.
      const known = members.filter((member) => expected.get(member) !== undefined);
      expect(known.length).toBeGreaterThan(100);
      expect(known.filter((member) => present[Number(member)] !== expected.get(member))).toEqual([]);
      expect(acknowledged).toBeGreaterThan(20);
      expect((await client.read('follows')).total).toBe(BigInt(present.filter(Boolean).length));
      expect((await client.rebuild('follows')).drift).toBe(0n);
      // ...and after the old primary rejoins as the follower and takes over again.
      await oldPrimary.process.start();
      await waitFor(async () => (await client.clusterStatus()).nodes.every((node) => node.inSync), {
        timeoutMs: 20_000,
        what: 'the old primary to rejoin in sync',
      });
      const newPrimary = cluster.nodes.find((node) => node.address !== oldPrimary.address)!;
      await newPrimary.process.stop('SIGKILL');
      await waitFor(async () => (await client.describe('follows')).placements[0]!.primary === oldPrimary.address, {
        timeoutMs: 15_000,
        what: 'the old primary to be promoted back',
      });
      expect(await waitFor(() => client.isMember('follows', members), { timeoutMs: 10_000 })).toEqual(present);
      expect((await client.read('follows')).total).toBe(BigInt(present.filter(Boolean).length));
    },
  );

  it(
    'distinct: a follower that was away catches up through more sketch rows than several replication frames carry',
    { timeout: 120_000 },
    async () => {
      tc = await startCluster({ pairs: 1, routerArgs: failoverArgs });
      const { client, cluster } = tc;
      await client.addDistinct('wide:0', ['x']);
      await waitFor(async () => (await client.clusterStatus()).nodes.every((node) => node.inSync), {
        timeoutMs: 15_000,
        what: 'the pair to be in sync',
      });
      const follower = cluster.node(0, 'follower');
      await follower.process.stop('SIGKILL');
      // ~3 KB of register changes per row: 600 rows are ~1.8 MB behind the follower, about seven
      // replication frames of replicationFrameBytesMax (256 KiB).
      for (let batch = 0; batch < 10; batch++) {
        await Promise.all(
          Array.from({ length: 60 }, (_, index) => {
            const counter = `wide:${batch * 60 + index}`;
            return client.addDistinct(
              counter,
              Array.from({ length: 1_000 }, (_, member) => `${counter}:${member}`),
            );
          }),
        );
      }
      await follower.process.start();
      // In sync again, and both nodes answer with the same log end (a node busy catching up may not answer at first).
      await waitFor(
        async () => {
          const nodes = (await client.clusterStatus()).nodes;
          return (
            nodes.every((node) => node.inSync && node.health === 'SERVING') &&
            nodes[0]!.lastLsn === nodes[1]!.lastLsn &&
            nodes[0]!.lastLsn > 600n
          );
        },
        { timeoutMs: 60_000, what: 'the follower to catch up and the pair to be in sync again' },
      );
      // A count over 100 counters (one merged sketch per pair) stays small and exact to the estimate.
      const names = Array.from({ length: 100 }, (_, index) => `wide:${index}`);
      const union = await client.countDistinct(names);
      expect(Math.abs(union.estimate - 100_000) / 100_000).toBeLessThan(0.03);
    },
  );

  it(
    'membership: with one pair wholly down, a flip on a live pair is done and says so; only its count is unavailable',
    { timeout: 60_000 },
    async () => {
      tc = await startCluster({ pairs: 2, routerArgs: ['--member-partitions', '4'] });
      const { client, cluster } = tc;
      await client.setMember('split', 1n, true);
      const placements = (await client.describe('split')).placements;
      const onLivePair = Array.from({ length: 1_000 }, (_, index) => BigInt(index + 100)).find(
        (member) => placements[partitionOf(member, 4)]!.pair === 0,
      )!;
      await Promise.all([cluster.node(1, 'primary').process.stop('SIGKILL'), cluster.node(1, 'follower').process.stop('SIGKILL')]);
      const flipped = await client.setMember('split', onLivePair, true);
      expect(flipped).toEqual({ changed: true, count: undefined });
      expect(await client.isMember('split', [onLivePair])).toEqual([true]);
      await Promise.all([cluster.node(1, 'primary').process.start(), cluster.node(1, 'follower').process.start()]);
      await waitForHealthy(client);
      expect((await waitFor(() => client.read('split'), { timeoutMs: 10_000 })).total).toBe(onLivePair === 1n ? 1n : 2n);
    },
  );

  it(
    'rebuild: a count corrupted on disk is reported as drift and exported, and repaired only when asked',
    { timeout: 60_000 },
    async () => {
      tc = await startCluster({ pairs: 1, metrics: true, routerArgs: ['--member-partitions', '4'] });
      const { client, cluster } = tc;
      for (let member = 0n; member < 40n; member++) await client.setMember('reviews', member, true);
      expect((await client.rebuild('reviews')).drift).toBe(0n);
      const shardId = (await client.describe('reviews')).placements[2]!.shardId;

      // Stop both nodes and append to the primary's log an increment no member
      // flip explains, checksummed as a writer's bug would write it (a value
      // moved on the disk fails its checksum instead): the stored count now
      // disagrees with the bitmap.
      await cluster.stop('SIGTERM');
      const db = new Database(path.join(cluster.node(0, 'primary').dataDir, 'node.sqlite'));
      const last = db.prepare('SELECT max(lsn) AS lsn, max(epoch) AS epoch FROM log').get() as { lsn: number | null; epoch: number | null };
      const meta = (key: string) =>
        Number((db.prepare('SELECT value FROM meta WHERE key = ?').get(key) as { value: string } | undefined)?.value ?? 0);
      const lastLsn = Math.max(last.lsn ?? 0, meta('checkpoint_lsn'));
      const epoch = Math.max(last.epoch ?? 0, meta('checkpoint_epoch'));
      const atMs = Date.now();
      const crc = rowChecksum(BigInt(lastLsn + 1), BigInt(epoch), shardId, 5n, null, null, atMs, null, null, null);
      db.prepare('INSERT INTO log (lsn, epoch, shard_id, amount, at_ms, crc) VALUES (?, ?, ?, ?, ?, ?)').run(
        lastLsn + 1,
        epoch,
        shardId,
        5,
        atMs,
        crc,
      );
      db.close();
      await cluster.start();
      await waitForHealthy(client);

      expect((await client.read('reviews')).total).toBe(45n);
      const report = await client.rebuild('reviews');
      expect([report.members, report.storedCount, report.drift, report.repaired]).toEqual([40n, 45n, 5n, false]);
      expect(
        report.partitions.filter((partition) => partition.drift !== 0n).map((partition) => [partition.partition, partition.drift]),
      ).toEqual([[2, 5n]]);
      expect(await scrapeMetric(tc.routerMetricsPort, 'tally_membership_drift')).toBe(5);
      // Reporting did not repair.
      expect((await client.read('reviews')).total).toBe(45n);

      // Without the follower's figures a repair is refused: the correction would replay there unchecked.
      await cluster.node(0, 'follower').process.stop('SIGKILL');
      const blind = await client.rebuild('reviews');
      expect([blind.drift, blind.partitions[2]!.followerDrift]).toEqual([5n, undefined]);
      const refused = await rejection(client.rebuild('reviews', { repair: true }));
      expect(refused.grpcCode).toBe(status.FAILED_PRECONDITION);
      expect(refused.message).toMatch(/follower unreadable/);
      expect((await client.read('reviews')).total).toBe(45n);
      await cluster.node(0, 'follower').process.start();
      // The corrupt row replicated: the follower shows the same drift, so a repair is safe.
      await waitFor(async () => (await client.rebuild('reviews')).partitions[2]!.followerDrift === 5n, {
        timeoutMs: 10_000,
        what: 'the follower to show the drift',
      });
      const repaired = await client.rebuild('reviews', { repair: true });
      expect(repaired.repaired).toBe(true);
      expect(repaired.partitions[2]!.repaired).toBe(-5n);
      expect((await client.read('reviews')).total).toBe(40n);
      expect((await client.rebuild('reviews')).drift).toBe(0n);
      await waitFor(async () => (await client.rebuild('reviews')).partitions.every((partition) => partition.followerDrift === 0n), {
        timeoutMs: 10_000,
        what: 'the repair to reach the follower',
      });
      expect(await scrapeMetric(tc.routerMetricsPort, 'tally_membership_drift')).toBe(0);
      // The repair went through the log: it survives a restart.
      await cluster.stop('SIGKILL');
      await cluster.start();
      await waitForHealthy(client);
      expect((await client.read('reviews')).total).toBe(40n);
    },
  );
});
