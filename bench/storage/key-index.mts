// Cost of the log's key index (schema 5: keys looked up on disk behind
// memory), against the same log without it (schema 4 behaviour), measured on
// this machine with real ShardLogs (synchronous=FULL, every commit fsync'd):
//   node --import tsx bench/storage/key-index.mts [--keys 2000000] [--batch 1000] [--batches 100] [--runs 3]
// 1. disk bytes per million keyed rows (16-byte keys, as the client makes): rows, and the index;
// 2. time to build the index over a window of keys (the one-time 4 -> 5 upgrade);
// 3. appending keyed rows to a log already holding --keys keys: CPU, wall time
//    and bytes written to disk per row, with and without the index;
// 4. a point lookup (findKey) of a key held, and of a key never seen.
// Restart cost (rebuildMemory reading at most the newest N keys) is reported too.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { ShardLog } from '../../src/node/log/index.ts';
import { DedupIndex } from '../../src/node/state/dedup-index.ts';
import { NodeMemory } from '../../src/node/state/node-memory.ts';
import { rebuildMemory } from '../../src/node/state/recovery.ts';

function flag(name: string, fallback: number): number {
  const index = process.argv.indexOf(`--${name}`);
  return index > 0 ? Number(process.argv[index + 1]) : fallback;
}
const keyCount = flag('keys', 2_000_000);
const batchRows = flag('batch', 1_000);
const batchCount = flag('batches', 100);
const runs = flag('runs', 3);
const windowMs = 86_400_000;
const shardCount = 1_000;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/** Bytes this process has caused to be written to storage (Linux /proc/self/io). */
function writtenBytes(): number {
  const line = fs
    .readFileSync('/proc/self/io', 'utf8')
    .split('\n')
    .find((text) => text.startsWith('write_bytes:'));
  return Number(line?.split(':')[1] ?? 0);
}

function fileBytes(dir: string): number {
  return fs.statSync(path.join(dir, 'node.sqlite')).size;
}

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'tally-key-index-'));
const keysHeld: Buffer[] = [];

/**
 * A log holding keyCount keyed rows written over the last hour, folded into the
 * checkpoint as the checkpointer leaves them, with or without the key index.
 * Filled through a second connection (no fsync per batch) so the bench does not
 * spend minutes on setup; the index, when wanted, is built afterwards, as the
 * upgrade builds it. Returns the seconds the build took.
 */
function makeLog(dir: string, indexed: boolean, keyed: boolean): number {
  ShardLog.open(dir).close();
  const db = new Database(path.join(dir, 'node.sqlite'));
  db.pragma('synchronous = OFF');
  db.exec('DROP INDEX log_keys');
  const insert = db.prepare(
    'INSERT INTO log (lsn, epoch, shard_id, amount, idem_key, fence_shard_count, at_ms) VALUES (?, 1, ?, 1, ?, NULL, ?)',
  );
  const startMs = Date.now() - 3_600_000;
  db.transaction(() => {
    for (let n = 0; n < keyCount; n++) {
      const key = keyed ? randomBytes(16) : null;
      if (key !== null && n % 1_000 === 0) keysHeld.push(key);
      insert.run(n + 1, 1 + (n % shardCount), key, startMs + Math.floor((n * 3_600_000) / keyCount));
    }
  })();
  db.prepare("INSERT INTO meta (key, value) VALUES ('checkpoint_lsn', ?), ('checkpoint_epoch', '1')").run(String(keyCount));
  let buildSeconds = 0;
  if (indexed) {
    const startedNs = process.hrtime.bigint();
    db.exec('CREATE INDEX log_keys ON log (shard_id, idem_key) WHERE idem_key IS NOT NULL');
    buildSeconds = Number(process.hrtime.bigint() - startedNs) / 1e9;
  }
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
  return buildSeconds;
}

interface AppendCost {
  cpuMicrosPerRow: number;
  wallMicrosPerRow: number;
  writtenBytesPerRow: number;
}

function appendCost(dir: string): AppendCost {
  const log = ShardLog.open(dir);
  const batches = Array.from({ length: batchCount }, () =>
    Array.from({ length: batchRows }, (_, n) => ({
      shardId: 1 + (n % shardCount),
      amount: 1n,
      idempotencyKey: randomBytes(16),
      fenceShardCount: 0,
    })),
  );
  const cpuBefore = process.cpuUsage();
  const writtenBefore = writtenBytes();
  const startedNs = process.hrtime.bigint();
  for (const batch of batches) log.append(batch, 1n, Date.now());
  const wallSeconds = Number(process.hrtime.bigint() - startedNs) / 1e9;
  const cpu = process.cpuUsage(cpuBefore);
  const written = writtenBytes() - writtenBefore;
  log.close();
  const rows = batchCount * batchRows;
  return {
    cpuMicrosPerRow: (cpu.user + cpu.system) / rows,
    wallMicrosPerRow: (wallSeconds * 1e6) / rows,
    writtenBytesPerRow: written / rows,
  };
}

function lookupMicros(dir: string, keys: readonly Buffer[], shardOf: (index: number) => number, expectFound: boolean): number {
  const log = ShardLog.open(dir);
  const sinceMs = Date.now() - windowMs;
  const startedNs = process.hrtime.bigint();
  let found = 0;
  for (let index = 0; index < keys.length; index++) if (log.findKey(shardOf(index), keys[index]!, sinceMs) !== undefined) found++;
  const micros = Number(process.hrtime.bigint() - startedNs) / 1e3 / keys.length;
  log.close();
  assert.equal(found, expectFound ? keys.length : 0, 'lookups found what the log holds');
  return micros;
}

function restartMillis(dir: string, keysInMemoryMax: number): { millis: number; keysInMemory: number } {
  const log = ShardLog.open(dir);
  const dedup = new DedupIndex(windowMs, keysInMemoryMax, log);
  const startedNs = process.hrtime.bigint();
  rebuildMemory(log, new NodeMemory(), dedup, Date.now(), windowMs);
  const millis = Number(process.hrtime.bigint() - startedNs) / 1e6;
  log.close();
  return { millis, keysInMemory: dedup.size };
}

const indexedCosts: AppendCost[] = [];
const plainCosts: AppendCost[] = [];
const buildSeconds: number[] = [];
let bytes = { unkeyed: 0, keyedNoIndex: 0, keyedIndexed: 0 };
let lookups = { hitMicros: 0, missMicros: 0 };
let restart = { newest1m: { millis: 0, keysInMemory: 0 }, all: { millis: 0, keysInMemory: 0 } };
for (let run = 0; run < runs; run++) {
  const indexedDir = path.join(root, `indexed-${run}`);
  const plainDir = path.join(root, `plain-${run}`);
  keysHeld.length = 0;
  buildSeconds.push(makeLog(indexedDir, true, true));
  const held = [...keysHeld];
  makeLog(plainDir, false, true);
  if (run === 0) {
    const unkeyedDir = path.join(root, 'unkeyed');
    makeLog(unkeyedDir, false, false);
    bytes = { unkeyed: fileBytes(unkeyedDir), keyedNoIndex: fileBytes(plainDir), keyedIndexed: fileBytes(indexedDir) };
    fs.rmSync(unkeyedDir, { recursive: true, force: true });
    // Keys were sampled every 1,000th row: row n is at shard 1 + (n % 1000) = 1.
    lookups = {
      hitMicros: lookupMicros(indexedDir, held, () => 1, true),
      missMicros: lookupMicros(
        indexedDir,
        Array.from({ length: 20_000 }, () => randomBytes(16)),
        (index) => 1 + (index % shardCount),
        false,
      ),
    };
    restart = { newest1m: restartMillis(indexedDir, 1_000_000), all: restartMillis(indexedDir, keyCount) };
  }
  // Alternate the order so neither always runs on a warmer page cache.
  if (run % 2 === 0) {
    indexedCosts.push(appendCost(indexedDir));
    plainCosts.push(appendCost(plainDir));
  } else {
    plainCosts.push(appendCost(plainDir));
    indexedCosts.push(appendCost(indexedDir));
  }
  console.log(`run ${run + 1}: indexed ${JSON.stringify(indexedCosts.at(-1))}, without index ${JSON.stringify(plainCosts.at(-1))}`);
  fs.rmSync(indexedDir, { recursive: true, force: true });
  fs.rmSync(plainDir, { recursive: true, force: true });
}
fs.rmSync(root, { recursive: true, force: true });

const perMillion = (value: number): number => Math.round((value * 1_000_000) / keyCount);
const summary = (costs: AppendCost[]) => ({
  cpuMicrosPerRow: Number(median(costs.map((cost) => cost.cpuMicrosPerRow)).toFixed(2)),
  wallMicrosPerRow: Number(median(costs.map((cost) => cost.wallMicrosPerRow)).toFixed(2)),
  writtenBytesPerRow: Math.round(median(costs.map((cost) => cost.writtenBytesPerRow))),
});
const indexed = summary(indexedCosts);
const plain = summary(plainCosts);
console.log(
  JSON.stringify({
    cores: os.cpus().length,
    keysHeld: keyCount,
    batchRows,
    rowsAppendedPerRun: batchCount * batchRows,
    bytesPerMillionKeyedRowsWithIndex: perMillion(bytes.keyedIndexed - bytes.unkeyed),
    bytesPerMillionKeyedRowsWithoutIndex: perMillion(bytes.keyedNoIndex - bytes.unkeyed),
    indexBytesPerMillionKeys: perMillion(bytes.keyedIndexed - bytes.keyedNoIndex),
    logBytesPerMillionKeyedRowsWithIndex: perMillion(bytes.keyedIndexed),
    indexBuildSecondsPerMillionKeys: Number(((median(buildSeconds) * 1_000_000) / keyCount).toFixed(2)),
    appendWithIndex: indexed,
    appendWithoutIndex: plain,
    cpuRatio: Number((indexed.cpuMicrosPerRow / plain.cpuMicrosPerRow).toFixed(2)),
    wallRatio: Number((indexed.wallMicrosPerRow / plain.wallMicrosPerRow).toFixed(2)),
    writtenRatio: Number((indexed.writtenBytesPerRow / plain.writtenBytesPerRow).toFixed(2)),
    lookupHitMicros: Number(lookups.hitMicros.toFixed(2)),
    lookupMissMicros: Number(lookups.missMicros.toFixed(2)),
    restartMillisNewest1MKeys: Math.round(restart.newest1m.millis),
    restartMillisAllKeys: Math.round(restart.all.millis),
  }),
);
