// `tally bench`: drives a workload against a router and reports throughput,
// latency percentiles, errors, and an exact-read check that the counters'
// totals agree with what was acknowledged (all of them, or a fixed sample of
// a large population). Load can come from several
// processes (--procs) because one Node client saturates a core first.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import { createTallyClient, TallyError, type IncrementItem, type TallyClient } from '../../client/index.ts';
import { LatencyHistogram } from './bench-histogram.ts';
import {
  CheckSample,
  hotIndex,
  CounterNames,
  SampleTallies,
  createPopulation,
  indexPicker,
  processSeed,
  untilDue,
  readTotals,
  usesPopulation,
  type PopulationCreation,
  type Workload,
} from './bench-workload.ts';
import { SeededRandom } from './bench-zipf.ts';
import { monotonicNowMs } from '../../wire/index.ts';

export interface BenchOptions {
  /** The routers, comma-separated as --router takes them. */
  router: string;
  workload: Workload;
  /** The population the cold, mix, zipf and page workloads draw from: counters 0..counters-1. */
  counters: number;
  /** Zipf's s: P(rank k) is proportional to 1/k^s. */
  zipfExponent: number;
  /** The draws' seed; each process draws its own sequence from it (processSeed). */
  seed: number;
  /** This process's index among --procs (0 in a single-process run). */
  processIndex: number;
  /** Counters per ReadMany call of the page workload. */
  pageSize: number;
  /** Create the population before the run (measured apart); false: it exists already, or counters are created as they are drawn. */
  prefill: boolean;
  /** Create the population and stop: cpu-split.sh and compare.sh measure creation and the run apart. */
  prefillOnly: boolean;
  keyed: boolean;
  /** Items per call: 1 = unary Increment, more = IncrementBatch. */
  batch: number;
  /** Unary increments through the coalescing client (concurrent calls share batches on its IncrementStream); batch is 1. */
  coalesce: boolean;
  /** Every call a batch of `batch` items on one IncrementStream per router (the client's incrementBatchOnStream), not a unary call; the page workload's pages on one ReadStream per router. */
  stream: boolean;
  /** With coalesce: the coalescing client's batches as unary IncrementBatch calls (its incrementStream: false). */
  unaryBatches: boolean;
  /** Calls in flight per process. */
  concurrency: number;
  /** Target increments/s (pages/s for page) over all processes; 0 = as fast as possible. */
  ratePerSec: number;
  durationMs: number;
  procs: number;
  runId: string;
  check: boolean;
  /**
   * A file for a measuring script (bench/cpu-split.sh): the bench writes
   * "ready" before the run and waits for "run", then writes "done" and waits
   * for "check", so the script's CPU window holds the run alone, not the
   * population's creation or the check's reads.
   */
  phaseFile: string | undefined;
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
  /** Acknowledged increments per slot of the check sample (CheckSample). */
  okBySlot: number[];
  /** Increments of failed calls per slot: they may or may not have applied. */
  unknownBySlot: number[];
  /** Page workload: counter totals read, and how many of them read 0 (a counter the population should hold). */
  countersRead: number;
  emptyReads: number;
  elapsedMs: number;
  /** This process's CPU (user + system) from the first call to the last answer: the client library's cost with the load generator's own. */
  cpuMicros: number;
}

export interface BenchCheck {
  /** Counters read (page: counter totals read during the run). */
  counters: number;
  passed: boolean;
  failures: string[];
  /** True when the check read a sample of the population, not all of it. */
  sampled: boolean;
}

export interface BenchSummary {
  runId: string;
  workload: string;
  counters: number;
  zipfExponent: number;
  seed: number;
  keyed: boolean;
  batch: number;
  pageSize: number;
  coalesce: boolean;
  stream: boolean;
  unaryBatches: boolean;
  concurrency: number;
  procs: number;
  durationMs: number;
  incrementsPerSec: number;
  callsPerSec: number;
  okIncrements: number;
  /** Calls answered or failed, over all processes. */
  calls: number;
  /** The load-generating processes' CPU during the run (not their start or the check), in seconds. */
  loadGeneratorCpuSeconds: number;
  /** Page workload: counter totals read per second. */
  countersReadPerSec: number;
  errors: Record<string, number>;
  latencyMs: { p50: number; p99: number; p999: number; max: number };
  /** The population's creation before the run, when this run created it. */
  creation: PopulationCreation | undefined;
  check: BenchCheck | undefined;
}

type Progress = (okIncrements: number, errorCount: number, p99Ms: number) => void;

export function newRunId(): string {
  // eslint-disable-next-line no-restricted-properties -- a run id: a name shown and stored, not a duration
  return `${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
}

/**
 * Runs the workload in this process. Paced runs (--rate) time each call from
 * when it was due, not when it left, so a stall shows in the percentiles
 * instead of quietly lowering the rate (coordinated omission).
 */
export async function runWorker(options: BenchOptions, onProgress?: Progress): Promise<WorkerResult> {
  // Unary load is one Increment per call unless --coalesce asks for the client's coalescing.
  const client = createTallyClient({
    addresses: options.router.split(','),
    deadlineMs: 10_000,
    coalesce: options.coalesce,
    incrementBatchOnStream: options.stream,
    incrementStream: !options.unaryBatches,
    // The page workload's pages on one ReadStream per router only with --stream: unary ReadMany calls otherwise.
    readStream: options.stream,
    ...options.security,
  });
  const names = new CounterNames(options.runId);
  const pick = indexPicker(options, new SeededRandom(processSeed(options.seed, options.processIndex)));
  const tallies = new SampleTallies(new CheckSample(options.counters));
  const page = options.workload === 'page';
  const itemsPerCall = page ? options.pageSize : options.batch;
  const histogram = new LatencyHistogram();
  const errors: Record<string, number> = {};
  let okIncrements = 0;
  let calls = 0;
  let countersRead = 0;
  let emptyReads = 0;
  const startedMs = monotonicNowMs();
  const startedCpu = process.cpuUsage();
  const endMs = startedMs + options.durationMs;
  // Each loop paces itself when a rate is set: its share of the target.
  const loopIntervalMs =
    options.ratePerSec > 0 ? (options.concurrency * options.procs * (page ? 1 : options.batch) * 1000) / options.ratePerSec : 0;
  const progressTimer = onProgress
    ? setInterval(
        () =>
          onProgress(
            page ? countersRead : okIncrements,
            Object.values(errors).reduce((a, b) => a + b, 0),
            histogram.quantileMs(0.99),
          ),
        1_000,
      )
    : undefined;
  const key = options.keyed ? undefined : null;
  const nameOf = headNames(names, options.counters);
  await Promise.all(
    Array.from({ length: options.concurrency }, async (_, loop) => {
      // Each loop's call reuses its arrays and item objects: the client is done with them once the call settles.
      const indexes = new Int32Array(itemsPerCall);
      const counters: string[] = new Array<string>(itemsPerCall).fill('');
      const items: IncrementItem[] = Array.from({ length: page ? 0 : itemsPerCall }, () => ({
        counter: '',
        amount: 1,
        idempotencyKey: key,
      }));
      for (let sent = 0; ; sent++) {
        let callStartMs = await untilDue({ startedMs, loopIntervalMs, concurrency: options.concurrency }, loop, sent);
        if (monotonicNowMs() >= endMs) return;
        for (let position = 0; position < itemsPerCall; position++) {
          const index = pick();
          indexes[position] = index;
          const counter = nameOf(index);
          if (page) counters[position] = counter;
          else items[position]!.counter = counter;
        }
        if (loopIntervalMs === 0) callStartMs = monotonicNowMs();
        try {
          if (page) {
            for (const read of await client.readMany(counters)) if (read.total === 0n) emptyReads++;
            countersRead += counters.length;
          } else {
            if (options.batch === 1 && !options.stream) await client.increment(items[0]!.counter, 1, { idempotencyKey: key });
            else await client.incrementBatch(items);
            okIncrements += itemsPerCall;
            for (const index of indexes) tallies.add(index, 1, true);
          }
          histogram.record((monotonicNowMs() - callStartMs) * 1000);
        } catch (error) {
          const code = error instanceof TallyError ? error.code : 'internal';
          errors[code] = (errors[code] ?? 0) + 1;
          // A failed call may or may not have applied.
          if (!page) for (const index of indexes) tallies.add(index, 1, false);
        }
        calls++;
      }
    }),
  );
  const cpu = process.cpuUsage(startedCpu);
  clearInterval(progressTimer);
  client.close();
  return {
    okIncrements,
    calls,
    errors,
    histogram: histogram.counts,
    maxMicros: histogram.maxMicros,
    okBySlot: Array.from(tallies.ok),
    unknownBySlot: Array.from(tallies.unknown),
    countersRead,
    emptyReads,
    elapsedMs: Math.round(monotonicNowMs() - startedMs),
    cpuMicros: cpu.user + cpu.system,
  };
}

/** Population indexes whose names are kept: the Zipf head, where most draws land (about 80% at 1M counters, s = 0.99). */
const headNamesKept = 65_536;

/** A counter's name by population index, the head's built once (a name per increment is the loop's largest allocation). */
function headNames(names: CounterNames, population: number): (index: number) => string {
  const kept: (string | undefined)[] = new Array(Math.min(population, headNamesKept));
  const hot = names.name(hotIndex);
  return (index) => {
    if (index === hotIndex) return hot;
    if (index < 0 || index >= kept.length) return names.name(index);
    return (kept[index] ??= names.name(index));
  };
}

// Workers run the CLI as this process does: compiled, through bin/tally.mjs
// (which loads dist/cli/cli.js), or from the TypeScript source under tsx
// (tests and development), so a test never drives a stale build.
const benchPath = fileURLToPath(import.meta.url);
const workerEntryArgs = benchPath.endsWith('.ts')
  ? ['--import', 'tsx', '--no-deprecation', path.join(path.dirname(benchPath), '..', 'cli.ts')]
  : [path.resolve(path.dirname(benchPath), '../../../bin/tally.mjs')];

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
      '--counters',
      String(options.counters),
      '--seed',
      String(options.seed),
      '--process-index',
      String(index),
      '--page-size',
      String(options.pageSize),
      '--no-prefill',
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
      ...(options.workload === 'zipf' ? ['--zipf-s', String(options.zipfExponent)] : []),
      ...(options.keyed ? ['--keyed'] : []),
      ...(options.coalesce ? ['--coalesce'] : []),
      ...(options.stream ? ['--stream'] : []),
      ...(options.unaryBatches ? ['--unary-batches'] : []),
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

/** The check sample's slots a workload can write: the hot counter's, the population's, or both (mix). */
function checkedSlots(options: BenchOptions, sample: CheckSample): number[] {
  const slots = [];
  if (options.workload === 'hot' || options.workload === 'mix') slots.push(0);
  if (options.workload !== 'hot') for (let slot = 1; slot < sample.size; slot++) slots.push(slot);
  return slots;
}

/** Each checked counter's exact total now must lie in [baseline + acknowledged, baseline + acknowledged + maybe applied]. */
async function checkTotals(
  client: TallyClient,
  options: BenchOptions,
  sample: CheckSample,
  baseline: bigint[],
  results: WorkerResult[],
): Promise<BenchCheck> {
  const slots = checkedSlots(options, sample);
  const names = new CounterNames(options.runId);
  const counters = slots.map((slot) => names.name(sample.indexOf(slot)));
  const totals = await readTotals(client, counters);
  const failures: string[] = [];
  slots.forEach((slot, at) => {
    const low = baseline[at]! + BigInt(results.reduce((sum, result) => sum + result.okBySlot[slot]!, 0));
    const unknown = BigInt(results.reduce((sum, result) => sum + result.unknownBySlot[slot]!, 0));
    const total = totals[at]!;
    if (total < low || total > low + unknown)
      failures.push(
        `${counters[at]}: total ${total}, before the run ${baseline[at]}, acknowledged ${low - baseline[at]!}, unknown ${unknown}`,
      );
  });
  return {
    counters: counters.length,
    passed: failures.length === 0,
    failures: failures.slice(0, 10),
    sampled: options.workload !== 'hot' && !sample.whole,
  };
}

/** Page workload: every counter read should exist (the population holds at least 1 in each). */
function checkPages(results: WorkerResult[]): BenchCheck {
  const read = results.reduce((sum, result) => sum + result.countersRead, 0);
  const empty = results.reduce((sum, result) => sum + result.emptyReads, 0);
  return {
    counters: read,
    passed: empty === 0,
    failures: empty === 0 ? [] : [`${empty} of ${read} reads found a total of 0: is the population created?`],
    sampled: false,
  };
}

export async function runBench(
  options: BenchOptions,
  onProgress?: Progress,
  onCreation?: (created: number) => void,
): Promise<BenchSummary> {
  const client = createTallyClient({ addresses: options.router.split(','), deadlineMs: 30_000, ...options.security });
  try {
    let creation: PopulationCreation | undefined;
    if (options.prefill && usesPopulation(options.workload))
      creation = await createPopulation(client, new CounterNames(options.runId), options.counters, creationCallsInFlight, onCreation);
    if (options.prefillOnly) return summarize(options, [], creation, undefined);
    const sample = new CheckSample(options.counters);
    const names = new CounterNames(options.runId);
    const checked = options.check && options.workload !== 'page';
    const baseline = checked
      ? await readTotals(
          client,
          checkedSlots(options, sample).map((slot) => names.name(sample.indexOf(slot))),
        )
      : [];
    await handOver(options.phaseFile, 'ready', 'run');
    const results = options.procs === 1 ? [await runWorker(options, onProgress)] : await runProcesses(options, onProgress);
    await handOver(options.phaseFile, 'done', 'check');
    let check: BenchCheck | undefined;
    if (options.check)
      check = options.workload === 'page' ? checkPages(results) : await checkTotals(client, options, sample, baseline, results);
    return summarize(options, results, creation, check);
  } finally {
    client.close();
  }
}

/** How long a bench waits for a measuring script's answer before it goes on. */
const phaseWaitMs = 60_000;

/** Writes a phase to the file and waits (bounded) until the measuring script writes the answer. */
async function handOver(phaseFile: string | undefined, phase: string, answer: string): Promise<void> {
  if (phaseFile === undefined) return;
  fs.writeFileSync(phaseFile, `${phase}\n`);
  const untilMs = monotonicNowMs() + phaseWaitMs;
  while (monotonicNowMs() < untilMs) {
    if (fs.readFileSync(phaseFile, 'utf8').trim() === answer) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  process.stderr.write(`bench: no "${answer}" in ${phaseFile} within ${phaseWaitMs / 1000} s; going on\n`);
}

/** Creation calls in flight: enough to keep the router busy, few enough to leave the machine to it. */
const creationCallsInFlight = 4;

function summarize(
  options: BenchOptions,
  results: WorkerResult[],
  creation: PopulationCreation | undefined,
  check: BenchCheck | undefined,
): BenchSummary {
  const histogram = new LatencyHistogram();
  for (const result of results) {
    const other = new LatencyHistogram(result.histogram);
    other.maxMicros = result.maxMicros;
    histogram.merge(other);
  }
  const errors: Record<string, number> = {};
  for (const result of results) for (const [code, count] of Object.entries(result.errors)) errors[code] = (errors[code] ?? 0) + count;
  const elapsedMs = Math.max(1, ...results.map((result) => result.elapsedMs));
  const okIncrements = results.reduce((sum, result) => sum + result.okIncrements, 0);
  const calls = results.reduce((sum, result) => sum + result.calls, 0);
  const countersRead = results.reduce((sum, result) => sum + result.countersRead, 0);
  return {
    runId: options.runId,
    workload: options.workload,
    counters: options.counters,
    zipfExponent: options.zipfExponent,
    seed: options.seed,
    keyed: options.keyed,
    batch: options.batch,
    pageSize: options.pageSize,
    coalesce: options.coalesce,
    stream: options.stream,
    unaryBatches: options.unaryBatches,
    concurrency: options.concurrency,
    procs: options.procs,
    durationMs: results.length === 0 ? 0 : elapsedMs,
    incrementsPerSec: Math.round((okIncrements * 1000) / elapsedMs),
    callsPerSec: Math.round((calls * 1000) / elapsedMs),
    okIncrements,
    calls,
    loadGeneratorCpuSeconds: results.reduce((sum, result) => sum + result.cpuMicros, 0) / 1e6,
    countersReadPerSec: Math.round((countersRead * 1000) / elapsedMs),
    errors,
    latencyMs: {
      p50: histogram.quantileMs(0.5),
      p99: histogram.quantileMs(0.99),
      p999: histogram.quantileMs(0.999),
      max: histogram.maxMicros / 1000,
    },
    creation,
    check,
  };
}
