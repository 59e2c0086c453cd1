// The outbox relay on this machine: rows relayed per second, and the lag at a
// steady write rate from a separate process.
//   node --import tsx bench/throughput/outbox.mts [--runs 3] [--rows 100000] [--batches 100,1000] [--relays 1] [--rate 5000] [--lag-seconds 20] [--writer-connections 16]
// One real 1-pair cluster and one PostgreSQL (fsync on, as test/helpers/postgres.ts
// starts it) for the whole script; --relays relay processes (`tally relay`, archive on).
//   throughput: the outbox prefilled with --rows rows over 1,000 counters, the
//               relay started, timed from its "relay ready" line to an empty outbox.
//   lag:        the relay running (default batch and poll interval), a writer
//               process (bench/throughput/outbox-writer.mts) inserting --rate rows/s, one row
//               per transaction; lag = relayed_at - created_at from the archive,
//               the first 2 s left out.
// Each run ends with a check: the counters' exact totals sum to the rows relayed.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { createTallyClient } from '../../src/client/index.ts';
import { repoRoot } from '../../src/cluster/managed-process.ts';
import { tally } from '../../test/helpers/cli.ts';
import { waitFor } from '../../test/helpers/cluster.ts';
import { startPostgres } from '../../test/helpers/postgres.ts';
import { spawnRelay } from '../../test/helpers/relay-process.ts';
import { onePairCluster } from '../support/one-pair.mts';

function flag(name: string, fallback: string): string {
  const index = process.argv.indexOf(`--${name}`);
  return index > 0 ? process.argv[index + 1]! : fallback;
}
const runs = Number(flag('runs', '3'));
const rowCount = Number(flag('rows', '100000'));
const batches = flag('batches', '100,1000').split(',').map(Number);
const ratePerSec = Number(flag('rate', '5000'));
const lagSeconds = Number(flag('lag-seconds', '20'));
const relayCount = Number(flag('relays', '1'));
const writerConnections = flag('writer-connections', '16');
const counterCount = 1_000;

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tally-bench-outbox-'));
const cluster = await onePairCluster(dataDir);
const [postgres] = await Promise.all([startPostgres(), cluster.start()]);
const router = cluster.routerAddress;
const client = createTallyClient({ address: router });
const env = { TALLY_POSTGRES: postgres.url };
const tableArgs = ['--table', 'bench_outbox', '--archive-table', 'bench_archive'];
let relayedTotal = 0n;

async function check(expectedRows: bigint): Promise<void> {
  relayedTotal += expectedRows;
  const counters = Array.from({ length: counterCount }, (_, index) => `bench:${index}`);
  const reads = await client.readMany(counters);
  const sum = reads.reduce((total, read) => total + read.total, 0n);
  if (sum !== relayedTotal) throw new Error(`check failed: the counters sum to ${sum}, ${relayedTotal} rows were relayed`);
}

async function reset(): Promise<void> {
  await postgres.query('TRUNCATE bench_outbox, bench_archive');
  await postgres.query('VACUUM ANALYZE bench_outbox');
}

try {
  const created = await tally(['relay', '--create-table', ...tableArgs], env);
  if (created.code !== 0) throw new Error(created.stderr);
  console.log(
    `outbox bench: ${os.cpus().length} cores, ${os.cpus()[0]?.model}; 1-pair cluster; PostgreSQL with fsync on; ${runs} runs each`,
  );

  for (const batch of batches) {
    // Tally alone, as the relay drives it: one keyed IncrementBatch of `batch` rows in flight at a time.
    const baseline: number[] = [];
    for (let run = 0; run < runs; run++) {
      const startedMs = performance.now();
      for (let sent = 0; sent < rowCount; sent += batch) {
        const items = Array.from({ length: Math.min(batch, rowCount - sent) }, (_, index) => ({
          counter: `bench:${(sent + index) % counterCount}`,
          amount: 1n,
          idempotencyKey: `baseline:${batch}:${run}:${sent + index}`,
        }));
        await client.incrementBatch(items);
      }
      baseline.push(Math.round(rowCount / ((performance.now() - startedMs) / 1000)));
      await check(BigInt(rowCount));
    }
    console.log(
      `Tally alone, keyed batches of ${batch}, one in flight: median ${median(baseline).toLocaleString('en-US')} increments/s (runs: ${baseline.join(', ')})`,
    );
    const rates: number[] = [];
    for (let run = 0; run < runs; run++) {
      await reset();
      await postgres.query(
        `INSERT INTO bench_outbox (counter, amount) SELECT 'bench:' || (g % ${counterCount}), 1 FROM generate_series(1, ${rowCount}) AS g`,
      );
      await postgres.query('VACUUM ANALYZE bench_outbox');
      const relays = Array.from({ length: relayCount }, () =>
        spawnRelay([...tableArgs, '--batch', String(batch), '--metrics-port', '0', '--router', router], env),
      );
      await Promise.all(relays.map((relay) => relay.waitForLine('"msg":"relay ready"', { timeoutMs: 30_000 })));
      const startedMs = performance.now();
      await waitFor(async () => (await postgres.query<{ n: number }>('SELECT count(*)::int AS n FROM bench_outbox'))[0]!.n === 0, {
        timeoutMs: 600_000,
        intervalMs: 25,
        what: 'the outbox to empty',
      });
      const rowsPerSec = Math.round(rowCount / ((performance.now() - startedMs) / 1000));
      await Promise.all(relays.map((relay) => relay.kill('SIGTERM')));
      await check(BigInt(rowCount));
      rates.push(rowsPerSec);
      console.log(`throughput batch ${batch} x ${relayCount} relay(s) run ${run + 1}: ${rowsPerSec.toLocaleString('en-US')} rows/s`);
    }
    console.log(
      `throughput batch ${batch} x ${relayCount} relay(s): median ${median(rates).toLocaleString('en-US')} rows/s (runs: ${rates.join(', ')})`,
    );
  }

  const lags = { p50: [] as number[], p99: [] as number[], max: [] as number[], written: [] as number[] };
  for (let run = 0; run < (lagSeconds > 0 ? runs : 0); run++) {
    await reset();
    const relay = spawnRelay([...tableArgs, '--metrics-port', '0', '--router', router], env);
    await relay.waitForLine('"msg":"relay ready"', { timeoutMs: 30_000 });
    const writer = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        path.join(repoRoot, 'bench/throughput/outbox-writer.mts'),
        '--url',
        postgres.url,
        '--table',
        'bench_outbox',
        '--rate',
        String(ratePerSec),
        '--seconds',
        String(lagSeconds),
        '--connections',
        writerConnections,
      ],
      { cwd: repoRoot, stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let output = '';
    writer.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    await new Promise((resolve) => writer.once('exit', resolve));
    const written = JSON.parse(output) as { rowsWritten: number; rowsPerSec: number; worstLateMs: number };
    await waitFor(async () => (await postgres.query<{ n: number }>('SELECT count(*)::int AS n FROM bench_outbox'))[0]!.n === 0, {
      timeoutMs: 120_000,
      what: 'the outbox to empty',
    });
    await relay.kill('SIGTERM');
    const [lag] = await postgres.query<{ p50: number; p99: number; max: number }>(
      `WITH steady AS (SELECT extract(epoch FROM relayed_at - created_at) * 1000 AS lag_ms FROM bench_archive
         WHERE created_at > (SELECT min(created_at) + interval '2 seconds' FROM bench_archive))
       SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY lag_ms) AS p50, percentile_cont(0.99) WITHIN GROUP (ORDER BY lag_ms) AS p99, max(lag_ms) AS max FROM steady`,
    );
    await check(BigInt(written.rowsWritten));
    lags.p50.push(Math.round(lag!.p50));
    lags.p99.push(Math.round(lag!.p99));
    lags.max.push(Math.round(lag!.max));
    lags.written.push(written.rowsPerSec);
    console.log(
      `lag run ${run + 1}: writer ${written.rowsPerSec.toLocaleString('en-US')} rows/s (worst ${written.worstLateMs} ms behind schedule); lag p50 ${Math.round(lag!.p50)} ms, p99 ${Math.round(lag!.p99)} ms, max ${Math.round(lag!.max)} ms`,
    );
  }
  if (lagSeconds > 0)
    console.log(
      `lag at ${ratePerSec.toLocaleString('en-US')} rows/s: median p50 ${median(lags.p50)} ms, p99 ${median(lags.p99)} ms, max ${median(lags.max)} ms (writer achieved ${median(lags.written).toLocaleString('en-US')} rows/s)`,
    );
  console.log(`check passed: the counters' exact totals equal the ${relayedTotal.toLocaleString('en-US')} rows relayed`);
} finally {
  client.close();
  await cluster.stop('SIGKILL');
  await postgres.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
}
