// Memory a delete frees on a node, per shard, and what its tombstone keeps
// until it expires; and what a delete frees in the router's directory per
// one-shard counter. Measured in-process through the same apply() the node
// runs for a drop entry.
//   node --expose-gc --import tsx bench/memory/lifecycle-memory.mts [shards]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { NodeMemory, encodeWindowSetting } from '../../src/node/state/node-memory.ts';
import { EntryKind, type LogEntry } from '../../src/node/log/index.ts';
import { SqliteDirectory as Directory } from '../../src/router/directory/sqlite/store.ts';

const count = Number(process.argv[2] ?? 200_000);
const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with node --expose-gc');
const noKey = Buffer.alloc(0);
const heap = (): number => {
  gc();
  gc();
  // The heap and ArrayBuffers: shard totals live in typed arrays, off the heap.
  const usage = process.memoryUsage();
  return usage.heapUsed + usage.arrayBuffers;
};

/** Bytes per shard held for shards of one kind, freed by their drop, and kept by their tombstones. */
function measure(kind: string, fill: (memory: NodeMemory, shardId: number) => void): void {
  const memory = new NodeMemory();
  const empty = heap();
  for (let shardId = 1; shardId <= count; shardId++) fill(memory, shardId);
  const full = heap();
  const drop: LogEntry = { shardId: 0, amount: 0n, idempotencyKey: noKey, fenceShardCount: 0, kind: EntryKind.drop };
  for (let shardId = 1; shardId <= count; shardId++) memory.apply({ ...drop, shardId }, 1_000);
  const dropped = heap();
  memory.pruneTombstones(2_000, count);
  const pruned = heap();
  const perShard = (bytes: number): string => (bytes / count).toFixed(0);
  console.log(
    `${kind.padEnd(22)} held ${perShard(full - empty).padStart(5)} B/shard, freed by the drop ${perShard(full - dropped).padStart(5)}, tombstone ${perShard(dropped - pruned).padStart(3)} (until it expires)`,
  );
}

const increment = (shardId: number, amount: bigint): LogEntry => ({ shardId, amount, idempotencyKey: noKey, fenceShardCount: 0 });

console.log(`${count} shards, Node ${process.version}`);
measure('total', (memory, shardId) => memory.apply(increment(shardId, BigInt(shardId % 1000) + 1n), 1_000));
measure('total + 1m window', (memory, shardId) => {
  memory.apply(
    {
      shardId,
      amount: 0n,
      idempotencyKey: noKey,
      fenceShardCount: 0,
      kind: EntryKind.windowConfig,
      payload: encodeWindowSetting({ bucketMs: 60_000, retentionMs: 3_600_000 }),
    },
    1_000,
  );
  for (let minute = 0; minute < 10; minute++) memory.apply(increment(shardId, 1n), 1_000 + minute * 60_000);
});
measure('membership (10 ids)', (memory, shardId) => {
  for (let member = 0; member < 10; member++)
    memory.apply(
      { shardId, amount: 1n, idempotencyKey: noKey, fenceShardCount: 0, kind: EntryKind.memberFlip, member: BigInt(member * 7919) },
      1_000,
    );
});

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tally-lifecycle-'));
const routerCount = Math.min(count, 100_000);
const directory = Directory.open(dir, [{ primary: '127.0.0.1:1', follower: '127.0.0.1:2' }], Date.now, {
  countersMax: routerCount,
  shardsTotalMax: routerCount,
});
const before = heap();
for (let index = 0; index < routerCount; index++) await directory.getOrCreate(`post:${index}:like`);
const created = heap();
const startedMs = performance.now();
for (let index = 0; index < routerCount; index++) await directory.deleteCounter(`post:${index}:like`);
const deleteMs = performance.now() - startedMs;
for (let confirmed = 0; confirmed < routerCount; confirmed += 1_000)
  await directory.completeShardTasks(directory.pendingShardTasks().slice(0, 1_000));
const deleted = heap();
console.log(
  `router directory       held ${((created - before) / routerCount).toFixed(0)} B per one-shard counter, freed by its delete ${((created - deleted) / routerCount).toFixed(0)}; ${(deleteMs / routerCount).toFixed(3)} ms per delete (one transaction, one fsync each)`,
);
directory.close();
fs.rmSync(dir, { recursive: true, force: true });
