// The router's HTTP port (Connect JSON and binary, gRPC-Web) against a real
// cluster: the gRPC port's handlers, validation, statuses and metrics, int64
// as strings in JSON, return_total, and bad input that changes nothing; on a
// secure cluster, HTTPS and the same tokens, checked before the body is read.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import { promisify } from 'node:util';
import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import { Code, ConnectError, createClient, type Interceptor } from '@connectrpc/connect';
import { createConnectTransport, createGrpcWebTransport } from '@connectrpc/connect-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CounterService, IncrementRequestSchema, IncrementResponseSchema } from '../../src/generated/es/counter_pb.ts';
import { scrapeMetric, startCluster, waitFor, type TestCluster } from '../helpers/cluster.ts';
import { httpPortOf } from '../helpers/http-port.ts';

interface JsonAnswer {
  status: number;
  body: Record<string, unknown>;
}

describe('connect port: JSON, binary and gRPC-Web on a plaintext cluster', () => {
  let cluster: TestCluster;
  let base: string;
  beforeAll(async () => {
    cluster = await startCluster({ metrics: true, routerArgs: ['--http-port', 'any'] });
    base = `http://127.0.0.1:${httpPortOf(cluster.logs)}`;
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  const post = async (method: string, body: unknown, headers: Record<string, string> = {}): Promise<JsonAnswer> => {
    const response = await fetch(`${base}/counter.v1.${method}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, body: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>) };
  };
  const totalOf = async (counter: string): Promise<string> => {
    const read = await post('CounterService/Read', { counter });
    expect(read.status).toBe(200);
    return read.body.total as string;
  };

  it('Increment and Read in JSON: int64 as strings, exact past 2^53, and the same total the gRPC port reads', async () => {
    const big = '9007199254740993'; // 2^53 + 1: not a float
    const first = await post('CounterService/Increment', { counter: 'connect:big', amount: big });
    expect(first).toEqual({ status: 200, body: { applied: true, shard: 0 } });
    const read = await post('CounterService/Read', { counter: 'connect:big', consistency: 'EXACT' });
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ counter: 'connect:big', total: big, exact: true, shards: 1 });
    expect((await cluster.client.read('connect:big')).total).toBe(BigInt(big));
  });

  it('return_total: the exact total after the increment, a duplicate key too, per item in a batch', async () => {
    await cluster.client.increment('connect:rt', 40n);
    const answer = await post('CounterService/Increment', {
      counter: 'connect:rt',
      amount: '2',
      returnTotal: true,
      idempotencyKey: 'a2V5LTE=',
    });
    expect(answer).toEqual({ status: 200, body: { applied: true, shard: 0, total: '42' } });
    // The same key again: not applied, and the total says so.
    const again = await post('CounterService/Increment', {
      counter: 'connect:rt',
      amount: '2',
      returnTotal: true,
      idempotencyKey: 'a2V5LTE=',
    });
    expect(again).toEqual({ status: 200, body: { applied: false, shard: 0, total: '42' } });
    // Not asked: no total.
    expect((await post('CounterService/Increment', { counter: 'connect:rt', amount: '-2' })).body).not.toHaveProperty('total');
    const batch = await post('CounterService/IncrementBatch', {
      items: [
        { counter: 'connect:rt', amount: '5', returnTotal: true },
        { counter: 'connect:rt-other', amount: '7' },
        { counter: 'connect:rt-other', amount: '1', returnTotal: true },
      ],
    });
    expect(batch.status).toBe(200);
    const results = batch.body.results as { applied: boolean; total?: string }[];
    // Read after the whole batch was acknowledged: each includes every item of its counter.
    expect(results.map((result) => result.total)).toEqual(['45', undefined, '8']);
  });

  it('return_total on the gRPC port: the lean codec carries it both ways', async () => {
    const client = createClient(CounterService, createConnectTransport({ baseUrl: base, httpVersion: '1.1' }));
    await client.increment({ counter: 'connect:grpc-rt', amount: 3n });
    // The gRPC port through a raw grpc-js call: the repo's client does not ask return_total yet.
    const grpc = await import('@grpc/grpc-js');
    const { CounterServiceClient } = await import('../../src/common/index.ts');
    const { withLeanCodecs } = await import('../../src/wire/index.ts');
    const Client = grpc.makeGenericClientConstructor(withLeanCodecs(CounterServiceClient.service), 'CounterService');
    const raw = new Client(cluster.cluster.routerAddress, grpc.credentials.createInsecure()) as unknown as {
      Increment(request: object, callback: (error: Error | null, response: { total?: string }) => void): void;
      close(): void;
    };
    try {
      const response = await new Promise<{ total?: string; applied: boolean }>((resolve, reject) =>
        raw.Increment({ counter: 'connect:grpc-rt', amount: 4, returnTotal: true }, (error, value) =>
          error ? reject(error) : resolve(value as { total?: string; applied: boolean }),
        ),
      );
      expect(response).toMatchObject({ applied: true, total: '7' });
    } finally {
      raw.close();
    }
  });

  it('bad input gets a clear Connect error and changes nothing', async () => {
    await cluster.client.increment('connect:bad', 10n);
    const cases: { body: unknown; status: number; code: string; message: RegExp }[] = [
      {
        body: { counter: 'connect:bad', amount: '0' },
        status: 400,
        code: 'invalid_argument',
        message: /^amount is 0; it must be non-zero$/,
      },
      {
        body: '{"counter":"connect:bad","amount":',
        status: 400,
        code: 'invalid_argument',
        message: /cannot decode message counter\.v1\.IncrementRequest from JSON/,
      },
      {
        body: { counter: 'connect:bad', amount: '1', amuont: '1' },
        status: 400,
        code: 'invalid_argument',
        message: /key "amuont" is unknown/,
      },
      {
        body: { counter: 'connect:bad', amount: 'ten' },
        status: 400,
        code: 'invalid_argument',
        message: /^cannot decode field counter\.v1\.IncrementRequest\.amount from JSON/,
      },
      { body: { counter: ['connect:bad'], amount: '1' }, status: 400, code: 'invalid_argument', message: /cannot decode/ },
      { body: { counter: 'connect:bad', amount: '9223372036854775808' }, status: 400, code: 'invalid_argument', message: /cannot decode/ },
      { body: { counter: '', amount: '1' }, status: 400, code: 'invalid_argument', message: /counter name/ },
      // Past the gRPC port's bound for one Increment (4 KiB of protobuf): the same words.
      {
        body: { counter: 'x'.repeat(5_000), amount: '1' },
        status: 429,
        code: 'resource_exhausted',
        message: /^Increment request of \d+ bytes; the limit for Increment is 4096 bytes$/,
      },
      // Far past it: refused on Content-Length, before the body is read.
      {
        body: { counter: 'x'.repeat(100_000), amount: '1' },
        status: 429,
        code: 'resource_exhausted',
        message: /the limit for Increment is 4096 bytes/,
      },
    ];
    for (const { body, status, code, message } of cases) {
      const answer = await post('CounterService/Increment', body);
      expect({ status: answer.status, code: answer.body.code }, JSON.stringify(body).slice(0, 80)).toEqual({ status, code });
      expect(answer.body.message).toMatch(message);
    }
    // A batch with one bad item: nothing of it is applied.
    const batch = await post('CounterService/IncrementBatch', {
      items: [
        { counter: 'connect:bad', amount: '5' },
        { counter: 'connect:bad', amount: '0' },
      ],
    });
    expect(batch.status).toBe(400);
    expect(batch.body.message).toBe('item 1: amount is 0; it must be non-zero');
    // An oversized JSON body: past the server's message bound.
    const huge = await post('CounterService/IncrementBatch', {
      items: [{ counter: 'connect:bad', amount: '1', idempotencyKey: 'A'.repeat(6 * 1024 * 1024) }],
    });
    expect(huge.body.code).toBe('resource_exhausted');
    expect(await totalOf('connect:bad')).toBe('10');
    // Errors carry the gRPC port's google.rpc details: nothing was applied.
    const refused = await post('CounterService/Increment', { counter: 'connect:bad', amount: '0' });
    expect(refused.body.details).toEqual([
      expect.objectContaining({ type: 'google.rpc.ErrorInfo', debug: { reason: 'NOT_APPLIED', domain: 'tally.counter.v1', metadata: {} } }),
    ]);
    // Admin errors: NOT_FOUND as on the gRPC port.
    const missing = await post('AdminService/Describe', { counter: 'connect:never-made' });
    expect(missing.status).toBe(404);
    expect(missing.body.code).toBe('not_found');
  });

  it('Connect binary and gRPC-Web clients reach the same handlers', async () => {
    const request = create(IncrementRequestSchema, { counter: 'connect:bin', amount: 6n, returnTotal: true });
    const response = await fetch(`${base}/counter.v1.CounterService/Increment`, {
      method: 'POST',
      headers: { 'content-type': 'application/proto' },
      body: toBinary(IncrementRequestSchema, request),
    });
    expect(response.status).toBe(200);
    const answer = fromBinary(IncrementResponseSchema, new Uint8Array(await response.arrayBuffer()));
    expect(answer.applied).toBe(true);
    expect(answer.returnedTotal).toEqual({ case: 'total', value: 6n });

    // A body that is no message: the gRPC port's codec refuses it, INVALID_ARGUMENT in its words, in either protocol.
    const cut = Buffer.from([0x1a, 0x05, 0x01]); // a key of 5 bytes, 1 there
    const binary = await fetch(`${base}/counter.v1.CounterService/Increment`, {
      method: 'POST',
      headers: { 'content-type': 'application/proto' },
      body: cut,
    });
    expect(binary.status).toBe(400);
    expect(await binary.json()).toMatchObject({ code: 'invalid_argument', message: expect.stringMatching(/^malformed request: /) });
    const framed = Buffer.concat([Buffer.from([0, 0, 0, 0, cut.length]), cut]);
    const webRefused = await fetch(`${base}/counter.v1.CounterService/Increment`, {
      method: 'POST',
      headers: { 'content-type': 'application/grpc-web+proto', 'x-grpc-web': '1' },
      body: framed,
    });
    const trailer = Buffer.from(await webRefused.arrayBuffer()).toString('latin1');
    expect(trailer).toMatch(/grpc-status: 3\r\n/);
    expect(trailer).toMatch(/grpc-message: malformed%20request/);
    expect(await totalOf('connect:bin')).toBe('6');

    const web = createClient(CounterService, createGrpcWebTransport({ baseUrl: base, httpVersion: '1.1' }));
    expect((await web.increment({ counter: 'connect:bin', amount: 4n, returnTotal: true })).returnedTotal.value).toBe(10n);
    const read = await web.readMany({ counters: ['connect:bin', 'connect:bin-none'] });
    expect(read.values.map((value) => value.total)).toEqual([10n, 0n]);
    const error = await web.increment({ counter: 'connect:bin', amount: 0n }).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(ConnectError);
    expect((error as ConnectError).code).toBe(Code.InvalidArgument);
    expect((error as ConnectError).rawMessage).toBe('amount is 0; it must be non-zero');
    // A bidi stream needs HTTP/2 end to end: the gRPC port serves it.
    const stream = await fetch(`${base}/counter.v1.CounterService/IncrementStream`, {
      method: 'POST',
      headers: { 'content-type': 'application/connect+json' },
      body: '',
    });
    expect(stream.status).not.toBe(200);
  });

  it('calls count in tally_rpc_total by method and code, and in tally_http_calls_total by protocol', async () => {
    const port = cluster.routerMetricsPort;
    const okBefore = await scrapeMetric(port, 'tally_rpc_total', { service: 'counter.v1.CounterService', method: 'Increment', code: 'OK' });
    const badBefore = await scrapeMetric(port, 'tally_rpc_total', { method: 'Increment', code: 'INVALID_ARGUMENT' }).catch(() => 0);
    const jsonBefore = await scrapeMetric(port, 'tally_http_calls_total', { protocol: 'connect_json' });
    const acceptedBefore = await scrapeMetric(port, 'tally_increments_accepted_total');
    await post('CounterService/Increment', { counter: 'connect:metrics', amount: '1' });
    await post('CounterService/Increment', { counter: 'connect:metrics', amount: '0' });
    await post('CounterService/Increment', '{');
    expect(await scrapeMetric(port, 'tally_rpc_total', { service: 'counter.v1.CounterService', method: 'Increment', code: 'OK' })).toBe(
      okBefore + 1,
    );
    expect(await scrapeMetric(port, 'tally_rpc_total', { method: 'Increment', code: 'INVALID_ARGUMENT' })).toBe(badBefore + 2);
    expect(await scrapeMetric(port, 'tally_http_calls_total', { protocol: 'connect_json' })).toBe(jsonBefore + 3);
    expect(await scrapeMetric(port, 'tally_increments_accepted_total')).toBe(acceptedBefore + 1);
    expect(await scrapeMetric(port, 'tally_increment_latency_seconds_count', { rpc: 'increment' })).toBeGreaterThan(0);
  });

  it('a real curl with JSON', async () => {
    const curl = ['/usr/bin/curl', '/bin/curl'].find((file) => fs.existsSync(file));
    if (curl === undefined) return;
    const { stdout } = await promisify(execFile)(curl, [
      '-sS',
      '-H',
      'content-type: application/json',
      '-d',
      '{"counter":"connect:curl","amount":"1","returnTotal":true}',
      `${base}/counter.v1.CounterService/Increment`,
    ]);
    expect(JSON.parse(stdout)).toEqual({ applied: true, shard: 0, total: '1' });
  });
});

describe('connect port on a secure cluster: HTTPS and the same tokens', () => {
  let cluster: TestCluster;
  let port: number;
  let ca: Buffer;
  let clientToken: string;
  let adminToken: string;
  beforeAll(async () => {
    cluster = await startCluster({ secure: true, metrics: true, routerArgs: ['--http-port', 'any'] });
    port = httpPortOf(cluster.logs);
    ca = fs.readFileSync(path.join(cluster.certDir!, 'ca.crt'));
    clientToken = fs.readFileSync(path.join(cluster.certDir!, 'client.token'), 'utf8').trim();
    adminToken = fs.readFileSync(path.join(cluster.certDir!, 'admin.token'), 'utf8').trim();
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  const post = (method: string, body: string, token?: string): Promise<JsonAnswer> =>
    new Promise((resolve, reject) => {
      const request = https.request(
        {
          host: '127.0.0.1',
          port,
          path: `/counter.v1.${method}`,
          method: 'POST',
          ca,
          servername: 'localhost',
          headers: {
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(body),
            ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
          },
        },
        (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () =>
            resolve({ status: response.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString() || '{}') }),
          );
        },
      );
      // A refusal may close the connection before the whole body is written.
      request.on('error', reject);
      request.end(body);
    });

  it('refuses without a token, refuses AdminService to the client token, serves with the right one', async () => {
    const body = JSON.stringify({ counter: 'secure:x', amount: '1', returnTotal: true });
    expect(await post('CounterService/Increment', body)).toMatchObject({ status: 401, body: { code: 'unauthenticated' } });
    expect(await post('CounterService/Increment', body, 'not-the-token-at-all')).toMatchObject({ status: 401 });
    expect(await post('CounterService/Increment', body, clientToken)).toEqual({
      status: 200,
      body: { applied: true, shard: 0, total: '1' },
    });
    const describe = JSON.stringify({ counter: 'secure:x' });
    expect(await post('AdminService/Describe', describe, clientToken)).toMatchObject({
      status: 403,
      body: { code: 'permission_denied', message: 'this credential may not call AdminService' },
    });
    expect(await post('AdminService/Describe', describe, adminToken)).toMatchObject({
      status: 200,
      body: { counter: 'secure:x', shards: 1 },
    });
    // Credentials before the body: an unauthenticated oversized body is refused for its credentials, not its size.
    const huge = JSON.stringify({ counter: 'x'.repeat(100_000), amount: '1' });
    expect(await post('CounterService/Increment', huge)).toMatchObject({ status: 401, body: { code: 'unauthenticated' } });
    expect((await cluster.client.read('secure:x')).total).toBe(1n);
    expect(
      await scrapeMetric(cluster.routerMetricsPort, 'tally_router_calls_refused_total', { reason: 'unauthenticated' }),
    ).toBeGreaterThanOrEqual(3);
    expect(
      await scrapeMetric(cluster.routerMetricsPort, 'tally_router_calls_refused_total', { reason: 'permission_denied' }),
    ).toBeGreaterThanOrEqual(1);
  });

  it('HTTP/2 over TLS: a Connect client and a gRPC-Web client with the client token; IncrementStream stays on the gRPC port', async () => {
    const withToken: Interceptor = (next) => (request) => {
      request.header.set('authorization', `Bearer ${clientToken}`);
      return next(request);
    };
    const baseUrl = `https://localhost:${port}`;
    const h2 = createClient(
      CounterService,
      createConnectTransport({ baseUrl, httpVersion: '2', nodeOptions: { ca }, interceptors: [withToken] }),
    );
    expect((await h2.increment({ counter: 'secure:h2', amount: 2n, returnTotal: true })).returnedTotal.value).toBe(2n);
    const web = createClient(
      CounterService,
      createGrpcWebTransport({ baseUrl, httpVersion: '2', nodeOptions: { ca }, interceptors: [withToken] }),
    );
    expect((await web.increment({ counter: 'secure:h2', amount: 3n, returnTotal: true })).returnedTotal.value).toBe(5n);
    const batches = (async function* () {
      yield { items: [{ counter: 'secure:h2', amount: 1n }], sequence: 1n };
    })();
    const drained = (async () => {
      for await (const answer of h2.incrementStream(batches)) void answer;
    })();
    await expect(drained).rejects.toMatchObject({
      code: Code.Unimplemented,
      rawMessage: 'IncrementStream is served on the gRPC port only',
    });
    expect((await cluster.client.read('secure:h2')).total).toBe(5n);
  });
});

describe('connect port: return_total when the exact read cannot be made', () => {
  let cluster: TestCluster;
  let base: string;
  beforeAll(async () => {
    cluster = await startCluster({ pairs: 2, routerArgs: ['--http-port', 'any'] });
    base = `http://127.0.0.1:${httpPortOf(cluster.logs)}`;
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  const post = async (method: string, body: unknown): Promise<JsonAnswer> => {
    const response = await fetch(`${base}/counter.v1.${method}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };

  it('the increment stands and the answer has no total (never a partial sum)', { timeout: 40_000 }, async () => {
    expect((await post('CounterService/Increment', { counter: 'connect:split', amount: '1' })).status).toBe(200);
    // AdminService over HTTP: two shards, one on each pair.
    expect((await post('AdminService/SetShards', { counter: 'connect:split', shards: 2 })).body).toMatchObject({ shards: 2 });
    const described = await post('AdminService/Describe', { counter: 'connect:split' });
    const pairs = (described.body.placements as { pair: number }[]).map((placement) => placement.pair);
    expect(new Set(pairs).size).toBe(2);
    // Both sides of shard 1's pair: that shard can be neither written nor read.
    for (const role of ['primary', 'follower'] as const) await cluster.cluster.node(pairs[1]!, role).process.stop('SIGKILL');
    const seen: string[] = [];
    const answer = await waitFor(
      async () => {
        const attempt = await post('CounterService/Increment', { counter: 'connect:split', amount: '1', returnTotal: true });
        seen.push(`${attempt.status} ${JSON.stringify(attempt.body).slice(0, 120)}`);
        return attempt.status === 200 ? attempt : undefined;
      },
      { timeoutMs: 25_000, what: 'an increment on the live shard' },
    ).catch((error: Error) => {
      throw new Error(`${error.message}; saw ${seen.slice(-3).join(' | ')}`);
    });
    expect(answer.body).toEqual({ applied: true, shard: 0 });
    // A read now fails as a whole: what return_total left out.
    expect((await post('CounterService/Read', { counter: 'connect:split' })).body.code).toBe('unavailable');
  });
});
