// Memory per cold counter (one shard each): on a node (the in-memory total)
// and on the router (the directory entry), measured in-process: the V8 heap
// plus ArrayBuffers (the node's totals live in typed arrays, off the heap).
// bench/memory/node-memory.mts and bench/memory/router-memory.mts measure whole processes.
//   node --expose-gc --import tsx bench/memory/cold-memory.mts [counters]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ShardTotals } from '../../src/node/state/shard-totals.ts';
import { SqliteDirectory as Directory } from '../../src/router/directory/sqlite/store.ts';

const count = Number(process.argv[2] ?? 1_000_000);
const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with node --expose-gc');

/** Heap used plus ArrayBuffer bytes, after a full GC. */
const heldBytes = (): number => {
  gc();
  const usage = process.memoryUsage();
  return usage.heapUsed + usage.arrayBuffers;
};
let before = heldBytes();
const totals = new ShardTotals();
for (let shardId = 1; shardId <= count; shardId++) totals.add(shardId, BigInt(shardId % 1000) + 1n);
const nodeBytesPerCounter = (heldBytes() - before) / count;

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tally-cold-'));
const routerCount = Math.min(count, 200_000);
const directory = Directory.open(dir, [{ primary: '127.0.0.1:1', follower: '127.0.0.1:2' }]);
before = heldBytes();
for (let index = 0; index < routerCount; index++) await directory.getOrCreate(`post:${index}:like`);
const routerBytesPerCounter = (heldBytes() - before) / routerCount;
directory.close();
fs.rmSync(dir, { recursive: true, force: true });
console.log(
  JSON.stringify({
    counters: count,
    nodeBytesPerCounter: Math.round(nodeBytesPerCounter),
    routerCounters: routerCount,
    routerBytesPerCounter: Math.round(routerBytesPerCounter),
    keepAlive: totals.shardCount,
  }),
);
