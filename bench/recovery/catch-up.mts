// Catch-up throughput: how fast a follower that was down for N entries
// brings its log level with its primary's, measured on this machine.
//   node --import tsx bench/recovery/catch-up.mts [--entries 200000] [--batch 500] [--keyed 0|1] [--runs 3]
// Starts a real 1-pair cluster in a temp dir; per run: the follower is
// SIGKILLed, the primary takes `entries` increments alone (batches of
// `batch`, unkeyed or keyed), the follower is restarted, and the time from
// its restart until its last lsn equals the primary's is taken (no other
// load). Prints entries/s per run and the median.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createTallyClient } from '../../src/client/index.ts';
import { waitFor } from '../../test/helpers/cluster.ts';
import { onePairCluster } from '../support/one-pair.mts';

function flag(name: string, fallback: number): number {
  const index = process.argv.indexOf(`--${name}`);
  return index > 0 ? Number(process.argv[index + 1]) : fallback;
}
const entries = flag('entries', 200_000);
const batch = flag('batch', 500);
const keyed = flag('keyed', 0) === 1;
const runs = flag('runs', 3);

const rates: number[] = [];
for (let run = 0; run < runs; run++) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tally-catch-up-'));
  const cluster = await onePairCluster(dataDir);
  await cluster.start();
  const client = createTallyClient({ address: cluster.routerAddress });
  try {
    await client.increment('catch-up', 1);
    await waitFor(async () => (await client.clusterStatus()).nodes[0]!.inSync, { timeoutMs: 20_000 });
    const follower = cluster.node(0, 'follower');
    await follower.process.stop('SIGKILL');
    await waitFor(async () => !(await client.clusterStatus()).nodes[0]!.inSync, { timeoutMs: 20_000 });
    let sent = 0;
    let next = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (sent < entries) {
          sent += batch;
          const items = Array.from({ length: batch }, () => ({
            counter: `catch-up:${next++ % 1_000}`,
            amount: 1,
            idempotencyKey: keyed ? `k${next}` : null,
          }));
          await client.incrementBatch(items);
        }
      }),
    );
    const primaryLsn = (await client.clusterStatus()).nodes.find((node) => node.role === 'primary')!.lastLsn;
    const startedMs = performance.now();
    await follower.process.start();
    await waitFor(
      async () => {
        const status = await client.clusterStatus();
        return status.nodes.find((node) => node.role === 'follower')!.lastLsn >= primaryLsn;
      },
      { timeoutMs: 300_000, intervalMs: 20 },
    );
    const seconds = (performance.now() - startedMs) / 1000;
    rates.push(Number(primaryLsn) / seconds);
    console.log(
      `run ${run + 1}: ${primaryLsn} entries caught up in ${seconds.toFixed(2)} s (restart included): ${Math.round(rates.at(-1)!)} entries/s`,
    );
  } finally {
    client.close();
    await cluster.stop('SIGKILL');
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}
const sorted = [...rates].sort((a, b) => a - b);
console.log(
  JSON.stringify({
    cores: os.cpus().length,
    entries,
    batch,
    keyed,
    runs,
    entriesPerSecMedian: Math.round(sorted[Math.floor(sorted.length / 2)]!),
  }),
);
process.exit(0);
