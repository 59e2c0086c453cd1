// A link whose receiving router restarts: the new router knows no watermark
// (it answers zero), but the components the region confirmed are in its node
// logs, so the link resends none of them; what is published later still
// ships. Over a real gRPC stream to an in-process receiver.
import { Server, ServerCredentials, type ServerDuplexStream } from '@grpc/grpc-js';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger, regionLinkServiceDefinition, type regionV1 } from '../../../src/common/index.ts';
import type { RegionComponent } from '../../../src/wire/internal/index.ts';
import { PeerLink } from '../../../src/router/region/index.ts';
import { createRegionMetrics } from '../../../src/router/region/region-metrics.ts';
import { waitFor } from '../../helpers/cluster.ts';

/** A receiver that remembers nothing: answers the hello with zero and every batch with its watermark. */
async function startReceiver(port = 0): Promise<{ server: Server; port: number; received: string[] }> {
  const received: string[] = [];
  const server = new Server();
  server.addService(regionLinkServiceDefinition, {
    Exchange: (call: ServerDuplexStream<regionV1.RegionFrame__Output, regionV1.RegionAnswer>) =>
      call.on('data', (frame: regionV1.RegionFrame__Output) => {
        if (frame.hello) return call.write({ seq: '0', durable: { term: '0', round: '0' }, region: 'us', refused: 0 });
        for (const component of frame.batch!.components) received.push(component.counter);
        call.write({ seq: frame.batch!.seq, durable: frame.batch!.version!, region: 'us', refused: 0 });
      }),
  });
  const bound = await new Promise<number>((resolve, reject) =>
    server.bindAsync(`127.0.0.1:${port}`, ServerCredentials.createInsecure(), (error, value) => (error ? reject(error) : resolve(value))),
  );
  return { server, port: bound, received };
}

describe('region link resume', () => {
  const cleanups: (() => void)[] = [];
  afterEach(() => {
    for (const cleanup of cleanups.splice(0)) cleanup();
  });

  it('a receiving router restarted (it answers zero) is resent nothing the region confirmed; later components still ship', async () => {
    const table = new Map<string, RegionComponent>();
    for (let index = 0; index < 50; index++)
      table.set(`c${index}`, { origin: 'eu', version: { term: 1n, round: 1n }, total: BigInt(index), asOfUnixMs: 1, generation: 0 });
    const first = await startReceiver();
    cleanups.push(() => first.server.forceShutdown());
    const link = new PeerLink(
      { ownRegion: 'eu', peer: { name: 'us', addresses: [`127.0.0.1:${first.port}`] }, tls: undefined, adminToken: undefined },
      { get: (counter) => table.get(counter), entries: () => table.entries() },
      createRegionMetrics(new Registry()),
      createLogger('test-link', 'error'),
    );
    cleanups.push(() => link.stop());
    link.start();
    link.offer([...table.keys()], { term: 1n, round: 1n }, 1);
    await waitFor(() => first.received.length === 50 && link.status().componentsPending === '0', {
      timeoutMs: 5_000,
      what: 'all 50 confirmed',
    });

    // The receiving router dies; a new one on the same address remembers nothing.
    first.server.forceShutdown();
    const second = await startReceiver(first.port);
    cleanups.push(() => second.server.forceShutdown());
    await waitFor(() => link.status().link === 'up', { timeoutMs: 5_000, what: 'the link up again' });
    table.set('c0', { origin: 'eu', version: { term: 1n, round: 2n }, total: 100n, asOfUnixMs: 2, generation: 0 });
    link.offer(['c0'], { term: 1n, round: 2n }, 2);
    await waitFor(() => second.received.length > 0, { timeoutMs: 5_000, what: 'the new component shipped' });
    expect(second.received).toEqual(['c0']);
  });
});
