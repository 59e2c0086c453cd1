// A scripted stand-in for a router's CounterService on loopback, for client
// tests that need an answer no real cluster gives on demand (a batch applied
// on one pair and refused by another). It keeps its own totals; it never
// stands in for a router in a test of the router.
import { Server, ServerCredentials, type ServerUnaryCall, type sendUnaryData } from '@grpc/grpc-js';
import { counterServiceDefinition } from '../../src/common/index.ts';
import {
  toServiceError,
  withLeanCodecs,
  type LeanIncrementBatchRequest,
  type LeanIncrementRequest,
  type TallyError,
} from '../../src/wire/index.ts';

export interface FakeRouter {
  address: string;
  /** Applied amounts per counter. */
  totals: Map<string, bigint>;
  /** Calls received, per method. */
  calls: Record<string, number>;
  stop(): Promise<void>;
}

export interface FakeRouterScript {
  /**
   * Decides a batch: the indexes of the items it applies, and the error it
   * then fails with (undefined: it answers every item applied).
   */
  incrementBatch(items: LeanIncrementRequest[]): { appliedIndexes: number[]; failure?: TallyError };
}

/** Serves Increment (applied, always) and IncrementBatch (by script); any other method is UNIMPLEMENTED, as grpc-js answers it. */
export async function startFakeRouter(script: FakeRouterScript): Promise<FakeRouter> {
  const totals = new Map<string, bigint>();
  const calls: Record<string, number> = {};
  const apply = (item: LeanIncrementRequest) => totals.set(item.counter, (totals.get(item.counter) ?? 0n) + BigInt(item.amount));
  const definition = withLeanCodecs(counterServiceDefinition);
  const server = new Server();
  server.addService(
    { Increment: definition.Increment!, IncrementBatch: definition.IncrementBatch! },
    {
      Increment: (call: ServerUnaryCall<LeanIncrementRequest, unknown>, callback: sendUnaryData<unknown>) => {
        calls.Increment = (calls.Increment ?? 0) + 1;
        apply(call.request);
        callback(null, { applied: true, shard: 0 });
      },
      IncrementBatch: (call: ServerUnaryCall<LeanIncrementBatchRequest, unknown>, callback: sendUnaryData<unknown>) => {
        calls.IncrementBatch = (calls.IncrementBatch ?? 0) + 1;
        const { items } = call.request;
        const { appliedIndexes, failure } = script.incrementBatch(items);
        for (const index of appliedIndexes) apply(items[index]!);
        if (failure !== undefined) {
          callback(toServiceError(failure));
          return;
        }
        callback(null, { results: items.map(() => ({ applied: true, shard: 0 })) });
      },
    },
  );
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (error, bound) => (error ? reject(error) : resolve(bound))),
  );
  return {
    address: `127.0.0.1:${port}`,
    totals,
    calls,
    stop: () => new Promise<void>((resolve) => server.tryShutdown(() => resolve())),
  };
}
