// What the etcd directory costs an increment: the same cluster (2 pairs)
// with the embedded directory and one router, with etcd and one router, and
// with etcd and two routers (the bench client spreads its calls over both),
// each measured with `tally bench` several times in one run; medians.
//   node --import tsx bench/throughput/routers.mts [--runs 3] [--seconds 6] [--concurrency 16] [--batch 0]
// --batch 0: unary increments (the per-increment latency an application sees).
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import os from 'node:os';
import fs from 'node:fs';
import { LocalCluster } from '../../src/cluster/local-cluster.ts';
import { repoRoot } from '../../src/cluster/managed-process.ts';

const flag = (name: string, fallback: number): number => {
  const index = process.argv.indexOf(`--${name}`);
  return index < 0 ? fallback : Number(process.argv[index + 1]);
};
const runs = flag('runs', 3);
const seconds = flag('seconds', 6);
const concurrency = flag('concurrency', 16);
const batch = flag('batch', 0);

interface BenchResult {
  incrementsPerSec: number;
  latencyMs: { p50: number; p99: number };
}

const variants = [
  { name: 'embedded, 1 router', routers: 1, etcd: false },
  { name: 'etcd, 1 router', routers: 1, etcd: true },
  { name: 'etcd, 2 routers', routers: 2, etcd: true },
];

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const rows: string[] = [];
for (const variant of variants) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tally-routers-bench-'));
  const cluster = new LocalCluster({
    pairCount: 2,
    dataDir,
    host: '127.0.0.1',
    routerCount: variant.routers,
    ...(variant.etcd ? { etcd: { dataDir: path.join(dataDir, 'etcd') } } : {}),
    routerPort: 0,
    nodePorts: [0, 0, 0, 0],
    routerMetricsPort: 0,
    nodeMetricsPorts: [0, 0, 0, 0],
  });
  await cluster.start();
  await new Promise((resolve) => setTimeout(resolve, 3_000)); // pairs in sync
  const results: BenchResult[] = [];
  try {
    for (let run = 0; run < runs; run++) {
      const args = [
        '--import',
        'tsx',
        'src/cli/cli.ts',
        'bench',
        '--router',
        cluster.routerAddresses.join(','),
        '--seconds',
        String(seconds),
      ];
      args.push('--concurrency', String(concurrency), '--json');
      if (batch > 0) args.push('--batch', String(batch));
      const output = execFileSync(process.execPath, args, { cwd: repoRoot, encoding: 'utf8' });
      results.push(JSON.parse(output.trim().split('\n').pop()!) as BenchResult);
    }
  } finally {
    await cluster.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
  const rate = median(results.map((result) => result.incrementsPerSec));
  const p50 = median(results.map((result) => result.latencyMs.p50));
  const p99 = median(results.map((result) => result.latencyMs.p99));
  rows.push(`| ${variant.name} | ${Math.round(rate).toLocaleString('en')} | ${p50.toFixed(2)} | ${p99.toFixed(2)} |`);
  console.error(`${variant.name}: ${results.map((result) => Math.round(result.incrementsPerSec)).join(', ')} increments/s`);
}
console.log(
  `${os.cpus().length} cores; ${runs} runs of ${seconds} s, ${concurrency} in flight, ${batch > 0 ? `batches of ${batch}` : 'unary'}; medians`,
);
console.log('| directory | increments/s | p50 ms | p99 ms |\n|---|---|---|---|');
for (const row of rows) console.log(row);
