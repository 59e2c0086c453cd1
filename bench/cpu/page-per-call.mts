// The router's own work per ReadMany page, in-process and without gRPC's
// transport, so a change to it can be measured on a shared machine: the
// request's bytes decoded by the service definition the router serves with
// (guardMalformed over the lean codecs), the CounterService handler (checks,
// ReadPath.readExact, the response's values), and the response encoded. The
// node pool is a stand-in that answers at once. Also the client's side of a
// page: request encoded, response decoded; and the node's answer to
// ReadShards for a page (50 totals) encoded, by proto-loader from decimal
// strings and, where the build has it, by the lean encoder from bigints. CPU
// microseconds per page (process.cpuUsage), 50 cold counters of 100,000 per page.
//   node --import tsx bench/cpu/page-per-call.mts [rounds=3]
import { Registry } from 'prom-client';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as common from '../../src/common/index.ts';
import { SqliteDirectory } from '../../src/router/directory/sqlite/store.ts';
import { ReadPath } from '../../src/router/read/read-path.ts';
import { createCounterService } from '../../src/router/api/index.ts';
import { createRouterMetrics } from '../../src/router/metrics/router-metrics.ts';
import { CounterServiceClient } from '../../src/client/counter-proto.ts';
import type { NodePool } from '../../src/router/nodes/node-pool.ts';

const rounds = Number(process.argv[2] ?? 3);
const counterCount = 100_000;
const pageSize = 50;
const dataDir = mkdtempSync(join(tmpdir(), 'page-per-call-'));
const directory = SqliteDirectory.open(dataDir, [{ primary: 'p0:1', follower: 'f0:1' }], Date.now, {
  countersMax: 1_000_000,
  shardsTotalMax: 2_000_000,
});
const names = Array.from({ length: counterCount }, (_, index) => `bench-counter-${index}`);
for (let offset = 0; offset < counterCount; offset += 1_000) await directory.getOrCreateMany(names.slice(offset, offset + 1_000));

let seed = 1;
const random = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32;
const pages = Array.from({ length: 2_000 }, () => Array.from({ length: pageSize }, () => names[Math.floor(random() * counterCount)]!));

// The node answers totals as proto-loader gives them (decimal strings), 7 per shard, like a node that was written to.
const pool = {
  isKnownDown: () => false,
  readShards: async (_address: string, shardIds: readonly number[]) => ({
    totals: shardIds.map(() => '1234567'),
    newerGenerationIndexes: [],
    lsn: '1',
    role: 'primary',
    epoch: '1',
    nodeId: '',
  }),
} as unknown as NodePool;
const metrics = createRouterMetrics(new Registry());
const logger = { debug() {}, info() {}, warn() {}, error() {} } as never;
const reads = new ReadPath(directory, pool, metrics, logger, {
  refreshIntervalMs: 1_000,
  readTimeoutMs: 1_000,
  cacheIdleMs: 60_000,
  cacheEntriesMax: 1_000,
});
// Only what ReadMany touches; `directory` for builds whose service still took it.
const service = createCounterService({ directory, reads, metrics, increments: {}, heat: {} } as never);
type Codec = {
  requestSerialize(value: unknown): Buffer;
  requestDeserialize(bytes: Buffer): unknown;
  responseSerialize(value: unknown): Buffer;
  responseDeserialize(bytes: Buffer): unknown;
};
// Whichever this build has: the lean codecs for Increment only, or for ReadMany too.
const lean = (common as Record<string, unknown>).withLeanCodecs ?? (common as Record<string, unknown>).withLeanIncrementCodecs;
const served = common.guardMalformed((lean as (definition: object) => object)(common.counterServiceDefinition) as never)
  .ReadMany as unknown as Codec;
const client = CounterServiceClient.service.ReadMany as unknown as Codec;
// The gRPC methods: under .grpc where the service also hands its handlers to the Connect port.
const handler = ((service as unknown as { grpc?: { ReadMany: unknown } }).grpc ?? (service as unknown as { ReadMany: unknown }))
  .ReadMany as unknown as (call: { request: unknown; cancelled: boolean }, callback: (error: unknown, response?: unknown) => void) => void;

const requestBytes = pages.map((counters) => client.requestSerialize({ counters, consistency: 'EXACT' }));
function routerPage(bytes: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    handler({ request: served.requestDeserialize(bytes), cancelled: false }, (error, response) =>
      error ? reject(error as Error) : resolve(served.responseSerialize(response)),
    );
  });
}
const handlerValues = await Promise.all(
  requestBytes
    .slice(0, 100)
    .map(
      (bytes) =>
        new Promise((resolve, reject) =>
          handler({ request: served.requestDeserialize(bytes), cancelled: false }, (error, response) =>
            error ? reject(error as Error) : resolve(response),
          ),
        ),
    ),
);
const responseBytes = handlerValues.map((value) => served.responseSerialize(value));

const cpuMicros = () => {
  const { user, system } = process.cpuUsage();
  return user + system;
};
async function measure(label: string, calls: number, call: (index: number) => Promise<unknown> | unknown): Promise<void> {
  for (let index = 0; index < Math.min(500, calls); index++) await call(index);
  const started = cpuMicros();
  for (let index = 0; index < calls; index++) await call(index);
  console.log(`${label}: ${((cpuMicros() - started) / calls).toFixed(1)} us CPU per page`);
}
// The node's side: 50 shard totals of a page, as the handler holds them (bigints).
const shardTotals = Array.from({ length: pageSize }, (_, index) => BigInt(1_000 + index * 7_919));
const shardAnswer = {
  lsn: 1_234_567n,
  role: 'primary',
  epoch: 3n,
  nodeId: 'aba59daf-7035-4c1e-9a52-3f0d1c6b2e77',
  newerGenerationIndexes: [],
};
const shardReference = common.shardNodeServiceDefinition.ReadShards as unknown as Codec;
const leanShards = (await import('../../src/wire/internal/index.ts').catch(() => undefined)) as
  { encodeReadShardsResponse(answer: object): Buffer } | undefined;

for (let round = 0; round < rounds; round++) {
  await measure('router: decode, CounterService.ReadMany, encode', 5_000, (index) =>
    routerPage(requestBytes[index % requestBytes.length]!),
  );
  await measure('router: response encode alone', 5_000, (index) => {
    // The handler's values for one page, as the service hands them to the serializer.
    return served.responseSerialize(handlerValues[index % handlerValues.length]);
  });
  await measure('client: request encode + response decode', 5_000, (index) => {
    client.requestSerialize({ counters: pages[index % pages.length]!, consistency: 'EXACT' });
    return client.responseDeserialize(responseBytes[index % responseBytes.length]!);
  });
  await measure('node: ReadShards answer of 50 totals, proto-loader from strings', 5_000, () =>
    shardReference.responseSerialize({
      ...shardAnswer,
      totals: shardTotals.map((total) => total.toString()),
      lsn: shardAnswer.lsn.toString(),
      epoch: shardAnswer.epoch.toString(),
    }),
  );
  if (leanShards !== undefined)
    await measure('node: ReadShards answer of 50 totals, lean encoder from bigints', 5_000, () =>
      leanShards.encodeReadShardsResponse({ ...shardAnswer, totals: shardTotals }),
    );
}
directory.close();
rmSync(dataDir, { recursive: true, force: true });
