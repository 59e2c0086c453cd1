// Regions over TLS with tokens: the links present the router's certificate
// (its role checked by the nodes and the peer) and the admin token; regions
// sharing the CA and the admin token count together. A wrong token is
// refused by auth (test/unit/router/region-auth.test.ts).
import fs from 'node:fs';
import path from 'node:path';
import { Server, ServerCredentials, type ServerDuplexStream } from '@grpc/grpc-js';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger, regionLinkServiceDefinition, type TlsMaterial } from '../../src/common/index.ts';
import type { RegionComponent } from '../../src/wire/internal/index.ts';
import { PeerLink } from '../../src/router/region/index.ts';
import { createRegionMetrics } from '../../src/router/region/region-metrics.ts';
import { makeCerts, waitFor } from '../helpers/cluster.ts';
import { makeTempDir, removeTempDir } from '../helpers/temp-dir.ts';
import { startRegions, stopRegions, type TestRegion } from '../helpers/regions.ts';

function tlsOf(dir: string): TlsMaterial {
  const read = (file: string): Buffer => fs.readFileSync(path.join(dir, file));
  return { cert: read('router.crt'), key: read('router.key'), ca: read('ca.crt') };
}

/** A link from `origin` to `peer` at `address` over `tls`, publishing one component of `counter`. */
function linkOf(origin: string, peer: string, address: string, tls: TlsMaterial, adminToken: string, counter: string): PeerLink {
  const component: RegionComponent = { origin, version: { term: 1n, round: 1n }, total: 99n, asOfUnixMs: 1, generation: 0 };
  const table = {
    get: (name: string) => (name === counter ? component : undefined),
    entries: () => new Map([[counter, component]]).entries(),
  };
  const link = new PeerLink(
    { ownRegion: origin, peer: { name: peer, addresses: [address] }, tls, adminToken },
    table,
    createRegionMetrics(new Registry()),
    createLogger('test-link', 'error'),
  );
  link.start();
  link.offer([counter], component.version, 1);
  return link;
}

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

  it('regions: a peer presenting a certificate from another CA is refused both ways: link state refused with the reason, nothing stored', async () => {
    const [eu] = regions;
    const otherCerts = makeTempDir('region-other-ca');
    try {
      makeCerts(otherCerts, 1);
      const shared = tlsOf(sharedCerts);
      const other = tlsOf(otherCerts);
      const adminToken = fs.readFileSync(path.join(sharedCerts, 'admin.token'), 'utf8').trim();
      // A router of another PKI calls eu as "us" (a peer eu names) with eu's own admin token: its CA does not know eu's certificate.
      const intruder = linkOf('us', 'eu', eu!.tc.cluster.routerAddress, other, adminToken, 'wrongca:inbound');
      // eu's credentials calling a RegionLink server whose router certificate another CA signed.
      const framesSeen: unknown[] = [];
      const server = new Server();
      server.addService(regionLinkServiceDefinition, {
        Exchange: (call: ServerDuplexStream<unknown, unknown>) => call.on('data', (frame) => framesSeen.push(frame)),
      });
      const port = await new Promise<number>((resolve, reject) =>
        server.bindAsync(
          '127.0.0.1:0',
          ServerCredentials.createSsl(other.ca, [{ private_key: other.key, cert_chain: other.cert }], false),
          (error, bound) => (error ? reject(error) : resolve(bound)),
        ),
      );
      const outbound = linkOf('eu', 'us', `127.0.0.1:${port}`, shared, adminToken, 'wrongca:outbound');
      try {
        for (const link of [intruder, outbound])
          await waitFor(() => link.status().link === 'refused', { timeoutMs: 10_000, what: `${link.peerName} link refused` });
        for (const link of [intruder, outbound]) expect(link.status().error).toMatch(/certificate/i);
        expect(framesSeen).toEqual([]);
        // Nothing stored in eu: the counter the intruder published does not exist there.
        expect((await eu!.tc.client.read('wrongca:inbound', { scope: 'global' })).total).toBe(0n);
        expect((await eu!.tc.client.listCounters({ prefix: 'wrongca:' })).counters).toEqual([]);
      } finally {
        intruder.stop();
        outbound.stop();
        server.forceShutdown();
      }
    } finally {
      removeTempDir(otherCerts);
    }
  });
});
