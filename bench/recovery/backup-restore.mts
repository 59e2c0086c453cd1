// Time to back up and to restore a cluster, measured on this machine:
//   node --import tsx bench/recovery/backup-restore.mts [--counters 20000] [--pairs 2] [--runs 3]
// 1. Starts a cluster (test/helpers/cluster.ts: real router and nodes) and
//    writes one keyed increment to each of `counters` counters (batches of
//    500), so every counter has a shard and every key is in the window.
// 2. Per run: `tally backup --out` through the CLI (wall time of the
//    process, and the manifest's own started..finished), its bytes; `tally
//    backup verify`; then `tally restore` into a fresh cluster's data
//    directories and that cluster's start until every pair is in sync and an
//    exact ReadMany of a sample answers (the RTO once the data is on the
//    machine).
// Prints each run and the medians.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { monotonicNowMs } from '../../src/wire/index.ts';
import { repoRoot } from '../../src/cluster/managed-process.ts';
import { startCluster, waitForHealthy, type TestCluster } from '../../test/helpers/cluster.ts';
import { cliNodeArgs } from '../../test/helpers/cli.ts';
import { makeTempDir, removeTempDir } from '../../test/helpers/temp-dir.ts';

function flag(name: string, fallback: number): number {
  const index = process.argv.indexOf(`--${name}`);
  return index > 0 ? Number(process.argv[index + 1]) : fallback;
}
const counterCount = flag('counters', 20_000);
const pairCount = flag('pairs', 2);
const runs = flag('runs', 3);
const batchItems = 500;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

function cli(args: string[]): { wallMs: number; stdout: string } {
  const startedMs = monotonicNowMs();
  const result = spawnSync(process.execPath, [...cliNodeArgs, ...args], { cwd: repoRoot, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`tally ${args.join(' ')}: ${result.stderr}`);
  return { wallMs: monotonicNowMs() - startedMs, stdout: result.stdout };
}

const scratch = makeTempDir('bench-backup');
const source: TestCluster = await startCluster({ pairs: pairCount });
const rows: { backupMs: number; backupInnerMs: number; sizeBytes: number; verifyMs: number; restoreMs: number; startMs: number }[] = [];
try {
  const fillStartedMs = monotonicNowMs();
  for (let first = 0; first < counterCount; first += batchItems) {
    const items = Array.from({ length: Math.min(batchItems, counterCount - first) }, (_, index) => ({
      counter: `bench:backup:${first + index}`,
      amount: BigInt((first + index) % 7) + 1n,
      idempotencyKey: `bench-key-${first + index}`,
    }));
    await source.client.incrementBatch(items);
  }
  console.log(`filled ${counterCount} counters (one keyed increment each) in ${Math.round(monotonicNowMs() - fillStartedMs)} ms`);
  const sample = Array.from({ length: 50 }, (_, index) => `bench:backup:${Math.floor((index * counterCount) / 50)}`);
  const expected = await source.client.readMany(sample);

  for (let run = 0; run < runs; run++) {
    const out = path.join(scratch, `backup-${run}`);
    const backup = cli(['backup', '--out', out, '--router', source.cluster.routerAddress, '--json']);
    const manifest = JSON.parse(backup.stdout) as { startedUnixMs: number; finishedUnixMs: number; files: { sizeBytes: number }[] };
    const sizeBytes = manifest.files.reduce((sum, file) => sum + file.sizeBytes, 0);
    const verify = cli(['backup', 'verify', '--from', out]);

    let restoreMs = 0;
    const startedMs = monotonicNowMs();
    const target = await startCluster({
      pairs: pairCount,
      beforeStart: (dataDir) => {
        const restore = cli([
          'restore',
          '--from',
          out,
          '--data-dir',
          path.join(dataDir, 'router'),
          '--node-data-dirs',
          Array.from({ length: pairCount }, (_, pair) => path.join(dataDir, `node-${pair}-primary`)).join(','),
        ]);
        restoreMs = restore.wallMs;
      },
    });
    try {
      await waitForHealthy(target.client, 120_000);
      const reads = await target.client.readMany(sample);
      reads.forEach((read, index) => {
        if (read.total !== expected[index]!.total) throw new Error(`${read.counter}: ${read.total}, expected ${expected[index]!.total}`);
      });
      const startMs = monotonicNowMs() - startedMs - restoreMs;
      rows.push({
        backupMs: backup.wallMs,
        backupInnerMs: manifest.finishedUnixMs - manifest.startedUnixMs,
        sizeBytes,
        verifyMs: verify.wallMs,
        restoreMs,
        startMs,
      });
      console.log(
        `run ${run + 1}: backup ${Math.round(backup.wallMs)} ms (inside the CLI ${manifest.finishedUnixMs - manifest.startedUnixMs} ms), ${(sizeBytes / 1024 / 1024).toFixed(2)} MiB; verify ${Math.round(verify.wallMs)} ms; restore ${Math.round(restoreMs)} ms; start to in sync ${Math.round(startMs)} ms`,
      );
    } finally {
      await target.stop();
    }
    fs.rmSync(out, { recursive: true, force: true });
  }
  const of = (key: keyof (typeof rows)[number]): number => Math.round(median(rows.map((row) => row[key])));
  console.log(
    `medians of ${runs} (${counterCount} counters, ${pairCount} pairs, ${(of('sizeBytes') / 1024 / 1024).toFixed(2)} MiB): backup ${of('backupMs')} ms (inside ${of('backupInnerMs')} ms), verify ${of('verifyMs')} ms, restore ${of('restoreMs')} ms, start to in sync ${of('startMs')} ms, RTO (restore + start) ${of('restoreMs') + of('startMs')} ms`,
  );
} finally {
  await source.stop();
  removeTempDir(scratch);
}
