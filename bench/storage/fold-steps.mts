// How long a checkpoint fold holds a node's event loop, and what a commit
// arriving during it waits, in-process: a log of --shards shards (each with a
// checkpoint total, as after a workload's creation), then --rounds times:
// group commits of --rows-per-commit Zipf(0.99) rows every --commit-every-ms
// (real appends, fsync on) while the real Checkpointer folds the previous
// round's --round-rows rows. Prints per round the longest event-loop stall
// (monitorEventLoopDelay), the commits' start delays (p50/p99/max: a commit
// is late by whatever held the loop when it was due), the CPU each step of
// the fold held the loop for (the stall on an idle machine: wall times on a
// shared one add preemption), and the fold's CPU.
// The step settings are flags, so two designs run alternately on one machine:
//   node --import tsx bench/storage/fold-steps.mts --step-ms 0 --slice-rows 5000 --merge-blocks 256
//   node --import tsx bench/storage/fold-steps.mts --step-ms 3 --slice-rows 1000 --merge-blocks 32
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { ShardLog, type LogEntry } from '../../src/node/log/index.ts';
import { checkpointFolder, type NodeState } from '../../src/node/state/index.ts';
import { Checkpointer } from '../../src/node/write/checkpointer.ts';
import type { Replicator } from '../../src/node/replication/index.ts';
import { checkpointMergeBlocksMax, checkpointSliceRows, checkpointStepMs } from '../../src/common/index.ts';
import { SeededRandom, ZipfSampler } from '../../src/cli/bench/index.ts';

const args = new Map<string, string>();
for (let index = 2; index < process.argv.length; index += 2) args.set(process.argv[index]!.replace(/^--/, ''), process.argv[index + 1]!);
const shards = Number(args.get('shards') ?? 1_000_000);
const roundRows = Number(args.get('round-rows') ?? 15_000);
const rounds = Number(args.get('rounds') ?? 4);
const rowsPerCommit = Number(args.get('rows-per-commit') ?? 500);
const commitEveryMs = Number(args.get('commit-every-ms') ?? 10);
const stepMs = Number(args.get('step-ms') ?? checkpointStepMs);
const sliceRows = Number(args.get('slice-rows') ?? checkpointSliceRows);
const mergeBlocks = Number(args.get('merge-blocks') ?? checkpointMergeBlocksMax);

const random = new SeededRandom(1);
const zipf = new ZipfSampler(shards, 0.99, random);
// Ranks land on shards spread over the id space, as a router's creation order spreads them.
const shardOf = (rank: number): number => 1 + ((rank * 7_919) % shards);
const entry = (shardId: number): LogEntry => ({ shardId, amount: 1n, idempotencyKey: Buffer.alloc(0), fenceShardCount: 0 });
const commitRows = (): LogEntry[] => Array.from({ length: rowsPerCommit }, () => entry(shardOf(zipf.nextRank())));

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tally-fold-steps-'));
const log = ShardLog.open(dir, checkpointFolder);
for (let from = 1; from <= shards; from += 10_000)
  log.append(
    Array.from({ length: Math.min(10_000, shards - from + 1) }, (_, index) => entry(from + index)),
    1n,
    1,
  );
while (log.foldSlice(log.lastLsn, 100_000, 0, 1) > 0);

let stepCpu = process.cpuUsage();
let stepCpuMs: number[] = [];
// A follower's view: everything committed is confirmed, so the fold may take all of it.
const state = { ready: true, role: { role: 'follower' }, confirmedLsn: 0n };
const checkpointer = new Checkpointer(
  log,
  state as unknown as NodeState,
  {} as Replicator,
  { intervalMs: 3_600_000, sliceRows, stepMs, mergeBlocks, roundRowsMax: 1_000_000, dedupWindowMs: 0, retainEntries: 0, tombstoneMs: 0 },
  {
    onFold: () => {},
    onFoldRead: () => {},
    // CPU between two yields: what one step holds the loop for on an idle machine (wall time adds preemption).
    onYield: () => {
      const cpu = process.cpuUsage(stepCpu);
      stepCpuMs.push((cpu.user + cpu.system) / 1_000);
      stepCpu = process.cpuUsage();
    },
  },
  { info: () => {}, warn: () => {}, error: () => {} } as never,
  () => 2,
);

// The commit's own CPU: one transaction, the longest step left once reads and merges are sliced.
let commitCpuMs = 0;
let commitCpuMsMax = 0;
const foldCommit = log.foldCommit.bind(log);
log.foldCommit = (round, keepKeysSinceMs) => {
  const before = process.cpuUsage();
  const folded = foldCommit(round, keepKeysSinceMs);
  const cpu = process.cpuUsage(before);
  commitCpuMs += (cpu.user + cpu.system) / 1_000;
  commitCpuMsMax = Math.max(commitCpuMsMax, (cpu.user + cpu.system) / 1_000);
  return folded;
};
const percentile = (sorted: number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0;
for (let round = 0; round < rounds; round++) {
  for (let done = 0; done < roundRows; done += rowsPerCommit) log.append(commitRows(), 1n, 2);
  state.confirmedLsn = log.lastLsn;
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  const lateMs: number[] = [];
  let dueMs = performance.now() + commitEveryMs;
  let folding = true;
  let appendsCpuMs = 0;
  // Commits keep coming while the fold runs, each due commitEveryMs after the last was due.
  const commits = (async () => {
    while (folding) {
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, dueMs - performance.now())));
      lateMs.push(performance.now() - dueMs);
      const appendCpu = process.cpuUsage();
      log.append(commitRows(), 1n, 2);
      const appended = process.cpuUsage(appendCpu);
      appendsCpuMs += (appended.user + appended.system) / 1_000;
      dueMs += commitEveryMs;
      if (dueMs < performance.now()) dueMs = performance.now();
    }
  })();
  const cpuBefore = process.cpuUsage();
  const startedMs = performance.now();
  stepCpu = process.cpuUsage();
  stepCpuMs = [];
  commitCpuMs = 0;
  commitCpuMsMax = 0;
  await checkpointer.run();
  const foldMs = performance.now() - startedMs;
  const cpu = process.cpuUsage(cpuBefore);
  folding = false;
  await commits;
  delay.disable();
  lateMs.sort((a, b) => a - b);
  console.log(
    JSON.stringify({
      shards,
      roundRows,
      stepMs,
      sliceRows,
      mergeBlocks,
      foldMs: Math.round(foldMs),
      // The fold's and the commits' CPU together (one thread), then the fold's alone.
      cpuMs: Math.round((cpu.user + cpu.system) / 1_000),
      foldCpuMs: Math.round((cpu.user + cpu.system) / 1_000 - appendsCpuMs),
      commits: lateMs.length,
      commitLateMs: {
        p50: +percentile(lateMs, 0.5).toFixed(1),
        p99: +percentile(lateMs, 0.99).toFixed(1),
        max: +(lateMs.at(-1) ?? 0).toFixed(1),
      },
      loopDelayMaxMs: +(delay.max / 1e6).toFixed(1),
      steps: stepCpuMs.length,
      commitCpuMs: { sum: +commitCpuMs.toFixed(1), max: +commitCpuMsMax.toFixed(1) },
      stepCpuMs: {
        p50: +percentile(
          stepCpuMs.sort((a, b) => a - b),
          0.5,
        ).toFixed(1),
        max: +(stepCpuMs.at(-1) ?? 0).toFixed(1),
      },
      checkpointLsn: Number(log.checkpointLsn),
    }),
  );
}
log.close();
fs.rmSync(dir, { recursive: true, force: true });
