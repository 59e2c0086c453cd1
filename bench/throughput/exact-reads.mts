// What it costs that an exact read counts only follower-confirmed state (G3:
// a total never goes backwards): exact-read throughput and latency on an
// in-sync pair, idle and while writers keep the log moving.
//   node --import tsx bench/throughput/exact-reads.mts [--seconds 5] [--readers 32] [--writers 32] [--runs 3]
// Run it on two checkouts (before and after the read barrier) in the same
// session and compare the medians.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createTallyClient, type TallyClient } from '../../src/client/index.ts';
import { waitFor } from '../../test/helpers/cluster.ts';
import { onePairCluster } from '../support/one-pair.mts';

function flag(name: string, fallback: number): number {
  const index = process.argv.indexOf(`--${name}`);
  return index > 0 ? Number(process.argv[index + 1]) : fallback;
}
const seconds = flag('seconds', 5);
const readers = flag('readers', 32);
const writers = flag('writers', 32);
const runs = flag('runs', 3);

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

function percentile(sorted: number[], fraction: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))] ?? 0;
}

interface ReadFigures {
  readsPerSec: number;
  p50Ms: number;
  p99Ms: number;
  writesPerSec: number;
}

async function measure(client: TallyClient, withWriters: boolean): Promise<ReadFigures> {
  const untilMs = Date.now() + seconds * 1000;
  const latenciesMs: number[] = [];
  let writes = 0;
  const startedMs = Date.now();
  const readLoops = Array.from({ length: readers }, async () => {
    while (Date.now() < untilMs) {
      const beganNs = process.hrtime.bigint();
      await client.read('bench:read');
      latenciesMs.push(Number(process.hrtime.bigint() - beganNs) / 1e6);
    }
  });
  const writeLoops = Array.from({ length: withWriters ? writers : 0 }, async () => {
    while (Date.now() < untilMs) {
      await client.increment('bench:read', 1, { idempotencyKey: null });
      writes++;
    }
  });
  await Promise.all([...readLoops, ...writeLoops]);
  const elapsedS = (Date.now() - startedMs) / 1000;
  latenciesMs.sort((a, b) => a - b);
  return {
    readsPerSec: latenciesMs.length / elapsedS,
    p50Ms: percentile(latenciesMs, 0.5),
    p99Ms: percentile(latenciesMs, 0.99),
    writesPerSec: writes / elapsedS,
  };
}

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tally-exact-reads-'));
const cluster = await onePairCluster(dataDir);
await cluster.start();
const client = createTallyClient({ address: cluster.routerAddress, deadlineMs: 30_000 });
try {
  await client.increment('bench:read', 1);
  await client.setShards('bench:read', 4);
  await waitFor(async () => (await client.clusterStatus()).nodes.every((node) => node.inSync), { timeoutMs: 20_000, what: 'in sync' });
  const idle: ReadFigures[] = [];
  const loaded: ReadFigures[] = [];
  for (let run = 0; run < runs; run++) {
    idle.push(await measure(client, false));
    loaded.push(await measure(client, true));
  }
  const summary = (label: string, figures: ReadFigures[]) =>
    `${label}: reads/s ${figures.map((f) => f.readsPerSec.toFixed(0)).join(' / ')} (median ${median(figures.map((f) => f.readsPerSec)).toFixed(0)}), ` +
    `p50 ${median(figures.map((f) => f.p50Ms)).toFixed(2)} ms, p99 ${median(figures.map((f) => f.p99Ms)).toFixed(2)} ms, writes/s ${median(figures.map((f) => f.writesPerSec)).toFixed(0)}`;
  console.log(`exact reads, 4 shards on one in-sync pair, ${readers} readers, ${seconds} s, ${runs} runs, ${os.cpus().length} cores`);
  console.log(summary('idle', idle));
  console.log(summary(`with ${writers} unary writers`, loaded));
} finally {
  client.close();
  await cluster.stop('SIGKILL');
  fs.rmSync(dataDir, { recursive: true, force: true });
}
