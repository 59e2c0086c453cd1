// A region of two routers on etcd: one publishes (the supervisor, its term
// the supervisor key's create revision). SIGKILL it and the other router
// takes the supervisor lease and the publishing role with a higher term;
// the peer region's global read follows the region's new increments.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTallyClient, type TallyClient } from '../../src/client/index.ts';
import { waitFor } from '../helpers/cluster.ts';
import { globalRead, startRegions, stopRegions, type TestRegion } from '../helpers/regions.ts';

describe('regions with several routers', () => {
  let regions: TestRegion[];
  let survivorClient: TallyClient | undefined;

  beforeAll(async () => {
    regions = await startRegions(['eu', 'us'], { routersOf: (name) => (name === 'eu' ? 2 : 1) });
  }, 90_000);
  afterAll(async () => {
    survivorClient?.close();
    await stopRegions(regions ?? []);
  });

  it(
    "regions: the publishing router of a two-router region SIGKILLed: the other takes over publishing and the peer's global read follows",
    { timeout: 60_000 },
    async () => {
      const [eu, us] = regions;
      const { cluster } = eu!.tc;
      await eu!.tc.client.increment('etcd:likes', 5);
      await waitFor(async () => (await globalRead(us!, 'etcd:likes')).total === 5n, { timeoutMs: 15_000, what: 'us sees eu' });
      const status = await eu!.tc.client.clusterStatus();
      const publisherIndex = cluster.routers.findIndex((router) => router.name === status.supervisor);
      expect(publisherIndex).toBeGreaterThanOrEqual(0);
      const standbyIndex = 1 - publisherIndex;
      const standby = cluster.routers[standbyIndex]!;
      survivorClient = createTallyClient({ address: standby.address, deadlineMs: 10_000, coalesce: false });
      const standbyPeers = (await survivorClient.clusterStatus()).peerRegions;
      expect(standbyPeers.map((peer) => peer.link)).toEqual(['standby']);

      await cluster.routers[publisherIndex]!.process.stop('SIGKILL');
      eu!.proxy.target = standby.address;
      await survivorClient.increment('etcd:likes', 7);
      await waitFor(async () => (await globalRead(us!, 'etcd:likes')).total === 12n, {
        timeoutMs: 30_000,
        what: "us sees eu's increment through the new publisher",
      });
      expect((await globalRead(us!, 'etcd:likes')).parts).toEqual(
        new Map([
          ['us', 0n],
          ['eu', 12n],
        ]),
      );
      await waitFor(async () => (await survivorClient!.clusterStatus()).peerRegions[0]?.link === 'up', { timeoutMs: 10_000 });
    },
  );
});
