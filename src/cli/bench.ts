// `tally bench`: drives a workload against a router and reports throughput,
// latency percentiles, errors, and an exact-read check that every counter's
// total agrees with what was acknowledged. Load can come from several
// processes (--procs) because one Node client saturates a core first.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import { createTallyClient, TallyError, type TallyClient } from '../client/index.ts';
import { LatencyHistogram } from './bench-histogram.ts';
import { monotonicNowMs } from '../common/clock.ts';

export interface BenchOptions {
  /** The routers, comma-separated as --router takes them. */
  router: string;
  workload: 'hot' | 'cold' | 'mix';
  coldCounters: number;
  keyed: boolean;
  /** Items per call: 1 = unary Increment, more = IncrementBatch. */
  batch: number;
  /** Unary increments through the coalescing client (concurrent calls share IncrementBatch calls); batch is 1. */
  coalesce: boolean;
  /** Calls in flight per process. */
  concurrency: number;
  /** Target increments/s over all processes; 0 = as fast as possible. */
  ratePerSec: number;
  durationMs: number;
  procs: number;
  runId: string;
  check: boolean;
  /** TLS and token for every client, workers included. */
  security: { tls?: { ca: Buffer; cert?: Buffer; key?: Buffer }; token?: string };
  /** The TLS flags as given, passed on to worker processes (the token goes by environment). */
  securityFlags: string[];
}

export interface WorkerResult {
  okIncrements: number;
  calls: number;
  errors: Record<string, number>;
  histogram: number[];
  maxMicros: number;
  okByCounter: Record<string, string>;
  unknownByCounter: Record<string, string>;
  elapsedMs: number;
}

export interface BenchSummary {
  runId: string;
  workload: string;
  keyed: boolean;
  batch: number;
  coalesce: boolean;
  concurrency: number;
  procs: number;
  durationMs: number;
  incrementsPerSec: number;
  callsPerSec: number;
  okIncrements: number;
  errors: Record<string, number>;
  latencyMs: { p50: number; p99: number; p999: number; max: number };
  check: { counters: number; passed: boolean; failures: string[] } | undefined;
}

type Progress = (okIncrements: number, errorCount: number, p99Ms: number) => void;

export function newRunId(): string {
  // eslint-disable-next-line no-restricted-properties -- a run id: a name shown and stored, not a duration
  return `${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
}

function counterPicker(options: BenchOptions): () => string {
  const prefix = `bench:${options.runId}`;
  const cold = (): string => `${prefix}:cold:${Math.floor(Math.random() * options.coldCounters)}`;
  if (options.workload === 'hot') return () => `${prefix}:hot`;
  if (options.workload === 'cold') return cold;
  return () => (Math.random() < 0.8 ? `${prefix}:hot` : cold());
}

/** Runs the workload in this process. */
export async function runWorker(options: BenchOptions, onProgress?: Progress): Promise<WorkerResult> {
  // Unary load is one Increment per call unless --coalesce asks for the client's coalescing.
  const client = createTallyClient({
    addresses: options.router.split(','),
    deadlineMs: 10_000,
    coalesce: options.coalesce,
    ...options.security,
  });
  const pick = counterPicker(options);
  const histogram = new LatencyHistogram();
  const ok = new Map<string, bigint>();
  const unknown = new Map<string, bigint>();
  const errors: Record<string, number> = {};
  let okIncrements = 0;
  let calls = 0;
  const startedMs = monotonicNowMs();
  const endMs = startedMs + options.durationMs;
  // Each loop paces itself when a rate is set: its share of the target.
  const loopIntervalMs = options.ratePerSec > 0 ? (options.concurrency * options.procs * options.batch * 1000) / options.ratePerSec : 0;
  const progressTimer = onProgress
    ? setInterval(
        () =>
          onProgress(
            okIncrements,
            Object.values(errors).reduce((a, b) => a + b, 0),
            histogram.quantileMs(0.99),
          ),
        1_000,
      )
    : undefined;
  const add = (map: Map<string, bigint>, counter: string): void => {
    map.set(counter, (map.get(counter) ?? 0n) + 1n);
  };
  await Promise.all(
    Array.from({ length: options.concurrency }, async (_, loop) => {
      for (let sent = 0; ; sent++) {
        if (loopIntervalMs > 0) {
          const dueMs = startedMs + (sent + loop / options.concurrency) * loopIntervalMs;
          const waitMs = dueMs - monotonicNowMs();
          if (waitMs > 0) await new Promise((resolve) => setTimeout(resolve, waitMs));
        }
        if (monotonicNowMs() >= endMs) return;
        const counters = Array.from({ length: options.batch }, pick);
        const key = options.keyed ? undefined : null;
        const startedNs = process.hrtime.bigint();
        try {
          if (options.batch === 1) await client.increment(counters[0]!, 1, { idempotencyKey: key });
          else await client.incrementBatch(counters.map((counter) => ({ counter, amount: 1, idempotencyKey: key })));
          histogram.record(Number(process.hrtime.bigint() - startedNs) / 1000);
          okIncrements += counters.length;
          for (const counter of counters) add(ok, counter);
        } catch (error) {
          const code = error instanceof TallyError ? error.code : 'internal';
          errors[code] = (errors[code] ?? 0) + 1;
          // A failed call may or may not have applied.
          for (const counter of counters) add(unknown, counter);
        }
        calls++;
      }
    }),
  );
  clearInterval(progressTimer);
  client.close();
  return {
    okIncrements,
    calls,
    errors,
    histogram: histogram.counts,
    maxMicros: histogram.maxMicros,
    okByCounter: Object.fromEntries([...ok].map(([counter, sum]) => [counter, sum.toString()])),
    unknownByCounter: Object.fromEntries([...unknown].map(([counter, sum]) => [counter, sum.toString()])),
    elapsedMs: Math.round(monotonicNowMs() - startedMs),
  };
}

// Workers run the CLI as this process does: compiled, through bin/tally.mjs
// (which loads dist/cli/cli.js), or from the TypeScript source under tsx
// (tests and development), so a test never drives a stale build.
const benchPath = fileURLToPath(import.meta.url);
const workerEntryArgs = benchPath.endsWith('.ts')
  ? ['--import', 'tsx', '--no-deprecation', path.join(path.dirname(benchPath), 'cli.ts')]
  : [path.resolve(path.dirname(benchPath), '../../bin/tally.mjs')];

/** Runs one worker process per --procs, each reporting progress lines and a final result line. */
async function runProcesses(options: BenchOptions, onProgress?: Progress): Promise<WorkerResult[]> {
  const latest = new Array<{ ok: number; errors: number; p99: number }>(options.procs).fill({ ok: 0, errors: 0, p99: 0 });
  const workers = Array.from({ length: options.procs }, (_, index) => {
    const args = [
      ...workerEntryArgs,
      'bench',
      '--worker',
      '--router',
      options.router,
      '--workload',
      options.workload,
      '--cold-counters',
      String(options.coldCounters),
      '--batch',
      String(options.batch),
      '--concurrency',
      String(options.concurrency),
      '--rate',
      String(options.ratePerSec),
      '--procs-total',
      String(options.procs),
      '--duration-ms',
      String(options.durationMs),
      '--run-id',
      options.runId,
      ...(options.keyed ? ['--keyed'] : []),
      ...(options.coalesce ? ['--coalesce'] : []),
      ...options.securityFlags,
    ];
    const env = options.security.token === undefined ? process.env : { ...process.env, TALLY_TOKEN: options.security.token };
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'], env });
    return new Promise<WorkerResult>((resolve, reject) => {
      let result: WorkerResult | undefined;
      readline.createInterface({ input: child.stdout }).on('line', (line) => {
        const message = JSON.parse(line) as { progress?: { ok: number; errors: number; p99: number }; result?: WorkerResult };
        if (message.progress) {
          latest[index] = message.progress;
          onProgress?.(
            latest.reduce((sum, entry) => sum + entry.ok, 0),
            latest.reduce((sum, entry) => sum + entry.errors, 0),
            Math.max(...latest.map((entry) => entry.p99)),
          );
        }
        if (message.result) result = message.result;
      });
      child.on('exit', (code) =>
        result ? resolve(result) : reject(new Error(`bench worker ${index} exited with code ${code} and no result`)),
      );
    });
  });
  return Promise.all(workers);
}

async function checkTotals(
  client: TallyClient,
  results: WorkerResult[],
): Promise<{ counters: number; passed: boolean; failures: string[] }> {
  const ok = new Map<string, bigint>();
  const unknown = new Map<string, bigint>();
  for (const result of results) {
    for (const [counter, sum] of Object.entries(result.okByCounter)) ok.set(counter, (ok.get(counter) ?? 0n) + BigInt(sum));
    for (const [counter, sum] of Object.entries(result.unknownByCounter)) unknown.set(counter, (unknown.get(counter) ?? 0n) + BigInt(sum));
  }
  const counters = [...new Set([...ok.keys(), ...unknown.keys()])];
  const failures: string[] = [];
  for (let offset = 0; offset < counters.length; offset += 1_000) {
    for (const read of await client.readMany(counters.slice(offset, offset + 1_000))) {
      const low = ok.get(read.counter) ?? 0n;
      const high = low + (unknown.get(read.counter) ?? 0n);
      if (read.total < low || read.total > high)
        failures.push(`${read.counter}: total ${read.total}, acknowledged ${low}, unknown ${high - low}`);
    }
  }
  return { counters: counters.length, passed: failures.length === 0, failures: failures.slice(0, 10) };
}

export async function runBench(options: BenchOptions, onProgress?: Progress): Promise<BenchSummary> {
  const results = options.procs === 1 ? [await runWorker(options, onProgress)] : await runProcesses(options, onProgress);
  const histogram = new LatencyHistogram();
  for (const result of results) {
    const other = new LatencyHistogram(result.histogram);
    other.maxMicros = result.maxMicros;
    histogram.merge(other);
  }
  const errors: Record<string, number> = {};
  for (const result of results) for (const [code, count] of Object.entries(result.errors)) errors[code] = (errors[code] ?? 0) + count;
  const elapsedMs = Math.max(...results.map((result) => result.elapsedMs));
  const okIncrements = results.reduce((sum, result) => sum + result.okIncrements, 0);
  const calls = results.reduce((sum, result) => sum + result.calls, 0);
  let check: BenchSummary['check'];
  if (options.check) {
    const client = createTallyClient({ addresses: options.router.split(','), deadlineMs: 30_000, ...options.security });
    try {
      check = await checkTotals(client, results);
    } finally {
      client.close();
    }
  }
  return {
    runId: options.runId,
    workload: options.workload,
    keyed: options.keyed,
    batch: options.batch,
    coalesce: options.coalesce,
    concurrency: options.concurrency,
    procs: options.procs,
    durationMs: elapsedMs,
    incrementsPerSec: Math.round((okIncrements * 1000) / elapsedMs),
    callsPerSec: Math.round((calls * 1000) / elapsedMs),
    okIncrements,
    errors,
    latencyMs: {
      p50: histogram.quantileMs(0.5),
      p99: histogram.quantileMs(0.99),
      p999: histogram.quantileMs(0.999),
      max: histogram.maxMicros / 1000,
    },
    check,
  };
}
