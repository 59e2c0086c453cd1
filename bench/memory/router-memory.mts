// Memory per counter on a real router (its directory), and per cold shard on
// the nodes behind it, with N one-shard counters created through the public
// client: a 1-pair cluster (embedded SQLite directory), then IncrementBatch
// calls of `--batch` new counters each (unkeyed, amount 1), `--in-flight` at
// once; with --etcd the router keeps its directory in an etcd of its own. Each process's RSS and (after two forced GCs, bench/memory/memory-probe.mjs)
// V8 heap are read before the first counter and after the last;
// bytes per counter = (after - before) / N.
//   node --import tsx bench/memory/router-memory.mts [--counters 1000000] [--runs 3] [--batch 1000] [--in-flight 4] [--etcd]
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
const counterCount = flag('counters', 1_000_000);
const runs = flag('runs', 3);
const batch = flag('batch', 1_000);
const inFlight = flag('in-flight', 4);
const withEtcd = process.argv.includes('--etcd');
const memoryProbePath = path.join(import.meta.dirname, 'memory-probe.mjs');
const processNames = ['router', 'node-0-primary', 'node-0-follower'] as const;
type ProcessName = (typeof processNames)[number];

interface Memory {
  rssBytes: number;
  heapUsedBytes: number;
  externalBytes: number;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

function rssBytes(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match === null ? 0 : Number(match[1]) * 1024;
}

/** RSS as the process runs (garbage included), then heap after two forced GCs. */
async function probe(pid: number, probeFile: string): Promise<Memory> {
  const rss = rssBytes(pid);
  fs.rmSync(probeFile, { force: true });
  process.kill(pid, 'SIGUSR2');
  await waitFor(() => fs.existsSync(probeFile) && fs.statSync(probeFile).size > 0, { timeoutMs: 60_000 });
  const probed = JSON.parse(fs.readFileSync(probeFile, 'utf8')) as { heapUsed: number; external: number };
  return { rssBytes: rss, heapUsedBytes: probed.heapUsed, externalBytes: probed.external };
}

type Run = Record<ProcessName, Memory> & { createMs: number };

async function run(): Promise<Run> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tally-router-memory-'));
  const probeFileOf = (name: string): string => path.join(dataDir, `probe-${name}.json`);
  const cluster = await onePairCluster(dataDir, {
    routerArgs: ['--counters-max', String(counterCount + 1_000), '--shards-total-max', String(counterCount + 1_000)],
    ...(withEtcd ? { etcd: { dataDir: path.join(dataDir, 'etcd') } } : {}),
    envOf: (name) => ({ TALLY_MEMORY_PROBE_FILE: probeFileOf(name), NODE_OPTIONS: `--import ${memoryProbePath}` }),
  });
  await cluster.start();
  const client = createTallyClient({ address: cluster.routerAddress });
  const pids: Record<ProcessName, number> = {
    router: cluster.router.pid!,
    'node-0-primary': cluster.node(0, 'primary').process.pid!,
    'node-0-follower': cluster.node(0, 'follower').process.pid!,
  };
  try {
    await client.incrementBatch([{ counter: 'warm-up', amount: 1, idempotencyKey: null }]);
    const before = {} as Record<ProcessName, Memory>;
    // The router's process is `router-1` on etcd.
    const fileOf = (name: ProcessName): string => probeFileOf(name === 'router' ? cluster.routers[0]!.name : name);
    for (const name of processNames) before[name] = await probe(pids[name], fileOf(name));
    const startedMs = performance.now();
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < counterCount) {
        const first = next;
        next = Math.min(counterCount, next + batch);
        const items = [];
        for (let index = first; index < next; index++) items.push({ counter: `post:${index}:like`, amount: 1, idempotencyKey: null });
        await client.incrementBatch(items);
      }
    };
    await Promise.all(Array.from({ length: inFlight }, worker));
    const createMs = performance.now() - startedMs;
    const result = { createMs } as Run;
    for (const name of processNames) {
      const after = await probe(pids[name], fileOf(name));
      result[name] = {
        rssBytes: (after.rssBytes - before[name].rssBytes) / counterCount,
        heapUsedBytes: (after.heapUsedBytes - before[name].heapUsedBytes) / counterCount,
        externalBytes: (after.externalBytes - before[name].externalBytes) / counterCount,
      };
    }
    console.error(JSON.stringify(result));
    return result;
  } finally {
    client.close();
    await cluster.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

console.log(
  `${counterCount} one-shard counters, ${withEtcd ? 'etcd' : 'embedded SQLite'} directory, batch ${batch}, ${inFlight} in flight; Node ${process.version}, ${os.cpus().length} cores, load average ${os
    .loadavg()
    .map((load) => load.toFixed(1))
    .join(' ')}; medians of ${runs} runs`,
);
const all: Run[] = [];
for (let index = 0; index < runs; index++) all.push(await run());
console.log(`created in ${(median(all.map((one) => one.createMs)) / 1000).toFixed(1)} s`);
for (const name of processNames) {
  const pick = (key: keyof Memory): string => median(all.map((one) => one[name][key])).toFixed(0);
  console.log(
    `${name.padEnd(16)} bytes per counter: RSS ${pick('rssBytes')}, heap used after GC ${pick('heapUsedBytes')}, external ${pick('externalBytes')}`,
  );
}
