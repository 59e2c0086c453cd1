// A page in headless Chromium (the system's, driven by playwright-core)
// calls the router's HTTP port across origins: Connect JSON with fetch, and
// gRPC-Web framed by hand as a browser library would. CORS lets the
// configured origin read the answers and keeps any other origin out.
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCluster, type TestCluster } from '../helpers/cluster.ts';
import { httpPortOf } from '../helpers/http-port.ts';

const chromiumPath = '/usr/bin/chromium';
const hasChromium = fs.existsSync(chromiumPath);

const page = `<!doctype html><meta charset="utf-8"><title>tally</title><script>
// IncrementRequest{counter, amount, return_total} as protobuf bytes: small positive amounts only (one varint).
function incrementRequest(counter, amount) {
  const name = new TextEncoder().encode(counter);
  return new Uint8Array([0x0a, name.length, ...name, 0x10, amount, 0x20, 1]);
}
function varint(bytes, at) {
  let value = 0n, shift = 0n, byte;
  do { byte = bytes[at.pos++]; value |= BigInt(byte & 0x7f) << shift; shift += 7n; } while (byte & 0x80);
  return value;
}
// A gRPC-Web unary call: one data frame out; data and trailer frames back.
async function grpcWebIncrement(base, counter, amount) {
  const message = incrementRequest(counter, amount);
  const frame = new Uint8Array(5 + message.length);
  new DataView(frame.buffer).setUint32(1, message.length);
  frame.set(message, 5);
  const response = await fetch(base + '/counter.v1.CounterService/Increment', {
    method: 'POST',
    headers: { 'content-type': 'application/grpc-web+proto', 'x-grpc-web': '1' },
    body: frame,
  });
  const bytes = new Uint8Array(await response.arrayBuffer());
  const answer = { httpStatus: response.status, grpcStatus: response.headers.get('grpc-status') };
  for (let pos = 0; pos < bytes.length; ) {
    const flags = bytes[pos];
    const length = new DataView(bytes.buffer, bytes.byteOffset + pos + 1, 4).getUint32(0);
    const body = bytes.subarray(pos + 5, pos + 5 + length);
    pos += 5 + length;
    if (flags & 0x80) {
      const trailers = new TextDecoder().decode(body);
      answer.grpcStatus = /grpc-status:\\s*(\\d+)/i.exec(trailers)?.[1] ?? answer.grpcStatus;
      continue;
    }
    const at = { pos: 0 };
    while (at.pos < body.length) {
      const tag = Number(varint(body, at));
      const value = varint(body, at);
      if (tag >> 3 === 1) answer.applied = value === 1n;
      if (tag >> 3 === 3) answer.total = value.toString();
    }
  }
  return answer;
}
</script>`;

describe.skipIf(!hasChromium)('connect port from a browser page', () => {
  let cluster: TestCluster;
  let pages: http.Server;
  let browser: Browser;
  let pageOrigin: string;
  let otherOrigin: string;
  let base: string;
  beforeAll(async () => {
    pages = http.createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/html' });
      response.end(page);
    });
    await new Promise<void>((resolve) => pages.listen(0, '127.0.0.1', resolve));
    const pagePort = (pages.address() as AddressInfo).port;
    pageOrigin = `http://127.0.0.1:${pagePort}`;
    // The same page by another name is another origin, one the router does not allow.
    otherOrigin = `http://localhost:${pagePort}`;
    cluster = await startCluster({ routerArgs: ['--http-port', 'any', '--http-cors-origins', pageOrigin] });
    base = `http://127.0.0.1:${httpPortOf(cluster.logs)}`;
    browser = await chromium.launch({ executablePath: chromiumPath, args: ['--no-sandbox'] });
  });
  afterAll(async () => {
    await browser?.close();
    await cluster?.stop();
    await new Promise((resolve) => pages?.close(resolve));
  });

  it('Connect JSON and gRPC-Web from an allowed origin; nothing readable from another', async () => {
    const tab = await browser.newPage();
    await tab.goto(pageOrigin);
    const json = await tab.evaluate(async (routerBase) => {
      const response = await fetch(`${routerBase}/counter.v1.CounterService/Increment`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ counter: 'browser:likes', amount: '3', returnTotal: true }),
      });
      return { status: response.status, body: (await response.json()) as unknown };
    }, base);
    expect(json).toEqual({ status: 200, body: { applied: true, shard: 0, total: '3' } });

    const web = await tab.evaluate(
      (routerBase) =>
        (globalThis as unknown as { grpcWebIncrement(base: string, counter: string, amount: number): Promise<unknown> }).grpcWebIncrement(
          routerBase,
          'browser:likes',
          4,
        ),
      base,
    );
    expect(web).toEqual({ httpStatus: 200, grpcStatus: '0', applied: true, total: '7' });

    const error = await tab.evaluate(async (routerBase) => {
      const response = await fetch(`${routerBase}/counter.v1.CounterService/Increment`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ counter: 'browser:likes', amount: '0' }),
      });
      return { status: response.status, body: (await response.json()) as { code: string; message: string } };
    }, base);
    expect(error.status).toBe(400);
    expect(error.body).toMatchObject({ code: 'invalid_argument', message: 'amount is 0; it must be non-zero' });

    const other = await browser.newPage();
    await other.goto(otherOrigin);
    const refused = await other.evaluate(async (routerBase) => {
      try {
        await fetch(`${routerBase}/counter.v1.CounterService/Increment`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ counter: 'browser:likes', amount: '100' }),
        });
        return 'read';
      } catch (thrown) {
        return (thrown as Error).name;
      }
    }, base);
    // The preflight was refused: the browser never sent the increment.
    expect(refused).toBe('TypeError');
    expect((await cluster.client.read('browser:likes')).total).toBe(7n);
  });
});
