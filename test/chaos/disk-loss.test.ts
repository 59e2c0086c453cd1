// G1 (a node that loses its disk), G3 and G5 under attack: wipe a node's data
// directory and bring it back empty, away past its primary's checkpoints, or
// SIGKILL nodes at random, and check that no exact read goes below what was
// acknowledged and that an empty node is refilled, never trusted as a source.
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { status } from '@grpc/grpc-js';
import { TallyError, type TallyClient } from '../../src/client/index.ts';
import type { NodeProcess } from '../../src/cluster/local-cluster.ts';
import { isHealthy, pause, scrapeMetric, startCluster, waitFor, waitForHealthy, type TestCluster } from '../helpers/cluster.ts';
import { Ledger, classify, startLoad, expectNoDrift } from '../helpers/load.ts';

const failoverArgs = ['--failover-timeout-ms', '1500', '--follower-timeout-ms', '800'];
const pollIntervalMs = 20;

function describeError(error: unknown): string {
  return error instanceof TallyError ? `${status[error.grpcCode] ?? error.grpcCode}: ${error.message}` : String(error);
}

function isUnavailable(error: unknown): boolean {
  return error instanceof TallyError && error.grpcCode === status.UNAVAILABLE;
}

/** What a node held on disk when it last started, from its "ready" log line. */
function readyState(tc: TestCluster, name: string): { lastLsn: bigint; checkpointLsn: bigint } {
  const prefix = `[${name}] `;
  for (let index = tc.logs.length - 1; index >= 0; index--) {
    const line = tc.logs[index]!;
    if (!line.startsWith(prefix) || !line.includes('"msg":"ready"')) continue;
    const fields = JSON.parse(line.slice(prefix.length)) as { lastLsn: string; checkpointLsn: string };
    return { lastLsn: BigInt(fields.lastLsn), checkpointLsn: BigInt(fields.checkpointLsn) };
  }
  throw new Error(`${name} logged no ready line`);
}

/** SIGKILL, remove the node's data directory, start it again: it must come back with an empty log. */
async function wipeAndRestart(tc: TestCluster, node: NodeProcess): Promise<void> {
  await node.process.stop('SIGKILL');
  fs.rmSync(node.dataDir, { recursive: true, force: true });
  expect(fs.existsSync(node.dataDir)).toBe(false);
  await node.process.start();
  expect(readyState(tc, node.process.name)).toEqual({ lastLsn: 0n, checkpointLsn: 0n });
}

async function lastLsnOf(client: TallyClient, address: string): Promise<bigint> {
  const node = (await client.clusterStatus()).nodes.find((candidate) => candidate.address === address);
  if (node === undefined || node.health !== 'SERVING') throw new Error(`${address} is not serving`);
  return node.lastLsn;
}

/** waitForHealthy; on a timeout, the cluster's own account of where it stuck. */
async function waitForHealed(client: TallyClient, timeoutMs: number): Promise<void> {
  try {
    await waitForHealthy(client, timeoutMs);
  } catch (error) {
    const nodes = await client
      .clusterStatus()
      .then(
        (cluster) =>
          cluster.nodes
            .map(
              (node) =>
                `${node.address} ${node.role} ${node.health} lastLsn=${node.lastLsn} inSync=${node.inSync} lag=${node.replicationLagEntries} ${node.error}`,
            )
            .join('; '),
        describeError,
      );
    throw new Error(`${(error as Error).message} (${nodes})`, { cause: error });
  }
}

/**
 * Exact reads of `counters` in a loop until stopped. Each must fail
 * UNAVAILABLE or return, exactly, at least what the ledger had acknowledged
 * before the read began; anything else is kept as a violation.
 */
function watchReads(client: TallyClient, ledger: Ledger, counters: readonly string[]) {
  const violations: string[] = [];
  const counts = { ok: 0, unavailable: 0 };
  let running = true;
  const loop = (async () => {
    while (running) {
      const acknowledged = new Map(ledger.ok);
      try {
        const values = await client.readMany(counters, { deadlineMs: 5_000 });
        counts.ok++;
        for (const value of values) {
          const floor = acknowledged.get(value.counter) ?? 0n;
          if (!value.exact || value.total < floor)
            violations.push(`${value.counter}: read ${value.total} (exact=${value.exact}), acknowledged before the read ${floor}`);
        }
      } catch (error) {
        if (isUnavailable(error)) counts.unavailable++;
        else violations.push(`read failed other than UNAVAILABLE: ${describeError(error)}`);
      }
      await pause(pollIntervalMs);
    }
  })();
  return {
    violations,
    counts,
    stop: async () => {
      running = false;
      await loop;
    },
  };
}

// The first four attacks each on a cluster of its own, at once: most of each
// is waiting out restarts, failovers and refills. The availability test runs
// alone after them, since it measures how many calls succeed.
describe('chaos: disk loss', () => {
  it.concurrent(
    'a primary killed, its data directory wiped and restarted empty before the failover timeout never makes an exact read go below what was acknowledged; after healing every acknowledged increment is there and the pair is back in sync',
    { timeout: 60_000 },
    async ({ onTestFinished }) => {
      // The failover timeout is far longer than a restart: the router sees the same address come back, empty.
      const tc = await startCluster({ pairs: 1, routerArgs: ['--failover-timeout-ms', '10000'] });
      onTestFinished(() => tc.stop());
      const { client, cluster } = tc;
      const victim = cluster.node(0, 'primary');
      const other = cluster.node(0, 'follower');
      await client.increment('wipe:keyed', 1, { idempotencyKey: 'wipe:seed' });
      await client.setShards('wipe:keyed', 4);
      await client.increment('wipe:live', 1, { idempotencyKey: null });
      const keys = Array.from({ length: 200 }, (_, index) => ({ key: `wipe:${index}`, amount: BigInt((index % 5) + 1) }));
      for (let start = 0; start < keys.length; start += 20) {
        const results = await Promise.all(
          keys.slice(start, start + 20).map(({ key, amount }) => client.increment('wipe:keyed', amount, { idempotencyKey: key })),
        );
        expect(results.every((result) => result.applied)).toBe(true);
      }
      for (let start = 0; start < 100; start += 20) {
        await Promise.all(Array.from({ length: 20 }, () => client.increment('wipe:unkeyed', 2, { idempotencyKey: null })));
      }
      await waitForHealthy(client);
      const inSync = (await client.clusterStatus()).nodes;
      expect(inSync.map((node) => node.lastLsn)).toEqual([inSync[0]!.lastLsn, inSync[0]!.lastLsn]);
      expect(inSync[0]!.lastLsn).toBeGreaterThan(300n);
      expect((await client.describe('wipe:keyed')).placements.every((placement) => placement.primary === victim.address)).toBe(true);

      // A trickle of unkeyed writes throughout: the floor of every read keeps rising.
      const load = startLoad(client, { concurrency: 2, counters: () => 'wipe:live' });
      const keyedTotal = 1n + keys.reduce((sum, { amount }) => sum + amount, 0n);
      load.ledger.record('wipe:keyed', keyedTotal, 'ok');
      load.ledger.record('wipe:unkeyed', 200n, 'ok');
      load.ledger.record('wipe:live', 1n, 'ok');
      const counters = ['wipe:keyed', 'wipe:unkeyed', 'wipe:live'];
      const reads = watchReads(client, load.ledger, counters);
      await waitFor(() => reads.counts.ok > 5 && load.ledger.okCalls > 50, { timeoutMs: 10_000, what: 'reads and writes before the kill' });

      const readsAtKill = reads.counts.ok + reads.counts.unavailable;
      await wipeAndRestart(tc, victim);
      const readsWhileDown = reads.counts.ok + reads.counts.unavailable - readsAtKill;
      const okAtRestart = load.ledger.okCalls;

      // Fails at the first read below the floor; otherwise waits for the pair to heal.
      await waitFor(async () => reads.violations.length > 0 || (await isHealthy(client)), { timeoutMs: 30_000, what: 'the pair to heal' });
      expect(reads.violations.slice(0, 5)).toEqual([]);
      const okReadsAtHeal = reads.counts.ok;
      await waitFor(() => reads.counts.ok > okReadsAtHeal + 20 && load.ledger.okCalls > okAtRestart + 50, {
        timeoutMs: 15_000,
        what: 'reads and writes after healing',
      });
      await reads.stop();
      await load.stop();
      expect(reads.violations.slice(0, 5)).toEqual([]);
      expect(readsWhileDown).toBeGreaterThan(0);

      await load.ledger.expectWithinBounds(client);
      const retried = await Promise.all(keys.map(({ key, amount }) => client.increment('wipe:keyed', amount, { idempotencyKey: key })));
      expect(retried.filter((result) => result.applied)).toEqual([]);
      await expectNoDrift(client);

      // The wiped node holds everything again: kill the other copy and read from it alone.
      await other.process.stop('SIGKILL');
      await waitFor(
        async () => (await client.describe('wipe:keyed')).placements.every((placement) => placement.primary === victim.address),
        {
          timeoutMs: 20_000,
          what: 'the wiped node to be the primary',
        },
      );
      await waitFor(() => client.readMany(counters, { deadlineMs: 2_000 }), {
        timeoutMs: 15_000,
        what: 'an exact read from the wiped node alone',
      });
      await load.ledger.expectWithinBounds(client);
      const retriedAgain = await Promise.all(
        keys.map(({ key, amount }) => client.increment('wipe:keyed', amount, { idempotencyKey: key })),
      );
      expect(retriedAgain.filter((result) => result.applied)).toEqual([]);
      await load.ledger.expectWithinBounds(client);
    },
  );

  it.concurrent(
    'an empty follower on an idle pair is never promoted; the shard stays UNAVAILABLE until its primary returns with everything',
    { timeout: 60_000 },
    async ({ onTestFinished }) => {
      // A follower timeout far past a restart: the router does not see the follower go,
      // so only the node's identity can tell it that the follower is new and empty.
      const tc = await startCluster({ pairs: 1, routerArgs: ['--failover-timeout-ms', '1500', '--follower-timeout-ms', '10000'] });
      onTestFinished(() => tc.stop());
      const { client, cluster } = tc;
      const primary = cluster.node(0, 'primary');
      const follower = cluster.node(0, 'follower');
      const ledger = new Ledger();
      await client.increment('idle:keyed', 1, { idempotencyKey: 'idle:seed' });
      ledger.record('idle:keyed', 1n, 'ok');
      await client.setShards('idle:keyed', 2);
      const keys = Array.from({ length: 100 }, (_, index) => `idle:${index}`);
      for (let start = 0; start < keys.length; start += 20) {
        await Promise.all(keys.slice(start, start + 20).map((key) => client.increment('idle:keyed', 3, { idempotencyKey: key })));
      }
      ledger.record('idle:keyed', 300n, 'ok');
      for (let index = 0; index < 50; index++) {
        await client.increment('idle:unkeyed', 1, { idempotencyKey: null });
        ledger.record('idle:unkeyed', 1n, 'ok');
      }
      await waitForHealthy(client);
      const before = await client.describe('idle:keyed');
      expect(before.placements.every((placement) => placement.primary === primary.address && placement.follower === follower.address)).toBe(
        true,
      );
      const epochBefore = before.placements[0]!.epoch;

      await wipeAndRestart(tc, follower);
      await primary.process.stop('SIGKILL');

      // Four failover timeouts with only the empty follower alive, and at least four rounds of
      // checks however slow the machine (each round's increment may wait up to 1 s for a
      // failover that must not come): nothing may be served from it.
      let rounds = 0;
      const untilMs = Date.now() + 6_000;
      while (Date.now() < untilMs || rounds < 4) {
        for (const counter of ledger.counters()) {
          const outcome = await client.read(counter, { deadlineMs: 2_000 }).then(
            (read) => `returned ${read.total} (exact=${read.exact}); acknowledged ${ledger.ok.get(counter)}`,
            (error: unknown) => (isUnavailable(error) ? 'UNAVAILABLE' : describeError(error)),
          );
          expect(outcome, `${counter}: exact read with only the empty follower alive`).toBe('UNAVAILABLE');
        }
        try {
          await client.increment('idle:unkeyed', 1, { idempotencyKey: null, deadlineMs: 1_000 });
          ledger.record('idle:unkeyed', 1n, 'ok');
        } catch (error) {
          ledger.record('idle:unkeyed', 1n, classify(error));
        }
        const placements = (await client.describe('idle:keyed')).placements;
        expect(placements.map((placement) => [placement.primary, placement.epoch])).toEqual(
          placements.map(() => [primary.address, epochBefore]),
        );
        const roles = (await client.clusterStatus()).nodes.filter((node) => node.role === 'primary').map((node) => node.address);
        expect(roles).toEqual([primary.address]);
        rounds++;
        await pause(100);
      }

      await primary.process.start();
      await waitForHealed(client, 30_000);
      await ledger.expectWithinBounds(client);
      expect((await client.read('idle:keyed')).total).toBe(301n);
      const retried = await Promise.all(keys.map((key) => client.increment('idle:keyed', 3, { idempotencyKey: key })));
      expect(retried.filter((result) => result.applied)).toEqual([]);
      // The empty follower was refilled: same log end, same totals.
      await expectNoDrift(client);
    },
  );

  for (const wipe of [false, true]) {
    const away = wipe ? 'a follower whose disk was wiped, away past several checkpoints,' : 'a follower away past several checkpoints';
    it.concurrent(
      `snapshot install: ${away} returns and is refilled under load, every kind equal on both nodes`,
      { timeout: 60_000 },
      async ({ onTestFinished }) => {
        const tc = await startCluster({
          pairs: 1,
          metrics: true,
          routerArgs: failoverArgs,
          nodeArgs: ['--checkpoint-interval-ms', '200', '--checkpoint-retain-entries', '0'],
        });
        onTestFinished(() => tc.stop());
        const { client, cluster } = tc;
        const primary = cluster.node(0, 'primary');
        const follower = cluster.node(0, 'follower');
        const visitors = (from: number, to: number) => Array.from({ length: to - from }, (_, index) => `visitor:${from + index}`);
        await client.increment('snap:total', 1, { idempotencyKey: null });
        await client.setShards('snap:total', 4);
        await client.configure('snap:window', { window: { bucketMs: 1_000, retentionMs: 600_000 } });
        await client.setShards('snap:window', 2);
        await client.increment('snap:window', 1, { idempotencyKey: null });
        await client.addDistinct('snap:visitors', visitors(0, 1_000));
        for (let member = 0; member < 50; member++) await client.setMember('snap:likes', member, true);
        await waitForHealthy(client);
        await waitFor(async () => (await scrapeMetric(primary.metricsPort, 'tally_checkpoint_lsn')) > 0, {
          timeoutMs: 10_000,
          what: 'a checkpoint while in sync',
        });

        const load = startLoad(client, { concurrency: 8, counters: () => (Math.random() < 0.5 ? 'snap:total' : 'snap:window') });
        load.ledger.record('snap:total', 1n, 'ok');
        load.ledger.record('snap:window', 1n, 'ok');
        await waitFor(() => load.ledger.okCalls > 200, { timeoutMs: 15_000, what: 'load' });

        await follower.process.stop('SIGKILL');
        if (wipe) fs.rmSync(follower.dataDir, { recursive: true, force: true });
        const okAtKill = load.ledger.okCalls;
        // The follower cannot be past its primary: the primary's log end now bounds where the follower stopped.
        const lsnAtKill = await waitFor(() => lastLsnOf(client, primary.address), { timeoutMs: 5_000, what: 'the primary log end' });
        // While it is away every kind changes: sketches, member bitmaps, window buckets, totals.
        let visitorsAdded = 1_000;
        for (let round = 0; round < 5; round++) {
          await client.addDistinct('snap:visitors', visitors(visitorsAdded, visitorsAdded + 500));
          visitorsAdded += 500;
          for (let member = 0; member < 20; member++) await client.setMember('snap:likes', 50 + round * 20 + member, true);
          await client.setMember('snap:likes', round * 10, false);
        }
        const followerStoppedAt = wipe ? 0n : lsnAtKill;
        await waitFor(() => load.ledger.okCalls > okAtKill + 500, { timeoutMs: 20_000, what: 'writes to go on without the follower' });
        await waitFor(async () => BigInt(await scrapeMetric(primary.metricsPort, 'tally_checkpoint_lsn')) > followerStoppedAt, {
          timeoutMs: 15_000,
          what: `the primary's checkpoint to pass lsn ${followerStoppedAt}, where the follower stopped`,
        });
        const checkpointLsn = BigInt(await scrapeMetric(primary.metricsPort, 'tally_checkpoint_lsn'));

        await follower.process.start();
        const returned = readyState(tc, follower.process.name);
        if (wipe) expect(returned).toEqual({ lastLsn: 0n, checkpointLsn: 0n });
        // Its log ends before the primary's checkpoint: the primary's log alone cannot bring it level.
        expect(returned.lastLsn).toBeLessThan(checkpointLsn);
        const okAtReturn = load.ledger.okCalls;
        await waitForHealed(client, 30_000);
        expect(load.ledger.okCalls).toBeGreaterThan(okAtReturn);
        await load.stop();
        await waitForHealed(client, 10_000);
        await load.ledger.expectWithinBounds(client);
        await expectNoDrift(client);

        const members = Array.from({ length: 160 }, (_, member) => member);
        const readKinds = async () => ({
          total: (await client.read('snap:total')).total,
          windowTotal: (await client.read('snap:window')).total,
          windowSum: (await client.readWindow('snap:window', 600_000)).total,
          visitors: (await client.countDistinct('snap:visitors')).estimate,
          likes: (await client.read('snap:likes')).total,
          present: await client.isMember('snap:likes', members),
        });
        const before = await readKinds();
        expect(before.windowSum).toBe(before.windowTotal);
        expect(Math.abs(before.visitors - 3_500) / 3_500).toBeLessThan(0.03);
        expect(before.likes).toBe(145n);
        expect(before.present).toEqual(members.map((member) => member < 150 && !(member % 10 === 0 && member < 50)));

        // Only the refilled follower is left: it must answer every kind as the pair did.
        expect((await client.describe('snap:total')).placements.every((placement) => placement.primary === primary.address)).toBe(true);
        await primary.process.stop('SIGKILL');
        await waitFor(
          async () => {
            const names = ['snap:total', 'snap:window', 'snap:visitors', 'snap:likes'];
            const descriptions = await Promise.all(names.map((name) => client.describe(name)));
            return descriptions.every((description) => description.placements.every((placement) => placement.primary === follower.address));
          },
          { timeoutMs: 15_000, what: 'the refilled follower to be promoted' },
        );
        const after = await waitFor(readKinds, { timeoutMs: 10_000, what: 'reads from the refilled follower' });
        expect(after).toEqual(before);
        await load.ledger.expectWithinBounds(client);
        expect((await client.rebuild('snap:likes')).drift).toBe(0n);
      },
    );
  }

  it(
    'kill anything, availability: with a random node SIGKILLed every 2 s, at least 95% of unkeyed increments succeed, and nothing acknowledged is lost',
    { timeout: 60_000 },
    async ({ onTestFinished }) => {
      // Default failover settings: a refused connection is the fast signal.
      const tc = await startCluster({ pairs: 2 });
      onTestFinished(() => tc.stop());
      const { client, cluster } = tc;
      await client.increment('avail:hot', 1, { idempotencyKey: null });
      await client.setShards('avail:hot', 8);
      const cold = Array.from({ length: 20 }, (_, index) => `avail:cold:${index}`);
      await client.incrementBatch(cold.map((counter) => ({ counter, amount: 1, idempotencyKey: null })));
      await waitForHealthy(client);
      // startLoad writes with idempotencyKey: null: never retried, so every call counts once.
      const load = startLoad(client, {
        concurrency: 16,
        counters: () => (Math.random() < 0.7 ? 'avail:hot' : cold[Math.floor(Math.random() * cold.length)]!),
      });
      load.ledger.record('avail:hot', 1n, 'ok');
      for (const counter of cold) load.ledger.record(counter, 1n, 'ok');
      const setupCalls = 1 + cold.length;

      // Every 2 s a random running node is SIGKILLed; it is restarted a second later.
      const kills: string[] = [];
      const restarts: Promise<void>[] = [];
      const starting = new Set<string>();
      const untilMs = Date.now() + 19_000;
      while (Date.now() < untilMs) {
        const candidates = cluster.nodes.filter((node) => node.process.running && !starting.has(node.process.name));
        const victim = candidates[Math.floor(Math.random() * candidates.length)];
        if (victim !== undefined) {
          kills.push(victim.process.name);
          starting.add(victim.process.name);
          await victim.process.stop('SIGKILL');
          restarts.push(
            (async () => {
              await pause(1_000);
              await victim.process.start();
              starting.delete(victim.process.name);
            })(),
          );
        }
        await pause(2_000);
      }
      await Promise.all(restarts);
      const okBeforeHeal = load.ledger.okCalls;
      await waitForHealed(client, 25_000);
      await load.stop();

      const { okCalls, failedCalls, unknownCalls } = load.ledger;
      const calls = okCalls + failedCalls + unknownCalls - setupCalls;
      const ratio = (okCalls - setupCalls) / calls;
      console.log(
        `availability: ${okCalls - setupCalls} of ${calls} unkeyed increments succeeded (${(ratio * 100).toFixed(2)}%), ${failedCalls} failed, ${unknownCalls} unknown, ${kills.length} kills: ${kills.join(' ')}\n${load.ledger.topReasons()}`,
      );
      expect(kills.length).toBeGreaterThanOrEqual(8);
      expect(okBeforeHeal).toBeGreaterThan(500);
      await load.ledger.expectWithinBounds(client);
      expect(ratio, `${okCalls - setupCalls} of ${calls} increments succeeded`).toBeGreaterThanOrEqual(0.95);
      await expectNoDrift(client);
    },
  );
});
