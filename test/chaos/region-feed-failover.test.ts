// The publisher's feed under a failover in the publishing region: eu's
// primary is SIGKILLed mid-load (positive increments only) and its follower
// takes over, so the feed's next answers come from another node (a full
// answer). The component us's node holds for eu, read straight from that
// node (below the global reader's floor), never goes back: each version it
// moves to holds at least the total of the one before, for a one-shard
// counter and a counter of two shards alike; once load stops it equals eu's
// exact total.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { performance } from 'node:perf_hooks';
import { credentials } from '@grpc/grpc-js';
import { ShardNodeClient } from '../../src/common/index.ts';
import { compareVersions, shardProtocolStamp, unpackComponents, type RegionComponent } from '../../src/wire/internal/index.ts';
import { pause, waitFor } from '../helpers/cluster.ts';
import { startRegions, stopRegions, type TestRegion } from '../helpers/regions.ts';

/** The component us holds for eu of a counter, from the node holding its first shard (undefined: none yet or unreachable). */
async function heldComponent(region: TestRegion, counter: string): Promise<RegionComponent | undefined> {
  const placement = (await region.tc.client.describe(counter).catch(() => undefined))?.placements[0];
  if (placement === undefined) return undefined;
  const rpc = new ShardNodeClient(placement.primary, credentials.createInsecure());
  const response = await new Promise<{ components: Buffer[] } | undefined>((resolve) =>
    rpc.ReadComponents(
      { shardIds: [String(placement.shardId)], protocol: shardProtocolStamp },
      { deadline: Date.now() + 2_000 },
      (error, answer) => {
        rpc.close();
        resolve(error ? undefined : answer);
      },
    ),
  );
  return response === undefined ? undefined : unpackComponents(response.components[0]!).find((component) => component.origin === 'eu');
}

describe('region feed under a failover in the publishing region', () => {
  let regions: TestRegion[];

  beforeAll(async () => {
    regions = await startRegions(['eu', 'us']);
  }, 60_000);
  afterAll(async () => {
    await stopRegions(regions ?? []);
  });

  it(
    'feed: eu primary SIGKILLed mid-load: the component us holds for eu never goes back, then equals eu total',
    { timeout: 90_000 },
    async () => {
      const [eu, us] = regions;
      const counters = ['feedfail:one', 'feedfail:two'];
      for (const counter of counters) await eu!.tc.client.increment(counter, 1n);
      await eu!.tc.client.setShards('feedfail:two', 2);
      for (const counter of counters) await us!.tc.client.increment(counter, 1n);
      let running = true;
      const load = (async () => {
        for (let sequence = 0; running; sequence++)
          await eu!.tc.client.increment(counters[sequence % 2]!, BigInt(1 + (sequence % 5)), { deadlineMs: 3_000 }).catch(() => pause(50));
      })();
      const seen = new Map<string, RegionComponent[]>(counters.map((counter) => [counter, []]));
      const sampler = (async () => {
        while (running) {
          for (const counter of counters) {
            const held = await heldComponent(us!, counter);
            if (held !== undefined) seen.get(counter)!.push(held);
          }
          await pause(50);
        }
      })();
      await waitFor(async () => seen.get('feedfail:one')!.length > 0 && seen.get('feedfail:two')!.length > 0, { timeoutMs: 15_000 });
      const epochBefore = (await eu!.tc.client.describe('feedfail:one')).placements[0]!.epoch;
      const killedAtMs = performance.now();
      await eu!.tc.cluster.node(0, 'primary').process.stop('SIGKILL');
      // Components published after the follower took over, under load.
      await waitFor(
        async () => (await eu!.tc.client.increment('feedfail:one', 1n, { deadlineMs: 2_000 }).catch(() => undefined)) !== undefined,
        {
          timeoutMs: 30_000,
        },
      );
      // The follower took over: the feed's answers now come from another node.
      await waitFor(async () => (await eu!.tc.client.describe('feedfail:one')).placements[0]!.epoch > epochBefore, { timeoutMs: 30_000 });
      await pause(Math.max(0, 1_500 - (performance.now() - killedAtMs)));
      running = false;
      await Promise.all([load, sampler]);
      for (const counter of counters) {
        const exact = (await eu!.tc.client.read(counter)).total;
        await waitFor(async () => (await heldComponent(us!, counter))?.total === exact, {
          timeoutMs: 15_000,
          what: `${counter} converges`,
        });
        const history = seen.get(counter)!;
        for (let index = 1; index < history.length; index++) {
          const [before, after] = [history[index - 1]!, history[index]!];
          expect(compareVersions(after.version, before.version), `${counter} sample ${index}`).toBeGreaterThanOrEqual(0);
          expect(after.total, `${counter} sample ${index}`).toBeGreaterThanOrEqual(before.total);
        }
      }
    },
  );
});
