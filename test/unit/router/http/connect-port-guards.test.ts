// The HTTP port's guards on a port of its own with handlers held open: the
// caps on calls in flight (shared with the gRPC port's count), the deadline
// ceiling, a caller's own deadline, and a handler's status passed through.
import { afterEach, describe, expect, it } from 'vitest';
import { ErrorCode, TallyError, withLeanCodecs } from '../../../../src/wire/index.ts';
import {
  counterServiceDefinition,
  adminServiceDefinition,
  guardMalformed,
  type InFlightCount,
  type Logger,
} from '../../../../src/common/index.ts';
import { handler, tokensOf, type CallState, type UnaryHandlers } from '../../../../src/router/api/index.ts';
import { startConnectPort, type ConnectPort, type HttpMetrics } from '../../../../src/router/http/index.ts';

const quiet: Logger = { debug() {}, info() {}, warn() {}, error() {} };

interface Started {
  port: ConnectPort;
  count: InFlightCount;
  statuses: [string, number][];
  /** Resolves the Increment calls held open. */
  release(): void;
  /** What each Increment call saw of its call when it ended. */
  seen: CallState[];
}

const started: ConnectPort[] = [];
afterEach(async () => {
  for (const port of started.splice(0)) await port.close(1_000);
});

async function start(options: { callsMax: number; deadlineMaxMs: number; hold: 'until-released' | 'forever' }): Promise<Started> {
  const count: InFlightCount = { calls: 0, largeCalls: 0 };
  const statuses: [string, number][] = [];
  const seen: CallState[] = [];
  let release = (): void => {};
  const released = new Promise<void>((resolve) => (release = resolve));
  const counter: UnaryHandlers = {
    Increment: handler(async (request: { amount: number }, call: CallState) => {
      if (request.amount < 0) throw new TallyError(ErrorCode.unavailable, 'no live shard took it');
      if (options.hold === 'until-released') await released;
      // Works until told the call ended, as a read checking call.cancelled between node calls does.
      else while (!call.cancelled) await new Promise((resolve) => setTimeout(resolve, 5));
      seen.push(call);
      return { applied: true, shard: 0 };
    }),
  };
  const metrics = {
    rpcStatus: (path: string, code: number) => statuses.push([path, code]),
    callsRefused: { inc() {} },
    httpCalls: { inc() {} },
  } as unknown as HttpMetrics;
  const port = await startConnectPort({
    host: '127.0.0.1',
    port: 0,
    tls: undefined,
    requireClientCert: false,
    corsOrigins: [],
    services: {
      counter: { handlers: counter, definition: guardMalformed(withLeanCodecs(counterServiceDefinition), () => 4096) },
      admin: { handlers: {}, definition: guardMalformed(adminServiceDefinition, () => 4096) },
    },
    tokens: tokensOf(undefined, undefined),
    inFlight: { callsMax: options.callsMax, largeCallsMax: options.callsMax, isLarge: () => false, count },
    deadlineMaxMs: options.deadlineMaxMs,
    requestBytesMaxOf: () => 4096,
    metrics,
    logger: quiet,
  });
  started.push(port);
  return { port, count, statuses, release, seen };
}

function increment(port: ConnectPort, amount: number, headers: Record<string, string> = {}) {
  return fetch(`http://127.0.0.1:${port.port}/counter.v1.CounterService/Increment`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ counter: 'c', amount: String(amount) }),
  }).then(async (response) => ({ status: response.status, body: (await response.json()) as Record<string, unknown> }));
}

describe('connect port guards', () => {
  it('past the cap on calls in flight a call is refused RESOURCE_EXHAUSTED with a retry delay; the count is the shared one', async () => {
    const { port, count, release, statuses } = await start({ callsMax: 1, deadlineMaxMs: 60_000, hold: 'until-released' });
    const first = increment(port, 1);
    // The held call is counted where the gRPC port counts too.
    while (count.calls === 0) await new Promise((resolve) => setImmediate(resolve));
    const refused = await increment(port, 1);
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ code: 'resource_exhausted', message: 'server busy: 1 calls in flight; retry with backoff' });
    expect(refused.body.details).toEqual(expect.arrayContaining([expect.objectContaining({ type: 'google.rpc.RetryInfo' })]));
    // A gRPC call holding the only slot refuses HTTP calls the same way.
    release();
    expect((await first).status).toBe(200);
    while (count.calls !== 0) await new Promise((resolve) => setImmediate(resolve));
    count.calls = 1;
    expect((await increment(port, 1)).status).toBe(429);
    count.calls = 0;
    expect(statuses.map(([, code]) => code)).toEqual([8, 0, 8]);
  });

  it('a call without a deadline ends DEADLINE_EXCEEDED at the ceiling, its handler told it is cancelled', async () => {
    const { port, seen } = await start({ callsMax: 10, deadlineMaxMs: 200, hold: 'forever' });
    const answer = await increment(port, 1);
    expect(answer.status).toBe(504);
    expect(answer.body).toMatchObject({
      code: 'deadline_exceeded',
      message: 'the server ends any call after 200 ms; give a shorter deadline',
    });
    while (seen.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(seen[0]!.cancelled).toBe(true);
  });

  it("a caller's own deadline ends the call, and a handler's error passes with its code and words", async () => {
    const { port, seen } = await start({ callsMax: 10, deadlineMaxMs: 60_000, hold: 'forever' });
    const answer = await increment(port, 1, { 'connect-timeout-ms': '100' });
    expect(answer.body.code).toBe('deadline_exceeded');
    while (seen.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(seen[0]!.cancelled).toBe(true);
    const failed = await increment(port, -1);
    expect(failed).toMatchObject({ status: 503, body: { code: 'unavailable', message: 'no live shard took it' } });
    // A method the handlers do not serve is not invented.
    const other = await fetch(`http://127.0.0.1:${port.port}/counter.v1.Nope/Increment`, { method: 'POST', body: '{}' });
    expect(other.status).toBe(404);
  });
});
