// Replication cost and failover unavailability, measured on this machine.
//   node --import tsx bench/throughput/replication.mts [--seconds 10] [--concurrency 64] [--runs 3]
// Starts a real 1-pair cluster in a temp dir, then for each run:
//   1. in sync: `concurrency` unary callers on one counter for `seconds`;
//   2. follower SIGKILLed (pair out of sync, primary acknowledges alone): same load;
//   3. failover: 32 callers, SIGKILL the primary, longest gap between acknowledgements.
// Prints the median of the runs.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { LocalCluster } from '../../src/cluster/local-cluster.ts';
import { createTallyClient, type TallyClient } from '../../src/client/index.ts';
import { waitFor } from '../../test/helpers/cluster.ts';
import { onePairCluster } from '../support/one-pair.mts';

function flag(name: string, fallback: number): number {
  const index = process.argv.indexOf(`--${name}`);
  return index > 0 ? Number(process.argv[index + 1]) : fallback;
}
const seconds = flag('seconds', 10);
const concurrency = flag('concurrency', 64);
const runs = flag('runs', 3);

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

async function rate(client: TallyClient, counter: string, callers: number, durationMs: number): Promise<number> {
  let acknowledged = 0;
  const untilMs = Date.now() + durationMs;
  const startedMs = Date.now();
  await Promise.all(
    Array.from({ length: callers }, async () => {
      while (Date.now() < untilMs) {
        await client.increment(counter, 1);
        acknowledged++;
      }
    }),
  );
  return (acknowledged * 1000) / (Date.now() - startedMs);
}

async function startPair(dataDir: string): Promise<LocalCluster> {
  const cluster = await onePairCluster(dataDir);
  await cluster.start();
  return cluster;
}

async function inSync(client: TallyClient, wanted: boolean): Promise<void> {
  await waitFor(async () => (await client.clusterStatus()).nodes[0]!.inSync === wanted, { timeoutMs: 20_000, what: `in sync = ${wanted}` });
}

const withFollower: number[] = [];
const alone: number[] = [];
const gaps: number[] = [];
for (let run = 0; run < runs; run++) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tally-bench-'));
  const cluster = await startPair(dataDir);
  const client = createTallyClient({ address: cluster.routerAddress });
  try {
    await client.increment('bench', 1);
    await inSync(client, true);
    withFollower.push(await rate(client, 'bench', concurrency, seconds * 1000));
    await cluster.node(0, 'follower').process.stop('SIGKILL');
    await inSync(client, false);
    alone.push(await rate(client, 'bench', concurrency, seconds * 1000));
    await cluster.node(0, 'follower').process.start();
    await inSync(client, true);

    // Failover: the longest time no increment was acknowledged.
    let lastAckMs = Date.now();
    let longestGapMs = 0;
    let running = true;
    const writers = Array.from({ length: 32 }, async () => {
      while (running) {
        try {
          await client.increment('failover', 1, { deadlineMs: 5_000 });
          const nowMs = Date.now();
          longestGapMs = Math.max(longestGapMs, nowMs - lastAckMs);
          lastAckMs = nowMs;
        } catch {
          await new Promise((resolve) => setTimeout(resolve, 5));
        }
      }
    });
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    longestGapMs = 0;
    await cluster.node(0, 'primary').process.stop('SIGKILL');
    await waitFor(async () => (await client.describe('failover')).placements[0]!.primary === cluster.node(0, 'follower').address, {
      timeoutMs: 20_000,
    });
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    running = false;
    await Promise.all(writers);
    gaps.push(longestGapMs);
    console.log(
      `run ${run + 1}: in sync ${withFollower.at(-1)!.toFixed(0)}/s, primary alone ${alone.at(-1)!.toFixed(0)}/s, failover gap ${longestGapMs} ms`,
    );
  } finally {
    client.close();
    await cluster.stop('SIGKILL');
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}
console.log(
  JSON.stringify({
    cores: os.cpus().length,
    seconds,
    concurrency,
    runs,
    inSyncPerSecMedian: Math.round(median(withFollower)),
    primaryAlonePerSecMedian: Math.round(median(alone)),
    replicationCostRatio: Number((median(withFollower) / median(alone)).toFixed(2)),
    failoverLongestGapMsMedian: median(gaps),
  }),
);
process.exit(0);
