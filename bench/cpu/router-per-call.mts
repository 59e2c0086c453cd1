// The router's own work per call, in-process and without gRPC, so a change
// to it can be measured on a shared machine: IncrementPath.apply on Zipf
// batches of 100 over 200,000 counters; CounterService's IncrementBatch (the
// request's bytes decoded as the server decodes them, validated, applied,
// heat and metrics counted) on the same batches, and its unary Increment;
// readExact of pages of 50 cold counters, and one autoscale tick over 10,000
// tracked counters. The node pool is a stand-in that answers at once. CPU
// microseconds per call (process.cpuUsage).
//   node --import tsx bench/cpu/router-per-call.mts [rounds=3]
import { Registry } from 'prom-client';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteDirectory } from '../../src/router/directory/sqlite/store.ts';
import { IncrementPath } from '../../src/router/write/increment-path.ts';
import { readExact } from '../../src/router/read/exact-reader.ts';
import { Autoscaler } from '../../src/router/sizing/autoscaler.ts';
import { HeatTracker } from '../../src/router/sizing/heat.ts';
import { SizingPolicy } from '../../src/router/sizing/sizing-policy.ts';
import { createRouterMetrics } from '../../src/router/metrics/router-metrics.ts';
import type { NodePool } from '../../src/router/nodes/node-pool.ts';
import { createCounterService, type CounterServiceDeps } from '../../src/router/api/index.ts';
import * as codecs from '../../src/wire/codecs/counter-codec.ts';
import { counterServiceDefinition } from '../../src/common/index.ts';

const rounds = Number(process.argv[2] ?? 3);
const counterCount = 200_000;
const dataDir = mkdtempSync(join(tmpdir(), 'router-per-call-'));
const directory = SqliteDirectory.open(dataDir, [{ primary: 'p0:1', follower: 'f0:1' }], Date.now, {
  countersMax: 1_000_000,
  shardsTotalMax: 2_000_000,
});
const names = Array.from({ length: counterCount }, (_, index) => `bench-counter-${index}`);
for (let offset = 0; offset < counterCount; offset += 1_000) await directory.getOrCreateMany(names.slice(offset, offset + 1_000));

// Seeded Zipf(0.99) by inversion over a precomputed CDF.
let seed = 1;
const random = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32;
const cdf = new Float64Array(counterCount);
let sum = 0;
for (let rank = 0; rank < counterCount; rank++) cdf[rank] = sum += 1 / Math.pow(rank + 1, 0.99);
const zipf = () => {
  const target = random() * sum;
  let low = 0;
  let high = counterCount - 1;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (cdf[middle]! < target) low = middle + 1;
    else high = middle;
  }
  return low;
};

const pool = {
  get: () => ({
    sender: {
      sendGroup: async (group: { itemCount: number; items: unknown[] }) => ({
        code: 0,
        message: '',
        applied: [],
        packedRecordsApplied: group.itemCount - group.items.length,
      }),
    },
  }),
  isKnownDown: () => false,
  readShards: async (_address: string, shardIds: readonly number[]) => ({
    totals: shardIds.map(() => '7'),
    newerGenerationIndexes: [],
    lsn: '1',
    role: 'primary',
    epoch: '1',
    nodeId: '',
  }),
} as unknown as NodePool;

const cpuMicros = () => {
  const { user, system } = process.cpuUsage();
  return user + system;
};
async function measure(label: string, calls: number, call: () => Promise<unknown> | unknown): Promise<void> {
  for (let index = 0; index < Math.min(200, calls); index++) await call();
  const started = cpuMicros();
  for (let index = 0; index < calls; index++) await call();
  console.log(`${label}: ${((cpuMicros() - started) / calls).toFixed(1)} us CPU per call`);
}

const path = new IncrementPath(directory, pool, 60_000);
const empty = Buffer.alloc(0);
const batches = Array.from({ length: 500 }, () =>
  Array.from({ length: 100 }, () => ({ counter: names[zipf()]!, amount: 1, idempotencyKey: empty })),
);
const pages = Array.from({ length: 500 }, () => Array.from({ length: 50 }, () => names[Math.floor(random() * 100_000)]!));
const logger = { debug() {}, info() {}, warn() {}, error() {} };
let clockMs = 1_000_000;
const heat = new HeatTracker(10_000, () => clockMs);
const autoscaler = new Autoscaler(
  directory,
  heat,
  new SizingPolicy({ shardCeilingPerSec: 50_000, shardsMax: 64, growThreshold: 1.1, sustainMs: 3_000, headroom: 1.25 }),
  createRouterMetrics(new Registry()),
  logger,
  { intervalMs: 1_000, topK: 20, skewMinIncrements: 100 },
);
// The server's decoders: the router's own where it has them (withColumnDecoders), else the lean codec's.
const leanDefinition = codecs.withLeanCodecs(counterServiceDefinition);
const withColumns = (codecs as { withColumnDecoders?: <T extends object>(definition: T) => T }).withColumnDecoders;
const serverDefinition = withColumns === undefined ? leanDefinition : withColumns(leanDefinition);
const decodeBatch = serverDefinition.IncrementBatch!.requestDeserialize as (bytes: Buffer) => unknown;
const decodeUnary = serverDefinition.Increment!.requestDeserialize as (bytes: Buffer) => unknown;
const service = createCounterService({
  increments: path,
  heat: new HeatTracker(10_000),
  metrics: createRouterMetrics(new Registry()),
} as unknown as CounterServiceDeps);
const batchBytes = batches.map((items) =>
  codecs.encodeIncrementBatchRequest({ items: items.map((item) => ({ ...item, idempotencyKey: null })) }),
);
const unaryBytes = batches.map((items) => codecs.encodeIncrementRequest({ counter: items[0]!.counter, amount: 1 }));
const call = { cancelled: false, getDeadline: () => Infinity };

for (let round = 0; round < rounds; round++) {
  let batch = 0;
  await measure('IncrementPath.apply, Zipf batch of 100 over 200k', 5_000, () => path.apply(batches[batch++ % batches.length]!));
  batch = 0;
  await measure('CounterService IncrementBatch from its bytes, Zipf batch of 100 over 200k', 5_000, () =>
    service.handlers.IncrementBatch.handle(decodeBatch(batchBytes[batch++ % batchBytes.length]!) as never, call),
  );
  batch = 0;
  await measure('CounterService Increment (unary) from its bytes', 20_000, () =>
    service.handlers.Increment.handle(decodeUnary(unaryBytes[batch++ % unaryBytes.length]!) as never, call),
  );
  let page = 0;
  await measure('readExact, page of 50 cold counters of 100k', 5_000, () =>
    readExact(pages[page++ % pages.length]!, directory, pool, 1_000),
  );
  await measure('heat.record x 10,000 alone (in the tick line too)', 50, () => {
    for (let index = 0; index < 10_000; index++) heat.record(names[index]!, 1 + (index % 7), 0);
  });
  await measure('autoscale tick, 10,000 tracked counters', 50, () => {
    for (let index = 0; index < 10_000; index++) heat.record(names[index]!, 1 + (index % 7), 0);
    clockMs += 1_000;
    return autoscaler.tick();
  });
}
directory.close();
rmSync(dataDir, { recursive: true, force: true });
