// Cost of idempotency keys, measured on this machine:
//   node --expose-gc --import tsx bench/throughput/keys.mts [--keys 1000000] [--seconds 8] [--runs 3]
// 1. memory per key held in a node's dedup index (16-byte keys, as the client makes);
// 2. disk per key in the log (keyed rows vs unkeyed rows);
// 3. pruning rate of expired keys;
// 4. keyed vs unkeyed increments/s through a real 1-pair cluster, same load, same run.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DedupIndex } from '../../src/node/state/dedup-index.ts';
import { ShardLog } from '../../src/node/log/index.ts';
import { createTallyClient, type TallyClient } from '../../src/client/index.ts';
import { waitFor } from '../../test/helpers/cluster.ts';
import { onePairCluster } from '../support/one-pair.mts';

function flag(name: string, fallback: number): number {
  const index = process.argv.indexOf(`--${name}`);
  return index > 0 ? Number(process.argv[index + 1]) : fallback;
}
const keyCount = flag('keys', 1_000_000);
const seconds = flag('seconds', 8);
const runs = flag('runs', 3);
const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with node --expose-gc');

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

// 1 + 3: memory and pruning.
gc();
const heapBefore = process.memoryUsage().heapUsed;
const index = new DedupIndex(1_000);
for (let key = 0; key < keyCount; key++) index.add(1 + (key % 1000), randomBytes(16), BigInt(key + 1), 0, 0);
gc();
const bytesPerKeyInMemory = (process.memoryUsage().heapUsed - heapBefore) / keyCount;
const pruneStartedNs = process.hrtime.bigint();
let pruned = 0;
while (index.size > 0) pruned += index.prune(10_000);
const prunePerSec = pruned / (Number(process.hrtime.bigint() - pruneStartedNs) / 1e9);

// 2: disk.
const diskDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tally-keys-'));
function logBytes(keyed: boolean, rows: number): number {
  const dir = path.join(diskDir, keyed ? 'keyed' : 'unkeyed');
  const log = ShardLog.open(dir);
  for (let start = 0; start < rows; start += 1_000) {
    log.append(
      Array.from({ length: 1_000 }, (_, offset) => ({
        shardId: 1 + ((start + offset) % 1000),
        amount: 1n,
        idempotencyKey: keyed ? randomBytes(16) : Buffer.alloc(0),
        fenceShardCount: 0,
      })),
      1n,
      Date.now(),
    );
  }
  log.close();
  // The WAL is checkpointed into the main file on close.
  return fs.statSync(path.join(dir, 'node.sqlite')).size;
}
const diskRows = 200_000;
const bytesPerKeyOnDisk = (logBytes(true, diskRows) - logBytes(false, diskRows)) / diskRows;
fs.rmSync(diskDir, { recursive: true, force: true });

// 4: throughput.
async function rate(client: TallyClient, keyed: boolean): Promise<number> {
  let acknowledged = 0;
  const untilMs = Date.now() + seconds * 1000;
  const startedMs = Date.now();
  await Promise.all(
    Array.from({ length: 64 }, async () => {
      while (Date.now() < untilMs) {
        await client.increment('bench', 1, keyed ? {} : { idempotencyKey: null });
        acknowledged++;
      }
    }),
  );
  return (acknowledged * 1000) / (Date.now() - startedMs);
}
const keyedRates: number[] = [];
const unkeyedRates: number[] = [];
for (let run = 0; run < runs; run++) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tally-keys-cluster-'));
  const cluster = await onePairCluster(dataDir);
  await cluster.start();
  const client = createTallyClient({ address: cluster.routerAddress });
  try {
    await client.increment('bench', 1);
    await waitFor(async () => (await client.clusterStatus()).nodes[0]!.inSync, { timeoutMs: 20_000 });
    // Alternate the order so neither always runs on a warmer process.
    if (run % 2 === 0) {
      unkeyedRates.push(await rate(client, false));
      keyedRates.push(await rate(client, true));
    } else {
      keyedRates.push(await rate(client, true));
      unkeyedRates.push(await rate(client, false));
    }
    console.log(`run ${run + 1}: unkeyed ${unkeyedRates.at(-1)!.toFixed(0)}/s, keyed ${keyedRates.at(-1)!.toFixed(0)}/s`);
  } finally {
    client.close();
    await cluster.stop('SIGKILL');
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}
console.log(
  JSON.stringify({
    cores: os.cpus().length,
    keys: keyCount,
    bytesPerKeyInMemory: Math.round(bytesPerKeyInMemory),
    bytesPerKeyOnDisk: Math.round(bytesPerKeyOnDisk),
    prunedKeysPerSec: Math.round(prunePerSec),
    unkeyedPerSecMedian: Math.round(median(unkeyedRates)),
    keyedPerSecMedian: Math.round(median(keyedRates)),
    keyedOverUnkeyed: Number((median(keyedRates) / median(unkeyedRates)).toFixed(2)),
  }),
);
process.exit(0);
