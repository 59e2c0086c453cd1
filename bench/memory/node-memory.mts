// Memory per cold shard on a real node process: a log holding N cold shards
// (one increment each, folded into the checkpoint, as a node that has run a
// while holds them) is opened by a node started on it; once it is ready its
// RSS and (after two forced GCs) its V8 heap are read, and the same with an
// empty log; bytes per shard = (with N - empty) / N.
//   node --import tsx bench/memory/node-memory.mts [--shards 1000000,10000000] [--runs 3] [--template-root DIR] [--settle-ms 3000]
// Templates are kept under --template-root (default /tmp/tally-node-memory) and reused by size.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ShardLog, type LogEntry } from '../../src/node/log/index.ts';
import { checkpointFolder } from '../../src/node/state/node-memory.ts';
import { ManagedProcess, nodeMainPath } from '../../src/cluster/managed-process.ts';
import { waitFor } from '../../test/helpers/cluster.ts';

function stringFlag(name: string): string | undefined {
  const index = process.argv.indexOf(`--${name}`);
  return index > 0 ? process.argv[index + 1] : undefined;
}
const shardCounts = (stringFlag('shards') ?? '1000000,10000000').split(',').map(Number);
const runs = Number(stringFlag('runs') ?? 3);
const templateRoot = stringFlag('template-root') ?? path.join(os.tmpdir(), 'tally-node-memory');
const settleMs = Number(stringFlag('settle-ms') ?? 3_000);
const appendRows = 200_000;
const foldRows = 20_000;
const mib = 1024 * 1024;
/** Preloaded into the node: forces GC and writes its memory to a file on SIGUSR2. */
const memoryProbePath = path.join(import.meta.dirname, 'memory-probe.mjs');

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

function procStatusBytes(pid: number, field: string): number {
  const match = new RegExp(`${field}:\\s+(\\d+) kB`).exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match === null ? 0 : Number(match[1]) * 1024;
}

/** A folded log of shardCount cold shards, built once per size. */
function template(shardCount: number): string {
  const dir = path.join(templateRoot, String(shardCount));
  const shape = `cold shards=${shardCount}`;
  if (fs.existsSync(path.join(dir, 'node.sqlite'))) {
    const existing = ShardLog.open(dir, checkpointFolder);
    const reusable = existing.getMeta('bench_shape') === shape && existing.checkpointLsn === existing.lastLsn;
    existing.close();
    if (reusable) return dir;
  }
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  const log = ShardLog.open(dir, checkpointFolder);
  const startedMs = performance.now();
  for (let start = 0; start < shardCount; start += appendRows) {
    const entries: LogEntry[] = [];
    for (let shardId = start + 1; shardId <= Math.min(shardCount, start + appendRows); shardId++)
      entries.push({ shardId, amount: BigInt(1 + (shardId % 1000)), idempotencyKey: Buffer.alloc(0), fenceShardCount: 0 });
    log.append(entries, 1n, Date.now());
    // Bounded: each slice folds foldRows rows of this batch, or the loop ends.
    for (let slice = 0; slice < appendRows / foldRows + 2; slice++) if (log.foldSlice(log.lastLsn, foldRows, Date.now()) === 0) break;
  }
  if (log.checkpointLsn !== log.lastLsn) throw new Error(`fold stopped at ${log.checkpointLsn} of ${log.lastLsn}`);
  log.setMeta('bench_shape', shape);
  log.close();
  console.error(`built ${shape} in ${((performance.now() - startedMs) / 1000).toFixed(1)} s`);
  return dir;
}

interface Sample {
  rssBytes: number;
  peakRssBytes: number;
  rssAfterGcBytes: number;
  heapUsedBytes: number;
  externalBytes: number;
  replayMs: number;
  readyMs: number;
}

async function sample(templateDir: string | undefined): Promise<Sample> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tally-node-memory-run-'));
  if (templateDir !== undefined)
    for (const file of fs.readdirSync(templateDir)) fs.copyFileSync(path.join(templateDir, file), path.join(dataDir, file));
  const probeFile = path.join(dataDir, 'probe.json');
  let readyLine: { replayMs?: number } = {};
  const node = new ManagedProcess({
    name: 'node',
    script: nodeMainPath,
    args: ['--listen', '127.0.0.1:0', '--data-dir', dataDir, '--metrics-port', '0', '--node-name', 'memory'],
    env: { TALLY_MEMORY_PROBE_FILE: probeFile, NODE_OPTIONS: `--import ${memoryProbePath}` },
    onLine: (_name, line) => {
      if (line.includes('"msg":"ready"')) readyLine = JSON.parse(line) as { replayMs?: number };
    },
  });
  const startedMs = performance.now();
  try {
    await node.start(600_000);
    const readyMs = performance.now() - startedMs;
    await new Promise((resolve) => setTimeout(resolve, settleMs));
    const pid = node.pid!;
    const rssBytes = procStatusBytes(pid, 'VmRSS');
    process.kill(pid, 'SIGUSR2');
    await waitFor(() => fs.existsSync(probeFile) && fs.statSync(probeFile).size > 0, { timeoutMs: 60_000 });
    const probe = JSON.parse(fs.readFileSync(probeFile, 'utf8')) as { heapUsed: number; external: number };
    return {
      rssBytes,
      peakRssBytes: procStatusBytes(pid, 'VmHWM'),
      rssAfterGcBytes: procStatusBytes(pid, 'VmRSS'),
      heapUsedBytes: probe.heapUsed,
      externalBytes: probe.external,
      replayMs: readyLine.replayMs ?? 0,
      readyMs,
    };
  } finally {
    await node.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

async function samples(templateDir: string | undefined): Promise<Sample> {
  const all: Sample[] = [];
  for (let run = 0; run < runs; run++) all.push(await sample(templateDir));
  const pick = (key: keyof Sample): number => median(all.map((one) => one[key]));
  console.error(JSON.stringify(all));
  return {
    rssBytes: pick('rssBytes'),
    peakRssBytes: pick('peakRssBytes'),
    rssAfterGcBytes: pick('rssAfterGcBytes'),
    heapUsedBytes: pick('heapUsedBytes'),
    externalBytes: pick('externalBytes'),
    replayMs: pick('replayMs'),
    readyMs: pick('readyMs'),
  };
}

console.log(
  `Node ${process.version}, ${os.cpus().length} cores, load average ${os
    .loadavg()
    .map((load) => load.toFixed(1))
    .join(' ')}; medians of ${runs} runs`,
);
const empty = await samples(undefined);
console.log(
  `empty log: RSS ${(empty.rssBytes / mib).toFixed(1)} MiB (peak ${(empty.peakRssBytes / mib).toFixed(1)}, after GC ${(empty.rssAfterGcBytes / mib).toFixed(1)}), heap used ${(empty.heapUsedBytes / mib).toFixed(1)} MiB`,
);
for (const shardCount of shardCounts) {
  const full = await samples(template(shardCount));
  const perShard = (key: keyof Sample): string => ((full[key] - empty[key]) / shardCount).toFixed(0);
  console.log(
    `${shardCount} cold shards: B/shard RSS ${perShard('rssBytes')} (peak ${perShard('peakRssBytes')}, after GC ${perShard('rssAfterGcBytes')}), heap used ${perShard('heapUsedBytes')}, external ${perShard('externalBytes')}; RSS ${(full.rssBytes / mib).toFixed(0)} MiB, peak ${(full.peakRssBytes / mib).toFixed(0)} MiB; replay ${full.replayMs} ms, ready in ${(full.readyMs / 1000).toFixed(1)} s`,
  );
}
