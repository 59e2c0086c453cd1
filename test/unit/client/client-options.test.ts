// The client library's edges, against no cluster or a stub server: addresses
// (a port required, TALLY_ROUTER), amounts past 2^53, calls after close(),
// AbortSignal, and the service config the client shares with every language.
import { Server, ServerCredentials, status, type ServiceError, type UntypedServiceImplementation } from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { createTallyClient, TallyError, type TallyClient } from '../../../src/client/index.ts';
import { CounterServiceClient, serviceConfig } from '../../../src/client/counter-proto.ts';
import { routerAddressesOf } from '../../../src/client/connection/router-addresses.ts';
import { protoLoaderOptions } from '../../../src/wire/index.ts';
import { pause } from '../../helpers/pause.ts';

async function failure(call: () => Promise<unknown>): Promise<TallyError> {
  try {
    await call();
  } catch (error) {
    expect(error).toBeInstanceOf(TallyError);
    return error as TallyError;
  }
  throw new Error('the call succeeded');
}

/** A CounterService on a loopback port whose methods do what `handlers` say (the rest never answer). */
async function stubRouter(handlers: UntypedServiceImplementation): Promise<{ address: string; stop(): void }> {
  const server = new Server();
  const never = (): void => {};
  const implementation = Object.fromEntries(
    Object.entries(CounterServiceClient.service).map(([name, method]) => [
      name,
      handlers[name] ?? handlers[method.originalName ?? ''] ?? never,
    ]),
  );
  server.addService(CounterServiceClient.service, implementation);
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (error, bound) => (error ? reject(error) : resolve(bound))),
  );
  return { address: `127.0.0.1:${port}`, stop: () => server.forceShutdown() };
}

describe('client options', () => {
  const clients: TallyClient[] = [];
  const stops: (() => void)[] = [];
  afterEach(() => {
    for (const client of clients.splice(0)) client.close();
    for (const stop of stops.splice(0)) stop();
  });
  const client = (options: Parameters<typeof createTallyClient>[0]): TallyClient => {
    const made = createTallyClient(options);
    clients.push(made);
    return made;
  };

  it('an address without a port is refused naming the default port, never dialled on 443', () => {
    for (const address of ['tally.internal', 'dns:///tally-router.tally.svc', '10.0.0.5', '::1', '10.0.0.5:'])
      expect(() => createTallyClient({ address }), address).toThrow(/has no port: give host:port .*50051/);
    expect(() => createTallyClient({ addresses: ['a:50051', 'b'] })).toThrow(/addresses\[1\] "b" has no port/);
    for (const address of ['tally.internal:50051', '[::1]:50051', 'dns:///tally-router.tally.svc:50051', 'unix:/tmp/tally.sock'])
      expect(routerAddressesOf({ address }), address).toEqual([address]);
  });

  it('with no address it reads TALLY_ROUTER, as the CLI does, and says so when that is missing too', () => {
    expect(routerAddressesOf({}, { TALLY_ROUTER: '10.0.0.5:50051, 10.0.0.6:50051' })).toEqual(['10.0.0.5:50051', '10.0.0.6:50051']);
    expect(() => routerAddressesOf({}, {})).toThrow(/TALLY_ROUTER/);
    expect(() => routerAddressesOf({}, { TALLY_ROUTER: 'tally.internal' })).toThrow(/TALLY_ROUTER entry "tally.internal" is not host:port/);
    // The library's own default environment is process.env.
    const saved = process.env.TALLY_ROUTER;
    process.env.TALLY_ROUTER = '127.0.0.1:1';
    try {
      expect(client({})).toBeDefined();
    } finally {
      if (saved === undefined) delete process.env.TALLY_ROUTER;
      else process.env.TALLY_ROUTER = saved;
    }
  });

  it('a number past 2^53 - 1 is refused as not a safe integer, telling the caller to pass a bigint', async () => {
    const plain = client({ address: '127.0.0.1:1' });
    const coalescing = client({ address: '127.0.0.1:1', coalesce: true });
    for (const call of [
      () => plain.increment('x', 2 ** 60),
      () => coalescing.increment('x', 2 ** 60),
      () => plain.incrementBatch([{ counter: 'x', amount: -(2 ** 60) }]),
    ]) {
      const error = await failure(call);
      expect(error.code).toBe('invalid_argument');
      expect(error.message).toContain('not a safe integer');
      expect(error.message).toMatch(/pass a bigint \(-?1152921504606846976n\)/);
    }
    // Beyond int64 stays OUT_OF_RANGE; a fraction is not an integer at all.
    expect((await failure(() => plain.increment('x', 2 ** 64))).code).toBe('out_of_range');
    expect((await failure(() => plain.increment('x', 1.5))).message).toContain('not an integer');
  });

  it('a call after close() says the client is closed', async () => {
    for (const coalesce of [false, true]) {
      const closed = createTallyClient({ address: '127.0.0.1:1', coalesce });
      closed.close();
      for (const call of [() => closed.read('x'), () => closed.increment('x', 1), () => closed.clusterStatus()]) {
        const error = await failure(call);
        expect(error.code, `coalesce ${coalesce}`).toBe('failed_precondition');
        expect(error.message).toContain('the client is closed');
      }
    }
  });

  it('an AbortSignal stops a call in flight, and a keyed increment between its retries', async () => {
    let attempts = 0;
    const router = await stubRouter({
      increment: (_call: unknown, callback: (error: Partial<ServiceError>) => void) => {
        attempts++;
        callback({ code: status.UNAVAILABLE, details: 'pair unavailable' });
      },
    });
    stops.push(router.stop);
    const tally = client({ address: router.address, deadlineMs: 20_000 });

    const reading = new AbortController();
    const startedMs = performance.now();
    setTimeout(() => reading.abort(), 100);
    const readError = await failure(() => tally.read('x', { signal: reading.signal }));
    expect(readError.code).toBe('cancelled');
    expect(performance.now() - startedMs).toBeLessThan(5_000);

    const writing = new AbortController();
    setTimeout(() => writing.abort(new Error('shutting down')), 300);
    const writeError = await failure(() => tally.increment('x', 1, { idempotencyKey: 'k1', signal: writing.signal }));
    expect(writeError.code).toBe('cancelled');
    expect(writeError.message).toContain('shutting down');
    expect(attempts).toBeGreaterThan(1);
    const attemptsAtAbort = attempts;
    await pause(500);
    expect(attempts, 'no retry after the abort').toBe(attemptsAtAbort);

    const already = AbortSignal.abort();
    expect((await failure(() => tally.read('x', { signal: already }))).code).toBe('cancelled');
  });

  it('loads counter.proto with the options the generated types assume: an int64 past 2^53 decodes as its exact decimal string', () => {
    expect(protoLoaderOptions).not.toHaveProperty('includeDirs');
    const read = CounterServiceClient.service.Read;
    const bytes = read.responseSerialize({ counter: 'x', total: '9007199254740993', shards: 1 });
    expect(read.responseDeserialize(bytes)).toMatchObject({ counter: 'x', total: '9007199254740993', exact: false, shards: 1 });
  });

  it('service config: round-robin, and every CounterService method is classified: retried by gRPC only where a repeat changes nothing', () => {
    expect(serviceConfig.loadBalancingConfig).toEqual([{ round_robin: {} }]);
    const methods = Object.keys(CounterServiceClient.service);
    const named = (withRetry: boolean): string[] =>
      serviceConfig.methodConfig
        .filter((config) => (config.retryPolicy !== undefined) === withRetry)
        .flatMap((config) => config.name.filter((name) => name.service === 'counter.v1.CounterService').map((name) => name.method!));
    // Writes whose repeat could count twice unless keyed: the caller retries them with the key, never gRPC.
    // IncrementStream and ReadStream: no retry and no timeout (a stream outlives any one batch or page; each has the client's own deadline).
    expect(named(false).sort()).toEqual(['Clear', 'Increment', 'IncrementBatch', 'IncrementStream', 'ReadStream']);
    const streamConfig = serviceConfig.methodConfig.find((config) => config.name.some((name) => name.method === 'IncrementStream'));
    expect(streamConfig?.timeout).toBeUndefined();
    expect(streamConfig?.name.some((name) => name.method === 'ReadStream')).toBe(true);
    expect([...named(true), ...named(false)].sort()).toEqual([...methods].sort());
    for (const config of serviceConfig.methodConfig.filter((one) => one.retryPolicy !== undefined))
      expect(config.retryPolicy!.retryableStatusCodes).toEqual(['UNAVAILABLE']);
  });
});
