// A link's pending set while batches are in flight: a counter in flight is
// not sent again unless a newer component of it is offered; a counter offered
// again at a newer version while its older one is in flight ships that newer
// one too, and stays counted until the peer holds it; a stream that dies with
// batches in flight resends them after the peer's hello. Over a real gRPC
// stream to an in-process receiver that holds its answers back.
import { Server, ServerCredentials, status, type ServerDuplexStream } from '@grpc/grpc-js';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger, regionLinkServiceDefinition, type regionV1 } from '../../../../src/common/index.ts';
import type { RegionComponent } from '../../../../src/wire/internal/index.ts';
import { PeerLink } from '../../../../src/router/region/index.ts';
import { createRegionMetrics } from '../../../../src/router/region/region-metrics.ts';
import { waitFor } from '../../../helpers/cluster.ts';

interface Receiver {
  server: Server;
  port: number;
  /** (counter, round) of every component received, in order. */
  received: [string, number][];
  /** Frames held back until release(). */
  held: regionV1.RegionFrame__Output[];
  release: () => void;
  hold: boolean;
  /** Ends the open stream with an error (a connection lost with batches in flight). */
  breakStream: () => void;
}

/** A receiver that remembers nothing (it answers the hello with zero) and, while `hold`, answers no batch. */
async function startReceiver(): Promise<Receiver> {
  let open: ServerDuplexStream<regionV1.RegionFrame__Output, regionV1.RegionAnswer> | undefined;
  const receiver: Receiver = {
    server: new Server(),
    port: 0,
    received: [],
    held: [],
    hold: true,
    release: () => {
      receiver.hold = false;
      for (const frame of receiver.held.splice(0)) answer(frame);
    },
    breakStream: () => open?.emit('error', { code: status.UNAVAILABLE, details: 'connection lost' }),
  };
  const answer = (frame: regionV1.RegionFrame__Output): void => {
    open?.write({ seq: frame.batch!.seq, durable: frame.batch!.version!, region: 'us', refused: 0 });
  };
  receiver.server.addService(regionLinkServiceDefinition, {
    Exchange: (call: ServerDuplexStream<regionV1.RegionFrame__Output, regionV1.RegionAnswer>) => {
      open = call;
      receiver.held = [];
      call.on('error', () => undefined);
      call.on('end', () => call.end());
      call.on('data', (frame: regionV1.RegionFrame__Output) => {
        if (frame.hello) return call.write({ seq: '0', durable: { term: '0', round: '0' }, region: 'us', refused: 0 });
        for (const component of frame.batch!.components) receiver.received.push([component.counter, Number(component.version!.round)]);
        if (receiver.hold) receiver.held.push(frame);
        else answer(frame);
      });
    },
  });
  receiver.port = await new Promise<number>((resolve, reject) =>
    receiver.server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (error, value) =>
      error ? reject(error) : resolve(value),
    ),
  );
  return receiver;
}

describe('region link: pending while in flight', () => {
  const cleanups: (() => void)[] = [];
  afterEach(() => {
    for (const cleanup of cleanups.splice(0)) cleanup();
  });

  function linkTo(receiver: Receiver, table: Map<string, RegionComponent>): PeerLink {
    const link = new PeerLink(
      { ownRegion: 'eu', peer: { name: 'us', addresses: [`127.0.0.1:${receiver.port}`] }, tls: undefined, adminToken: undefined },
      { get: (counter) => table.get(counter), entries: () => table.entries() },
      createRegionMetrics(new Registry()),
      createLogger('test-link', 'error'),
    );
    cleanups.push(() => link.stop());
    return link;
  }

  function publish(table: Map<string, RegionComponent>, link: PeerLink, names: string[], round: number): void {
    for (const name of names)
      table.set(name, {
        origin: 'eu',
        version: { term: 1n, round: BigInt(round) },
        total: BigInt(round),
        asOfUnixMs: round,
        generation: 0,
      });
    link.offer(names, { term: 1n, round: BigInt(round) }, round);
  }

  it('in flight: sent once; offered again newer, sent again and counted until held; everything newest at the end', async () => {
    const receiver = await startReceiver();
    cleanups.push(() => receiver.server.forceShutdown());
    const table = new Map<string, RegionComponent>();
    const link = linkTo(receiver, table);
    link.start();
    await waitFor(() => link.status().link === 'up', { timeoutMs: 5_000, what: 'the link up' });
    const names = Array.from({ length: 3_000 }, (_, index) => `c${index}`);
    publish(table, link, names, 1);
    // 8 batches of 512 at most in flight: all 3,000 are sent, none twice, while nothing is answered.
    await waitFor(() => receiver.received.length === 3_000, { timeoutMs: 5_000, what: 'every component sent once' });
    expect(link.status().componentsPending).toBe('3000');
    // Round 2 changes a few of them while their round-1 components are in flight, and offers nothing new otherwise.
    const changed = ['c0', 'c1', 'c2999', 'c1500'];
    publish(table, link, changed, 2);
    link.offer([], { term: 1n, round: 3n }, 3);
    await waitFor(() => receiver.received.length === 3_004, { timeoutMs: 5_000, what: 'the newer components sent' });
    expect(receiver.received.slice(3_000).sort()).toEqual(changed.map((name) => [name, 2]).sort());
    expect(link.status().componentsPending).toBe('3000');
    receiver.release();
    await waitFor(() => link.status().componentsPending === '0', { timeoutMs: 5_000, what: 'everything acknowledged' });
    // Nothing was sent a third time, and the last sent of each counter is its newest.
    expect(receiver.received).toHaveLength(3_004);
    const last = new Map(receiver.received);
    for (const name of names) expect(last.get(name), name).toBe(Number(table.get(name)!.version.round));
  });

  it('a stream lost with batches in flight: after the hello everything not held is sent again, and the link drains', async () => {
    const receiver = await startReceiver();
    cleanups.push(() => receiver.server.forceShutdown());
    const table = new Map<string, RegionComponent>();
    const link = linkTo(receiver, table);
    link.start();
    await waitFor(() => link.status().link === 'up', { timeoutMs: 5_000, what: 'the link up' });
    const names = Array.from({ length: 1_200 }, (_, index) => `c${index}`);
    publish(table, link, names, 1);
    await waitFor(() => receiver.received.length === 1_200, { timeoutMs: 5_000, what: 'every component sent' });
    receiver.breakStream();
    receiver.hold = false;
    // The receiver answers zero: every component is sent again on the new stream, then acknowledged.
    await waitFor(() => link.status().componentsPending === '0' && receiver.received.length >= 2_400, {
      timeoutMs: 10_000,
      what: 'resent and acknowledged',
    });
    const counts = new Map<string, number>();
    for (const [name] of receiver.received) counts.set(name, (counts.get(name) ?? 0) + 1);
    for (const name of names) expect(counts.get(name), name).toBeGreaterThanOrEqual(2);
  });
});
