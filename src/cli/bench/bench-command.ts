// `tally bench`: its options, the run, and the summary it prints.
import { runBench, runWorker, newRunId, type BenchOptions, type BenchSummary } from './bench.ts';
import { usesPopulation, workloads, type Workload } from './bench-workload.ts';
import { batchItemsMax, readManyCountersMax, monotonicNowMs } from '../../wire/index.ts';
import { UsageError, parseWholeNumber } from '../args.ts';
import { print } from '../format.ts';
import { routerAddresses, securityOptions } from '../connection.ts';

export function benchOptions(flags: Map<string, string>, router: string): BenchOptions {
  const workloadText = flags.get('workload') ?? 'hot';
  if (!(workloads as readonly string[]).includes(workloadText))
    throw new UsageError(`--workload must be hot, cold, mix, zipf or page, got "${workloadText}"`);
  const workload = workloadText as Workload;
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
  if (coalesce && workload === 'page') throw new UsageError('--coalesce drives increments; the page workload reads');
  const stream = flags.has('stream');
  const unaryBatches = flags.has('unary-batches');
  if (unaryBatches && !coalesce) throw new UsageError('--unary-batches goes with --coalesce');
  if (stream && coalesce)
    throw new UsageError('--stream sends batches on an IncrementStream itself; the coalescing client (--coalesce) does too');
  // --cold-counters is the older name of --counters (the population cold and mix draw from).
  if (flags.has('counters') && flags.has('cold-counters')) throw new UsageError('give --counters or --cold-counters, not both');
  const counters = flags.has('cold-counters')
    ? whole('cold-counters', 1_000, 1, 10_000_000)
    : whole('counters', workload === 'zipf' || workload === 'page' ? 1_000_000 : 1_000, 1, 10_000_000);
  const zipfText = flags.get('zipf-s');
  const zipfExponent = zipfText === undefined ? 0.99 : Number(zipfText);
  if (zipfText !== undefined && !(/^\d+(\.\d+)?$/.test(zipfText) && zipfExponent > 0 && zipfExponent <= 10))
    throw new UsageError(`--zipf-s must be a number above 0 and at most 10, got "${zipfText}"`);
  if (zipfText !== undefined && workload !== 'zipf') throw new UsageError('--zipf-s goes with --workload zipf');
  if (flags.has('prefill') && flags.has('no-prefill')) throw new UsageError('give --prefill or --no-prefill, not both');
  // The population is created first for zipf and page (their premise: counters that exist); cold and mix create counters as they draw them unless --prefill.
  // --prefill-only stops after what the run would create (nothing for hot, or for cold and mix without --prefill).
  if (flags.has('prefill') && !usesPopulation(workload))
    throw new UsageError('--prefill creates the population of cold, mix, zipf and page; hot has none');
  const prefill = !flags.has('no-prefill') && (flags.has('prefill') || workload === 'zipf' || workload === 'page');
  return {
    router,
    workload,
    counters,
    zipfExponent,
    seed: whole('seed', 1, 0, 2 ** 40),
    processIndex: whole('process-index', 0, 0, 63),
    pageSize: whole('page-size', 50, 1, readManyCountersMax),
    prefill,
    prefillOnly: flags.has('prefill-only'),
    keyed: flags.has('keyed'),
    batch: whole('batch', 1, 1, batchItemsMax),
    coalesce,
    stream,
    unaryBatches,
    concurrency: whole('concurrency', 64, 1, 10_000),
    ratePerSec: whole('rate', 0, 0, 100_000_000),
    durationMs: whole('duration-ms', seconds * 1000, 100, 3_600_000),
    procs: whole('procs-total', whole('procs', 1, 1, 64), 1, 64),
    runId: flags.get('run-id') ?? newRunId(),
    check: !flags.has('no-check'),
    phaseFile: flags.get('phase-file'),
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
  const unit = options.workload === 'page' ? 'counters read/s' : 'increments/s';
  let runStartedMs: number | undefined;
  const summary = await runBench(
    options,
    (ok, errors, p99) => {
      runStartedMs ??= monotonicNowMs() - 1_000;
      const elapsedSec = (monotonicNowMs() - runStartedMs) / 1000;
      const line = `${elapsedSec.toFixed(0)}s  ${Math.round(ok / elapsedSec).toLocaleString('en-US')} ${unit}  errors ${errors}  p99 ${p99.toFixed(2)} ms`;
      process.stderr.write(tty ? `\r${line.padEnd(70)}` : `${line}\n`);
    },
    (created) => {
      const line = `creating counters: ${created.toLocaleString('en-US')} of ${options.counters.toLocaleString('en-US')}, ${Math.round(created / ((monotonicNowMs() - startedMs) / 1000)).toLocaleString('en-US')}/s`;
      process.stderr.write(tty ? `\r${line.padEnd(70)}` : `${line}\n`);
    },
  );
  if (tty) process.stderr.write('\n');
  print(json, summary, summaryLines(summary, options.prefillOnly).join('\n'));
  if (summary.check !== undefined && !summary.check.passed) process.exitCode = 3;
}

function summaryLines(summary: BenchSummary, creationOnly: boolean): string[] {
  const creation =
    summary.creation === undefined
      ? []
      : [
          `creation    ${summary.creation.counters.toLocaleString('en-US')} counters in ${(summary.creation.durationMs / 1000).toFixed(1)} s, ${summary.creation.countersPerSec.toLocaleString('en-US')}/s (before the run, not in its figures)${summary.creation.failedCalls === 0 ? '' : `, ${summary.creation.failedCalls} calls failed`}`,
        ];
  if (creationOnly) return creation.length === 0 ? ['creation    nothing to create: the workload has no population'] : creation;
  const page = summary.workload === 'page';
  const population =
    summary.workload === 'hot'
      ? ''
      : ` over ${summary.counters.toLocaleString('en-US')} counters${summary.workload === 'zipf' ? ` (s = ${summary.zipfExponent})` : ''}, seed ${summary.seed}`;
  const shape = page
    ? `ReadMany of ${summary.pageSize}${summary.stream ? ' on ReadStream' : ''}`
    : summary.coalesce
      ? `unary through the coalescing client (batches ${summary.unaryBatches ? 'as IncrementBatch calls' : 'on IncrementStream'})`
      : summary.stream
        ? `batches of ${summary.batch} on IncrementStream`
        : summary.batch === 1
          ? 'unary'
          : `batches of ${summary.batch}`;
  const lines = [
    `${summary.workload} workload${population}, ${page ? 'exact reads' : summary.keyed ? 'keyed' : 'unkeyed'}, ${shape}, ${summary.concurrency} in flight x ${summary.procs} process${summary.procs === 1 ? '' : 'es'}, ${(summary.durationMs / 1000).toFixed(1)} s`,
    ...creation,
    page
      ? `throughput  ${summary.callsPerSec.toLocaleString('en-US')} pages/s (${summary.countersReadPerSec.toLocaleString('en-US')} counters read/s)`
      : `throughput  ${summary.incrementsPerSec.toLocaleString('en-US')} increments/s (${summary.callsPerSec.toLocaleString('en-US')} calls/s), ${summary.okIncrements.toLocaleString('en-US')} acknowledged`,
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
      : page
        ? `check       ${summary.check.passed ? 'passed' : 'FAILED'}: ${summary.check.passed ? `all ${summary.check.counters.toLocaleString('en-US')} totals read were of existing counters` : summary.check.failures.join('; ')}`
        : `check       ${summary.check.passed ? 'passed' : 'FAILED'}: exact totals of ${summary.check.counters.toLocaleString('en-US')} counter${summary.check.counters === 1 ? '' : 's'}${summary.check.sampled ? ' (a fixed sample of the population: its first 1,000 and an even spread of the rest)' : ''} ${summary.check.passed ? 'match their totals before the run plus the acknowledged sums' : `disagree: ${summary.check.failures.join('; ')}`}`,
  ];
  return lines;
}
