// The client's connection, against nothing listening or a stub router on
// loopback: ready() and the 'state' events, the one-line message and cause
// when nothing listens, channelOptions over the defaults, and the credentials
// callback asked before each call.
import net from 'node:net';
import {
  Server,
  ServerCredentials,
  status,
  type ServerUnaryCall,
  type sendUnaryData,
  type UntypedServiceImplementation,
} from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { createTallyClient, TallyError, type ConnectionState, type TallyClient } from '../../../src/client/index.ts';
import { libraryChannelDefaults } from '../../../src/client/connection/channel-defaults.ts';
import { CounterServiceClient } from '../../../src/client/counter-proto.ts';
import { waitFor } from '../../helpers/cluster.ts';

async function failure(call: () => Promise<unknown>): Promise<TallyError> {
  try {
    await call();
  } catch (error) {
    expect(error).toBeInstanceOf(TallyError);
    return error as TallyError;
  }
  throw new Error('the call succeeded');
}

/** A loopback port nothing listens on: bound, then released. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A CounterService whose Increment answers applied and records each call's authorization header. */
async function stubRouter(
  port = 0,
): Promise<{ address: string; port: number; tokens: string[]; stop(): Promise<void>; implementation: UntypedServiceImplementation }> {
  const server = new Server();
  const tokens: string[] = [];
  const implementation: UntypedServiceImplementation = {
    Increment: (call: ServerUnaryCall<unknown, unknown>, callback: sendUnaryData<unknown>) => {
      tokens.push(String(call.metadata.get('authorization')[0] ?? ''));
      callback(null, { applied: true, shard: 0 });
    },
  };
  const never = (): void => {};
  server.addService(
    CounterServiceClient.service,
    Object.fromEntries(Object.keys(CounterServiceClient.service).map((name) => [name, implementation[name] ?? never])),
  );
  const bound = await new Promise<number>((resolve, reject) =>
    server.bindAsync(`127.0.0.1:${port}`, ServerCredentials.createInsecure(), (error, result) => (error ? reject(error) : resolve(result))),
  );
  return {
    address: `127.0.0.1:${bound}`,
    port: bound,
    tokens,
    implementation,
    stop: () => new Promise<void>((resolve) => server.tryShutdown(() => resolve())),
  };
}

describe('client connection', () => {
  const clients: TallyClient[] = [];
  const stops: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const client of clients.splice(0)) client.close();
    for (const stop of stops.splice(0)) await stop();
  });
  const client = (options: Parameters<typeof createTallyClient>[0]): TallyClient => {
    const made = createTallyClient(options);
    clients.push(made);
    return made;
  };

  it('with nothing listening, a call fails in one actionable line with the grpc-js error as its cause', async () => {
    const port = await closedPort();
    const error = await failure(() =>
      client({ address: `127.0.0.1:${port}`, deadlineMs: 2_000 }).increment('c', 1, { idempotencyKey: null }),
    );
    expect(error.code).toBe('unavailable');
    expect(error.grpcCode).toBe(status.UNAVAILABLE);
    expect(error.message).toBe(
      `cannot reach a router at 127.0.0.1:${port}: connection refused (is the cluster running? --router / TALLY_ROUTER)`,
    );
    expect(error.message).not.toMatch(/No connection established|Resolution note/);
    // What grpc-js said is kept, for whoever needs it.
    expect(error.cause).toMatchObject({ code: status.UNAVAILABLE });
    expect(String((error.cause as Error).message)).toMatch(/ECONNREFUSED/);
  });

  it('ready() rejects UNAVAILABLE by its deadline with the same kind of line when nothing listens; a call after close() fails', async () => {
    const port = await closedPort();
    const tally = client({ address: `127.0.0.1:${port}` });
    const error = await failure(() => tally.ready({ deadlineMs: 500 }));
    expect(error.code).toBe('unavailable');
    expect(error.certainlyNotApplied).toBe(true);
    expect(error.message).toMatch(
      new RegExp(
        `^cannot reach a router at 127\\.0\\.0\\.1:${port}: .+ after 500 ms \\(is the cluster running\\? --router / TALLY_ROUTER\\)$`,
      ),
    );
    tally.close();
    expect((await failure(() => tally.ready())).code).toBe('failed_precondition');
  });

  it("'state' events follow the routers: idle, then connecting and ready on ready(), transient_failure or idle when the router goes, closed on close()", async () => {
    const router = await stubRouter();
    const tally = client({ address: router.address });
    expect(tally.state).toBe('idle');
    const states: ConnectionState[] = [];
    tally.on('state', (state) => states.push(state));
    await tally.ready({ deadlineMs: 5_000 });
    expect(tally.state).toBe('ready');
    expect(states.at(-1)).toBe('ready');
    expect(states).toContain('connecting');
    // ready() resolves at once while connected.
    await tally.ready({ deadlineMs: 1 });
    await router.stop();
    await waitFor(() => tally.state !== 'ready', { timeoutMs: 5_000 });
    expect(['idle', 'connecting', 'transient_failure']).toContain(tally.state);
    tally.close();
    expect(states.at(-1)).toBe('closed');
    expect(tally.state).toBe('closed');
  });

  it('ready() resolves once a router starts listening within its deadline', async () => {
    const port = await closedPort();
    const tally = client({ address: `127.0.0.1:${port}` });
    const readiness = tally.ready({ deadlineMs: 8_000 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const router = await stubRouter(port);
    stops.push(router.stop);
    await readiness;
    expect(tally.state).toBe('ready');
    expect((await tally.increment('c', 1)).applied).toBe(true);
  });

  it("channel defaults: keepalive a grpc-go server's default enforcement accepts, and reconnects backing off to tens of seconds", () => {
    const keepaliveMs = libraryChannelDefaults['grpc.keepalive_time_ms'] as number;
    // grpc-go's default MinTime is 5 minutes and PermitWithoutStream false: faster pings, or any without calls, draw GOAWAY.
    expect(keepaliveMs).toBeGreaterThanOrEqual(300_000);
    expect(libraryChannelDefaults['grpc.keepalive_permit_without_calls']).toBe(0);
    expect(libraryChannelDefaults['grpc.max_reconnect_backoff_ms']).toBeGreaterThanOrEqual(10_000);
    expect(libraryChannelDefaults['grpc.initial_reconnect_backoff_ms']).toBeLessThan(
      libraryChannelDefaults['grpc.max_reconnect_backoff_ms']!,
    );
  });

  it('channel options: the caller’s reach the channel (a send limit of 10 bytes refuses an increment that fits the default)', async () => {
    const router = await stubRouter();
    stops.push(router.stop);
    expect((await client({ address: router.address }).increment('a-counter-name', 1, { idempotencyKey: null })).applied).toBe(true);
    const limited = client({ address: router.address, channelOptions: { 'grpc.max_send_message_length': 10 } });
    const error = await failure(() => limited.increment('a-counter-name', 1, { idempotencyKey: null }));
    expect(error.grpcCode).toBe(status.RESOURCE_EXHAUSTED);
    expect(router.tokens).toHaveLength(1);
  });

  it('credentials: the callback is asked before every call, so a rotated token is sent from the next call on', async () => {
    const router = await stubRouter();
    stops.push(router.stop);
    let version = 0;
    const tally = client({ address: router.address, credentials: async () => `token-${++version}` });
    await tally.increment('c', 1);
    await tally.increment('c', 1);
    expect(router.tokens).toEqual(['Bearer token-1', 'Bearer token-2']);
  });

  it('credentials: a callback that throws or gives no usable token fails the call UNAUTHENTICATED, not applied, with nothing sent', async () => {
    const router = await stubRouter();
    stops.push(router.stop);
    const broken = new Error('vault sealed');
    const throwing = await failure(() =>
      client({
        address: router.address,
        credentials: () => {
          throw broken;
        },
      }).increment('c', 1),
    );
    expect(throwing.code).toBe('unauthenticated');
    expect(throwing.certainlyNotApplied).toBe(true);
    expect(throwing.message).toContain('vault sealed');
    expect(throwing.cause).toBe(broken);
    for (const bad of ['', 'two words', 'line\nbreak'])
      expect((await failure(() => client({ address: router.address, credentials: () => bad }).increment('c', 1))).code).toBe(
        'unauthenticated',
      );
    expect(router.tokens).toEqual([]);
  });

  it('credentials: refused with a token too, and in plaintext to a router off loopback', () => {
    expect(() => createTallyClient({ address: '127.0.0.1:50051', token: 'a'.repeat(16), credentials: () => 'b' })).toThrow(
      /give token or credentials, not both/,
    );
    expect(() => createTallyClient({ address: 'tally.example.com:50051', credentials: () => 'b' })).toThrow(/refusing to send a token/);
  });
});
