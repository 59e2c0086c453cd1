// The router's HTTP port (Connect JSON and binary, gRPC-Web) against a real
// cluster: the same handlers, auth, validation and statuses as the gRPC port.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCluster, type TestCluster } from '../helpers/cluster.ts';

function httpPortOf(logs: readonly string[]): number {
  for (const line of logs) {
    const match = /"httpPort":(\d+)/.exec(line);
    if (match !== null) return Number(match[1]);
  }
  throw new Error('the router reported no httpPort');
}

describe('connect port', () => {
  let cluster: TestCluster;
  let base: string;
  beforeAll(async () => {
    cluster = await startCluster({ metrics: true, routerArgs: ['--http-port', 'any'] });
    base = `http://127.0.0.1:${httpPortOf(cluster.logs)}`;
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  const post = (method: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${base}/counter.v1.${method}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });

  it('smoke', async () => {
    const response = await post('CounterService/Increment', { counter: 'x', amount: '1', returnTotal: true });
    console.log(response.status, await response.text());
    const bad = await post('CounterService/Increment', { counter: 'x', amount: '0' });
    console.log(bad.status, await bad.text());
    const unknown = await post('CounterService/Increment', { counter: 'x', amount: '1', bogus: 1 });
    console.log(unknown.status, await unknown.text());
    const malformed = await post('CounterService/Increment', '{"counter":');
    console.log(malformed.status, await malformed.text());
    const read = await post('CounterService/Read', { counter: 'x' });
    console.log(read.status, await read.text());
    const stream = await post('CounterService/IncrementStream', {});
    console.log(stream.status, await stream.text());
  });
});
