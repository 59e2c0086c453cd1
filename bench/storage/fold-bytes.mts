// Where a spread workload's disk bytes go on a node, in-process and without
// the cluster's noise (issue 27's "bytes written per cold increment <= 40"):
// the log's appends (one SQLite row per increment, group commits of
// --rows-per-commit), the checkpoint fold (a transaction per 5,000-row slice,
// as before issue 27, or one round per --round-rows), and, for comparison,
// the same increments appended as commit records (one row per commit holding
// the commit's shard ids and amounts as packed varints) to a bare table
// with the same pragmas. Bytes are this process's write_bytes
// (/proc/self/io): WAL frames, SQLite's own WAL checkpoints into the file,
// and fsyncs, as bench/cpu-split.sh counts them for the primary.
//   node --import tsx bench/storage/fold-bytes.mts --shards 200000 --workload zipf --round-rows 70000 --rounds 3
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { ShardLog, type LogEntry } from '../../src/node/log/index.ts';
import { checkpointFolder } from '../../src/node/state/node-memory.ts';
import { checkpointMergeBlocksMax, checkpointSliceRows } from '../../src/common/index.ts';
import { SeededRandom, ZipfSampler } from '../../src/cli/bench/index.ts';

const args = new Map<string, string>();
for (let index = 2; index < process.argv.length; index += 2) args.set(process.argv[index]!.replace(/^--/, ''), process.argv[index + 1]!);
const shards = Number(args.get('shards') ?? 200_000);
const workload = args.get('workload') ?? 'zipf';
const roundRows = Number(args.get('round-rows') ?? 70_000);
const rounds = Number(args.get('rounds') ?? 3);
const rowsPerCommit = Number(args.get('rows-per-commit') ?? 310);
const fold = args.get('fold') ?? 'round';
// --prepare 0: commit each round's blocks without merging them in steps first (as b082299 did).
const prepare = (args.get('prepare') ?? '1') !== '0';

const written = (): number => Number(/write_bytes: (\d+)/.exec(fs.readFileSync('/proc/self/io', 'utf8'))![1]);
const random = new SeededRandom(1);
const zipf = new ZipfSampler(shards, 0.99, random);
// Ranks land on shards spread over the id space, as a router's creation order spreads them.
const shardOf = (rank: number): number => 1 + ((rank * 7_919) % shards);
const nextShard = (): number => (workload === 'zipf' ? shardOf(zipf.nextRank()) : 1 + Math.floor(random.nextDouble() * shards));
const entry = (shardId: number): LogEntry => ({ shardId, amount: 1n, idempotencyKey: Buffer.alloc(0), fenceShardCount: 0 });

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tally-fold-bytes-'));
const log = ShardLog.open(dir, checkpointFolder);
// Every shard starts with a checkpoint row, as after the workload's creation.
for (let from = 1; from <= shards; from += 10_000)
  log.append(
    Array.from({ length: Math.min(10_000, shards - from + 1) }, (_, index) => entry(from + index)),
    1n,
    1,
  );
while (log.foldSlice(log.lastLsn, 100_000, 0, 1) > 0);

// Commit records, for comparison: a row per commit, shard ids and amounts as varints.
const packed = new Database(path.join(dir, 'packed.sqlite'));
packed.pragma('journal_mode = WAL');
packed.pragma('synchronous = FULL');
packed.exec(
  'CREATE TABLE records (first_lsn INTEGER PRIMARY KEY, epoch INTEGER NOT NULL, at_ms INTEGER NOT NULL, entries INTEGER NOT NULL, data BLOB NOT NULL)',
);
const insertRecord = packed.prepare('INSERT INTO records VALUES (?, ?, ?, ?, ?)');
function varints(values: number[]): Buffer {
  const bytes: number[] = [];
  for (let value of values) {
    while (value >= 0x80) {
      bytes.push((value & 0x7f) | 0x80);
      value = Math.floor(value / 128);
    }
    bytes.push(value);
  }
  return Buffer.from(bytes);
}

let recordLsn = 1;
for (let round = 0; round < rounds; round++) {
  let appendBytes = 0;
  let packedBytes = 0;
  // Group commits' time (their fsyncs): a fold's writes may slow the appends after it.
  let appendMs = 0;
  let appendMsMax = 0;
  for (let done = 0; done < roundRows; done += rowsPerCommit) {
    const shardIds = Array.from({ length: Math.min(rowsPerCommit, roundRows - done) }, nextShard);
    let before = written();
    const appendStartedMs = performance.now();
    log.append(shardIds.map(entry), 1n, 2);
    const appendTookMs = performance.now() - appendStartedMs;
    appendMs += appendTookMs;
    appendMsMax = Math.max(appendMsMax, appendTookMs);
    appendBytes += written() - before;
    // Sorted ids as deltas (a commit's own order is not needed to rebuild totals), then amounts.
    const sorted = [...shardIds].sort((a, b) => a - b);
    const data = varints([...sorted.map((id, index) => id - (index === 0 ? 0 : sorted[index - 1]!)), ...sorted.map(() => 1)]);
    before = written();
    insertRecord.run(recordLsn, 1, 2, shardIds.length, data);
    packedBytes += written() - before;
    recordLsn += shardIds.length;
  }
  const foldFrom = written();
  let holdMsMax = 0;
  let prepareMsMax = 0;
  let commitMs = 0;
  let touched = 0;
  const startedMs = performance.now();
  if (fold === 'slices') {
    for (;;) {
      const sliceStartedMs = performance.now();
      const folded = log.foldSlice(log.lastLsn, checkpointSliceRows, 0, 2);
      holdMsMax = Math.max(holdMsMax, performance.now() - sliceStartedMs);
      if (folded === 0) break;
    }
  } else {
    const fr = log.beginFold();
    for (;;) {
      const readStartedMs = performance.now();
      const read = log.foldRead(fr, log.lastLsn, checkpointSliceRows, 2);
      holdMsMax = Math.max(holdMsMax, performance.now() - readStartedMs);
      if (read === 0) break;
    }
    // Merge the round's totals into its blocks a step at a time before the commit, as the checkpointer does.
    for (let left = 1; prepare && left > 0;) {
      const prepareStartedMs = performance.now();
      left = log.foldPrepare(fr, checkpointMergeBlocksMax);
      prepareMsMax = Math.max(prepareMsMax, performance.now() - prepareStartedMs);
    }
    const commitStartedMs = performance.now();
    log.foldCommit(fr, 0);
    commitMs = performance.now() - commitStartedMs;
    holdMsMax = Math.max(holdMsMax, prepareMsMax, commitMs);
    touched = fr.touched.size;
  }
  const foldBytes = written() - foldFrom;
  console.log(
    JSON.stringify({
      workload,
      shards,
      fold,
      roundRows,
      touched,
      appendBytesPerIncrement: Math.round(appendBytes / roundRows),
      foldBytesPerIncrement: Math.round(foldBytes / roundRows),
      commitRecordBytesPerIncrement: Math.round(packedBytes / roundRows),
      appendMs: Math.round(appendMs),
      appendMsMax: Math.round(appendMsMax),
      foldMs: Math.round(performance.now() - startedMs),
      holdMsMax: Math.round(holdMsMax),
      prepareMsMax: Math.round(prepareMsMax),
      commitMs: Math.round(commitMs),
    }),
  );
}
log.close();
packed.close();
fs.rmSync(dir, { recursive: true, force: true });
