// Regions over TLS with tokens: the links present the router's certificate
// (its role checked by the nodes and the peer) and the admin token; regions
// sharing the CA and the admin token count together. A wrong token is
// refused by auth (test/unit/router/region-auth.test.ts).
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeCerts, waitFor } from '../helpers/cluster.ts';
import { makeTempDir, removeTempDir } from '../helpers/temp-dir.ts';
import { startRegions, stopRegions, type TestRegion } from '../helpers/regions.ts';

describe('regions over TLS', () => {
  let regions: TestRegion[];
  let sharedCerts: string;

  beforeAll(async () => {
    sharedCerts = makeTempDir('region-certs');
    makeCerts(sharedCerts, 1);
    regions = await startRegions(['eu', 'us'], {
      secure: true,
      // One CA and one admin token for both regions.
      beforeStartOf: (_name, dataDir) => {
        const certDir = path.join(dataDir, 'certs');
        for (const file of fs.readdirSync(sharedCerts)) fs.copyFileSync(path.join(sharedCerts, file), path.join(certDir, file));
      },
    });
  }, 90_000);
  afterAll(async () => {
    await stopRegions(regions ?? []);
    if (sharedCerts !== undefined) removeTempDir(sharedCerts);
  });

  it('regions: links over mutual TLS with the admin token count both regions together, and status shows them up', async () => {
    const [eu, us] = regions;
    await eu!.tc.client.increment('secure:likes', 4);
    await us!.tc.client.increment('secure:likes', 6);
    for (const region of [eu!, us!])
      await waitFor(async () => (await region.tc.client.read('secure:likes', { scope: 'global' })).total === 10n, { timeoutMs: 15_000 });
    const peers = (await eu!.tc.client.clusterStatus()).peerRegions;
    expect(peers.map((peer) => [peer.region, peer.link, peer.error])).toEqual([['us', 'up', '']]);
  });
});
