// Which form a link's batches take, and how a receiver reads them: to a peer
// whose hello answer says it reads packed components, a batch is columns and
// no component messages; to an older peer (no such answer), a message per
// component, as before. A receiving router refuses bad packed bytes, a
// record of another origin, and a batch that mixes both forms, before it
// stores anything. Over real gRPC streams in process.
import { Server, ServerCredentials, credentials, status, type ServerDuplexStream, type ServiceError } from '@grpc/grpc-js';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { RegionLinkClient, createLogger, regionLinkServiceDefinition, type regionV1 } from '../../../../src/common/index.ts';
import { clientChannelOptions } from '../../../../src/wire/index.ts';
import { decodeBatchComponents, encodeBatchComponents, type RegionComponent } from '../../../../src/wire/internal/index.ts';
import { PeerLink, RegionReceiver } from '../../../../src/router/region/index.ts';
import type { ComponentStore } from '../../../../src/router/region/component-store.ts';
import { createRegionMetrics } from '../../../../src/router/region/region-metrics.ts';
import { waitFor } from '../../../helpers/cluster.ts';

type Exchange = ServerDuplexStream<regionV1.RegionFrame__Output, regionV1.RegionAnswer>;

async function serve(exchange: (call: Exchange) => void): Promise<{ server: Server; port: number }> {
  const server = new Server();
  server.addService(regionLinkServiceDefinition, { Exchange: exchange });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (error, value) => (error ? reject(error) : resolve(value))),
  );
  return { server, port };
}

function componentOf(round: number, origin = 'eu'): RegionComponent {
  return { origin, version: { term: 1n, round: BigInt(round) }, total: BigInt(-round), asOfUnixMs: round, generation: 0 };
}

describe('region link: packed batches', () => {
  const cleanups: (() => void)[] = [];
  afterEach(() => {
    for (const cleanup of cleanups.splice(0)) cleanup();
  });

  /** A peer that records every batch and answers it at once; `readsPacked` is what its hello answer says. */
  async function peer(readsPacked: boolean): Promise<{ port: number; batches: regionV1.ComponentBatch__Output[] }> {
    const batches: regionV1.ComponentBatch__Output[] = [];
    const { server, port } = await serve((call) => {
      call.on('error', () => undefined);
      call.on('end', () => call.end());
      call.on('data', (frame: regionV1.RegionFrame__Output) => {
        if (frame.hello)
          return call.write({
            seq: '0',
            durable: { term: '0', round: '0' },
            region: 'us',
            refused: 0,
            ...(readsPacked ? { readsPackedComponents: true } : {}),
          });
        batches.push(frame.batch!);
        call.write({ seq: frame.batch!.seq, durable: frame.batch!.version!, region: 'us', refused: 0 });
      });
    });
    cleanups.push(() => server.forceShutdown());
    return { port, batches };
  }

  async function ship(port: number, count: number): Promise<Map<string, RegionComponent>> {
    const table = new Map<string, RegionComponent>();
    const link = new PeerLink(
      { ownRegion: 'eu', peer: { name: 'us', addresses: [`127.0.0.1:${port}`] }, tls: undefined, adminToken: undefined },
      { get: (counter) => table.get(counter), entries: () => table.entries() },
      createRegionMetrics(new Registry()),
      createLogger('test-link', 'error'),
    );
    cleanups.push(() => link.stop());
    link.start();
    await waitFor(() => link.status().link === 'up', { timeoutMs: 5_000, what: 'the link up' });
    const names = Array.from({ length: count }, (_, index) => `c${index}:ü`);
    names.forEach((name, index) => table.set(name, componentOf(index + 1)));
    link.offer(names, { term: 1n, round: BigInt(count) }, 1);
    await waitFor(() => link.status().componentsPending === '0', { timeoutMs: 5_000, what: 'everything acknowledged' });
    return table;
  }

  it('to a peer that reads them: columns only, every offered component exactly once', async () => {
    const { port, batches } = await peer(true);
    const table = await ship(port, 1_200);
    const received = batches.flatMap((batch) => {
      expect(batch.components).toEqual([]);
      return batch.packedComponents.length === 0 ? [] : decodeBatchComponents(batch.packedComponents);
    });
    expect(received).toHaveLength(1_200);
    expect(new Map(received.map(({ counter, component }) => [counter, component]))).toEqual(table);
  });

  it('to an older peer (its hello answer says nothing): a message per component, no columns', async () => {
    const { port, batches } = await peer(false);
    const table = await ship(port, 700);
    const received = batches.flatMap((batch) => {
      expect(batch.packedComponents).toHaveLength(0);
      return batch.components;
    });
    expect(received).toHaveLength(700);
    for (const each of received) expect(BigInt(each.total)).toBe(table.get(each.counter)!.total);
  });

  describe('a receiving router', () => {
    /** Exchanges one batch with a real RegionReceiver whose store must not be reached; resolves with the stream's error. */
    async function refusal(
      batch: Partial<regionV1.ComponentBatch>,
    ): Promise<{ error: ServiceError; helloAnswer: regionV1.RegionAnswer__Output }> {
      const stored: string[] = [];
      const store = {
        prepare: async (names: readonly string[]) => void stored.push(...names),
        storePacked: async () => {
          stored.push('storePacked');
          return { settled: [], applied: 0 };
        },
      } as unknown as ComponentStore;
      const receiver = new RegionReceiver(
        'us',
        new Set(['eu']),
        store,
        createRegionMetrics(new Registry()),
        createLogger('test-receiver', 'error'),
      );
      const { server, port } = await serve((call) => receiver.exchange(call));
      cleanups.push(() => server.forceShutdown());
      const client = new RegionLinkClient(`127.0.0.1:${port}`, credentials.createInsecure(), clientChannelOptions);
      cleanups.push(() => client.close());
      const call = client.Exchange();
      const answers: regionV1.RegionAnswer__Output[] = [];
      call.on('data', (answer: regionV1.RegionAnswer__Output) => answers.push(answer));
      const error = new Promise<ServiceError>((resolve) => call.on('error', resolve));
      call.write({ hello: { originRegion: 'eu', targetRegion: 'us' } });
      call.write({ batch: { seq: '1', version: { term: '1', round: '1' }, asOfUnixMs: '0', ...batch } });
      const failed = await error;
      expect(stored).toEqual([]);
      return { error: failed, helloAnswer: answers[0]! };
    }

    it('says in its hello answer that it reads columns, and refuses bad bytes before storing anything', async () => {
      const { error, helloAnswer } = await refusal({ packedComponents: Buffer.from([1, 0, 0, 0, 2, 0]) });
      expect(helloAnswer.readsPackedComponents).toBe(true);
      expect(error.code).toBe(status.INVALID_ARGUMENT);
      expect(error.details).toMatch(/packed components: .*cut short/);
    });

    it('refuses a record of another origin than the stream', async () => {
      const packed = encodeBatchComponents([{ counter: 'c1', component: componentOf(1, 'ap') }]);
      const { error } = await refusal({ packedComponents: packed });
      expect(error.code).toBe(status.INVALID_ARGUMENT);
      expect(error.details).toMatch(/origin "ap" on a stream from eu/);
    });

    it('refuses a batch with both forms', async () => {
      const packed = encodeBatchComponents([{ counter: 'c1', component: componentOf(1) }]);
      const { error } = await refusal({
        packedComponents: packed,
        components: [{ counter: 'c2', total: '1', version: { term: '1', round: '1' }, asOfUnixMs: '1', generation: '0' }],
      });
      expect(error.code).toBe(status.INVALID_ARGUMENT);
      expect(error.details).toMatch(/as messages or as columns, not both/);
    });
  });
});
