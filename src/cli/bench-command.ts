// `tally bench`: its options, the run, and the summary it prints.
import { runBench, runWorker, newRunId, type BenchOptions } from './bench.ts';
import { batchItemsMax } from '../common/limits.ts';
import { monotonicNowMs } from '../common/clock.ts';
import { UsageError, parseWholeNumber } from './args.ts';
import { print } from './format.ts';
import { routerAddresses, securityOptions } from './connection.ts';

export function benchOptions(flags: Map<string, string>, router: string): BenchOptions {
  const workload = flags.get('workload') ?? 'hot';
  if (workload !== 'hot' && workload !== 'cold' && workload !== 'mix')
    throw new UsageError(`--workload must be hot, cold or mix, got "${workload}"`);
  const whole = (name: string, fallback: number, min: number, max: number): number => {
    const text = flags.get(name);
    if (text === undefined) return fallback;
    const value = parseWholeNumber(text, `--${name}`);
    if (value < min || value > max) throw new UsageError(`--${name} must be between ${min} and ${max}, got ${value}`);
    return value;
  };
  const seconds = whole('seconds', 10, 1, 3_600);
  const coalesce = flags.has('coalesce');
  if (coalesce && flags.has('batch')) throw new UsageError('--coalesce drives unary increment calls; it takes no --batch');
  return {
    router,
    workload,
    coldCounters: whole('cold-counters', 1_000, 1, 10_000_000),
    keyed: flags.has('keyed'),
    batch: whole('batch', 1, 1, batchItemsMax),
    coalesce,
    concurrency: whole('concurrency', 64, 1, 10_000),
    ratePerSec: whole('rate', 0, 0, 100_000_000),
    durationMs: whole('duration-ms', seconds * 1000, 100, 3_600_000),
    procs: whole('procs-total', whole('procs', 1, 1, 64), 1, 64),
    runId: flags.get('run-id') ?? newRunId(),
    check: !flags.has('no-check'),
    security: securityOptions(flags),
    securityFlags: ['tls-ca', 'tls-cert', 'tls-key'].flatMap((name) => (flags.has(name) ? [`--${name}`, flags.get(name)!] : [])),
  };
}

export async function bench(flags: Map<string, string>, json: boolean): Promise<void> {
  const options = benchOptions(flags, routerAddresses(flags).join(','));
  if (flags.has('worker')) {
    // A worker of a multi-process bench: JSON lines on stdout for the parent.
    const result = await runWorker(options, (ok, errors, p99) =>
      process.stdout.write(`${JSON.stringify({ progress: { ok, errors, p99 } })}\n`),
    );
    process.stdout.write(`${JSON.stringify({ result })}\n`);
    return;
  }
  const startedMs = monotonicNowMs();
  const tty = process.stderr.isTTY === true;
  const summary = await runBench(options, (ok, errors, p99) => {
    const elapsedSec = (monotonicNowMs() - startedMs) / 1000;
    const line = `${elapsedSec.toFixed(0)}s  ${Math.round(ok / elapsedSec).toLocaleString('en-US')} increments/s  errors ${errors}  p99 ${p99.toFixed(2)} ms`;
    process.stderr.write(tty ? `\r${line.padEnd(70)}` : `${line}\n`);
  });
  if (tty) process.stderr.write('\n');
  const lines = [
    `${summary.workload} workload, ${summary.keyed ? 'keyed' : 'unkeyed'}, ${summary.coalesce ? 'unary through the coalescing client' : summary.batch === 1 ? 'unary' : `batches of ${summary.batch}`}, ${summary.concurrency} in flight x ${summary.procs} process${summary.procs === 1 ? '' : 'es'}, ${(summary.durationMs / 1000).toFixed(1)} s`,
    `throughput  ${summary.incrementsPerSec.toLocaleString('en-US')} increments/s (${summary.callsPerSec.toLocaleString('en-US')} calls/s), ${summary.okIncrements.toLocaleString('en-US')} acknowledged`,
    `latency     p50 ${summary.latencyMs.p50.toFixed(2)} ms  p99 ${summary.latencyMs.p99.toFixed(2)} ms  p999 ${summary.latencyMs.p999.toFixed(2)} ms  max ${summary.latencyMs.max.toFixed(2)} ms`,
    `errors      ${
      Object.keys(summary.errors).length === 0
        ? 'none'
        : Object.entries(summary.errors)
            .map(([code, count]) => `${code} ${count}`)
            .join(', ')
    }`,
    summary.check === undefined
      ? 'check       skipped'
      : `check       ${summary.check.passed ? 'passed' : 'FAILED'}: exact totals of ${summary.check.counters} counter${summary.check.counters === 1 ? '' : 's'} ${summary.check.passed ? 'match the acknowledged sums' : `disagree: ${summary.check.failures.join('; ')}`}`,
  ];
  print(json, summary, lines.join('\n'));
  if (summary.check !== undefined && !summary.check.passed) process.exitCode = 3;
}
