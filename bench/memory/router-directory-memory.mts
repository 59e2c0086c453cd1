// Heap per counter of the router's directory at scale, in one process: a
// real SqliteDirectory (one pair) takes N one-shard counters through
// getOrCreateMany, `--batch` new names a call, as a router's write path
// creates them; then it is closed and opened again (a router restart loads
// every counter from the file). Heap used and array buffers (the typed-array
// columns live outside the V8 heap, so both are counted) are read after two
// forced GCs, before the first counter and after the last, and after the load.
//   node --expose-gc --import tsx bench/memory/router-directory-memory.mts [--counters 10000000] [--batch 1000]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SqliteDirectory } from '../../src/router/directory/index.ts';

function flag(name: string, fallback: number): number {
  const index = process.argv.indexOf(`--${name}`);
  return index > 0 ? Number(process.argv[index + 1]) : fallback;
}
const counterCount = flag('counters', 10_000_000);
const batch = flag('batch', 1_000);
const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with node --expose-gc');

interface Memory {
  heapUsedBytes: number;
  arrayBuffersBytes: number;
}

function measure(): Memory {
  gc!();
  gc!();
  const usage = process.memoryUsage();
  return { heapUsedBytes: usage.heapUsed, arrayBuffersBytes: usage.arrayBuffers };
}

function perCounter(label: string, before: Memory, after: Memory, count: number): void {
  const heap = (after.heapUsedBytes - before.heapUsedBytes) / count;
  const buffers = (after.arrayBuffersBytes - before.arrayBuffersBytes) / count;
  console.log(
    `${label.padEnd(8)} bytes per counter: heap used ${heap.toFixed(1)}, array buffers ${buffers.toFixed(1)}, both ${(heap + buffers).toFixed(1)}`,
  );
}

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tally-directory-memory-'));
const pairs = [{ primary: '127.0.0.1:1', follower: '127.0.0.1:2' }];
const limits = { countersMax: counterCount + 1_000, shardsTotalMax: counterCount + 1_000 };
console.log(
  `${counterCount} one-shard counters, SqliteDirectory in process, batch ${batch}; Node ${process.version}, ${os.cpus().length} cores, load average ${os
    .loadavg()
    .map((load) => load.toFixed(1))
    .join(' ')}`,
);
try {
  const before = measure();
  let directory = SqliteDirectory.open(dataDir, pairs, undefined, limits);
  const startedMs = performance.now();
  const names: string[] = new Array(batch);
  for (let first = 0; first < counterCount; first += batch) {
    const count = Math.min(batch, counterCount - first);
    names.length = count;
    for (let index = 0; index < count; index++) names[index] = `post:${first + index}:like`;
    await directory.getOrCreateMany(names);
  }
  const createMs = performance.now() - startedMs;
  if (directory.counterCount !== counterCount) throw new Error(`holds ${directory.counterCount} counters`);
  perCounter('created', before, measure(), counterCount);
  console.log(`created in ${(createMs / 1000).toFixed(1)} s`);
  await directory.close();
  directory = undefined as unknown as SqliteDirectory;
  const beforeLoad = measure();
  const loadStartedMs = performance.now();
  directory = SqliteDirectory.open(dataDir, pairs, undefined, limits);
  const loadMs = performance.now() - loadStartedMs;
  if (directory.counterCount !== counterCount) throw new Error(`loaded ${directory.counterCount} counters`);
  perCounter('loaded', beforeLoad, measure(), counterCount);
  console.log(`loaded in ${(loadMs / 1000).toFixed(1)} s`);
  await directory.close();
} finally {
  fs.rmSync(dataDir, { recursive: true, force: true });
}
