// grpc-js captures a caller stack (`new Error()`) as each unary call starts;
// our callers never read it. The client's router set and the router's node
// sender start their calls without it, and leave Error.stackTraceLimit as
// they found it, also when the start throws.
import { afterEach, describe, expect, it } from 'vitest';
import { type Metadata, credentials, connectivityState, type ServiceError } from '@grpc/grpc-js';
import { withoutCallerStack } from '../../../../src/wire/index.ts';
import type { shardV1 } from '../../../../src/common/index.ts';
import { CallAuth } from '../../../../src/client/connection/call-auth.ts';
import { RouterSet, type Rpc } from '../../../../src/client/connection/router-set.ts';
import { NodeSender } from '../../../../src/router/nodes/node-sender.ts';

const limitBefore = Error.stackTraceLimit;
afterEach(() => {
  Error.stackTraceLimit = limitBefore;
});

/** The frames of an Error made now: what grpc-js's per-call capture walks. */
const framesOfNewError = (): number => (new Error().stack ?? '').split('\n').length - 1;

describe('caller stack', () => {
  it('withoutCallerStack: an Error made inside start has no frames; the limit is back after, also when start throws', () => {
    expect(framesOfNewError()).toBeGreaterThan(0);
    expect(withoutCallerStack(framesOfNewError)).toBe(0);
    expect(Error.stackTraceLimit).toBe(limitBefore);
    expect(() =>
      withoutCallerStack(() => {
        throw new RangeError('refused');
      }),
    ).toThrow('refused');
    expect(Error.stackTraceLimit).toBe(limitBefore);
    expect(framesOfNewError()).toBeGreaterThan(0);
  });

  it('router set: a call to a router starts with no caller stack to capture, and its answer comes back as before', async () => {
    const routers = new RouterSet(['127.0.0.1:1'], credentials.createInsecure(), new CallAuth(undefined, undefined));
    const framesAtStart: number[] = [];
    // A stand-in for the generated method: it starts nothing, records what a capture at its start would walk, and answers.
    const method = function (_request: object, _metadata: Metadata, _options: object, callback: (error: null, response: object) => void) {
      framesAtStart.push(framesOfNewError());
      setImmediate(() => callback(null, { applied: true, shard: 3 }));
      return { cancel: () => undefined };
    };
    const rpc = { service: 'counter', method } as unknown as Rpc<object, { applied: boolean; shard: number }>;
    const response = await routers.attempt('unkeyed', rpc, {}, performance.now() + 5_000, new Set());
    routers.close();
    expect(response).toEqual({ applied: true, shard: 3 });
    expect(framesAtStart).toEqual([0]);
    expect(Error.stackTraceLimit).toBe(limitBefore);
  });

  it('node sender: an Apply call to a node starts with no caller stack to capture', async () => {
    const framesAtStart: number[] = [];
    const rpc = {
      getChannel: () => ({ getConnectivityState: () => connectivityState.READY }),
      Apply: (
        request: shardV1.ApplyRequest,
        _options: unknown,
        callback: (error: ServiceError | null, response?: shardV1.ApplyResponse__Output) => void,
      ) => {
        framesAtStart.push(framesOfNewError());
        const results = (request.groups ?? []).map(() => ({ code: 0, message: '', applied: [true], changed: [] }));
        setImmediate(() => callback(null, { results } as unknown as shardV1.ApplyResponse__Output));
      },
    } as unknown as shardV1.ShardNodeClient;
    const sender = new NodeSender('node:1', rpc, 1_000, () => 1n, { onCall: () => undefined });
    const result = await sender.send([{ shardId: 7, amount: 1, idempotencyKey: Buffer.alloc(0) }]);
    expect(result.applied).toEqual([true]);
    expect(framesAtStart).toEqual([0]);
    expect(Error.stackTraceLimit).toBe(limitBefore);
  });
});
