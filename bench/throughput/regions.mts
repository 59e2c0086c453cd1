// What a peer link costs one region at its maximum, and how fast a peer catches
// up after the link was cut. Two regions (eu, us), each a router and one node
// pair, every process a host in a network namespace (test/helpers/regions:
// root, iproute2, iptables). eu takes the Zipf platform load of `tally bench
// --workload zipf` (run in eu's client host); us is idle.
//   sudo node --import tsx bench/throughput/regions.mts [--runs 3] [--seconds 15] [--counters 100000]
//     [--concurrency 16] [--procs 2] [--batch 100] [--cut-seconds 60] [--cut-runs 1]
//     [--modes alone,linked] [--json]
//   sudo node --import tsx bench/throughput/regions.mts --idle-lag-counters 100000
// The second form, without load: regions holding that many counters, the
// time from one increment acknowledged in eu until us's global read shows it.
// Runs alternate: A = both regions up with no region flags (no link); B = the
// same regions linked. For each: eu's processes' CPU (router and both nodes,
// from /proc, over the bench's measured window alone) per acknowledged
// increment, throughput, and in B the staleness of eu's part in us's global
// reads of the Zipf head counter, sampled every 100 ms (the component lag a
// reader in us sees). Then --cut-runs linked runs where the link is cut both
// ways (iptables DROP) for --cut-seconds under the same load: the time from
// the heal until us's view of the head counter is under 1 s stale again.
// Linked and cut runs first wait, after the prefill, until us holds a
// component of every prefilled counter (the one-time initial sync of counters
// us has never seen, reported on its own with its rate): the window then
// measures the steady state, a peer keeping up with counters it knows.
// Medians over runs; one JSON line with --json.
import assert from 'node:assert';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CounterNames } from '../../src/cli/bench/index.ts';
import { repoRoot } from '../../src/cluster/managed-process.ts';
import { RegionCluster } from '../../test/helpers/region-hosts/index.ts';
import { pause } from '../../test/helpers/pause.ts';

interface Options {
  runs: number;
  seconds: number;
  counters: number;
  concurrency: number;
  procs: number;
  batch: number;
  cutSeconds: number;
  cutRuns: number;
  /** Which of the alternating runs to make: alone, linked or both. */
  modes: boolean[];
  /** Instead of the load runs: idle regions with this many counters, the time one increment in eu takes to show in us's global read (4 tries). */
  idleLagCounters: number | undefined;
  json: boolean;
}

function parseOptions(argv: string[]): Options {
  const flags = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const name = argv[i]!.replace(/^--/, '');
    if (name === 'json') flags.set(name, 'true');
    else flags.set(name, argv[++i] ?? assert.fail(`--${name} needs a value`));
  }
  const whole = (name: string, fallback: number): number => {
    const value = flags.has(name) ? Number(flags.get(name)) : fallback;
    assert(Number.isInteger(value) && value >= 0, `--${name} must be a whole number`);
    return value;
  };
  return {
    runs: whole('runs', 3),
    seconds: whole('seconds', 15),
    counters: whole('counters', 100_000),
    concurrency: whole('concurrency', 16),
    procs: whole('procs', 2),
    batch: whole('batch', 100),
    cutSeconds: whole('cut-seconds', 60),
    cutRuns: whole('cut-runs', 1),
    modes: (flags.get('modes') ?? 'alone,linked').split(',').map((mode) => {
      assert(mode === 'alone' || mode === 'linked', `--modes: alone, linked or both, got ${mode}`);
      return mode === 'linked';
    }),
    idleLagCounters: flags.has('idle-lag-counters') ? whole('idle-lag-counters', 0) : undefined,
    json: flags.has('json'),
  };
}

const clockTicksPerSec = 100;

/** How long after the heal the cut run waits for us's view of eu to be under 1 s stale again. */
const catchUpLimitSeconds = 30;

function describeBootstrap(bootstrap: Bootstrap | undefined): string {
  if (bootstrap === undefined) return '';
  return (
    `; initial sync: us held all ${bootstrap.counters.toLocaleString('en-US')} counters ${(bootstrap.sinceStartMs / 1000).toFixed(1)} s after the prefill began ` +
    `(${(bootstrap.sincePrefillMs / 1000).toFixed(1)} s after it ended, ${Math.round(bootstrapRate(bootstrap)).toLocaleString('en-US')} counters/s)`
  );
}

/** Counters per second of the initial sync, timed from the prefill's start (eu publishes while it creates). */
function bootstrapRate(bootstrap: Bootstrap): number {
  return (1000 * bootstrap.counters) / bootstrap.sinceStartMs;
}

/** User plus system CPU seconds of one process so far (/proc/<pid>/stat utime and stime). */
function cpuSeconds(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / clockTicksPerSec;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

function percentile(values: number[], fraction: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))] ?? Number.NaN;
}

/** `tally bench` inside a host's namespace; with a phase file, the measuring side answers its hand-overs. */
function tallyBench(namespace: string, args: string[]): { done: Promise<Record<string, unknown>> } {
  const child = spawn(
    'ip',
    ['netns', 'exec', namespace, process.execPath, '--import', 'tsx', 'src/cli/cli.ts', 'bench', ...args, '--json'],
    {
      cwd: repoRoot,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return {
    done: new Promise((resolve, reject) =>
      child.once('exit', (code) => {
        if (code !== 0) reject(new Error(`tally bench exited ${code}: ${stderr.slice(-500)}`));
        else resolve(JSON.parse(stdout.trim().split('\n').pop()!) as Record<string, unknown>);
      }),
    ),
  };
}

async function awaitPhase(file: string, phase: string, timeoutMs: number): Promise<void> {
  const untilMs = Date.now() + timeoutMs;
  while (fs.readFileSync(file, 'utf8').trim() !== phase) {
    if (Date.now() > untilMs) throw new Error(`no "${phase}" in ${file} within ${timeoutMs} ms`);
    await pause(20);
  }
}

interface RunResult {
  linked: boolean;
  incrementsPerSec: number;
  okIncrements: number;
  euCpuSeconds: number;
  euCpuUsPerIncrement: number;
  /** Linked runs: staleness of eu's part in us's global reads of the head counter, ms. */
  stalenessMs: number[];
  /** Linked runs: the initial sync, before the window. */
  bootstrap: Bootstrap | undefined;
}

/** Samples us's global read of a counter every 100 ms: eu's part's staleness (or undefined while absent). */
function sampleStaleness(regions: RegionCluster, counter: string): { stop: () => Promise<number[]>; latest: () => number | undefined } {
  const samples: number[] = [];
  let latest: number | undefined;
  let running = true;
  const loop = (async () => {
    while (running) {
      const read = await regions
        .region('us')
        .client.globalRead(0, counter, { deadlineMs: 1_000 })
        .catch(() => undefined);
      const part = read?.regions.find((one) => one.region === 'eu');
      latest = part?.stalenessMs;
      if (part !== undefined) samples.push(part.stalenessMs);
      await pause(100);
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      return samples;
    },
    latest: () => latest,
  };
}

async function withRegions<T>(linked: boolean, body: (regions: RegionCluster) => Promise<T>): Promise<T> {
  const regions = await RegionCluster.start({ regions: ['eu', 'us'], linked });
  try {
    return await body(regions);
  } finally {
    await regions.stop({ removeData: true });
  }
}

function benchArgs(options: Options, regions: RegionCluster, runId: string, seconds: number): string[] {
  return [
    '--router',
    regions.routerAddress('eu'),
    '--workload',
    'zipf',
    '--counters',
    String(options.counters),
    '--batch',
    String(options.batch),
    '--concurrency',
    String(options.concurrency),
    '--procs',
    String(options.procs),
    '--seconds',
    String(seconds),
    '--run-id',
    runId,
  ];
}

/** The one-time initial sync: us learning eu's prefilled counters, none of which it has seen. */
interface Bootstrap {
  counters: number;
  /** From the prefill's start (eu's publisher ships while eu creates) until us holds every counter's component. */
  sinceStartMs: number;
  /** From the prefill's end until then. */
  sincePrefillMs: number;
}

async function prefill(options: Options, regions: RegionCluster, runId: string, linked: boolean): Promise<Bootstrap | undefined> {
  const namespace = regions.region('eu').client.process.host.namespace;
  const startedMs = performance.now();
  await tallyBench(namespace, [...benchArgs(options, regions, runId, 1), '--prefill-only']).done;
  const prefilledMs = performance.now();
  // Polled from now, alongside the pause below, so the time it reports is when us got there.
  const bootstrapped = linked ? awaitBootstrap(options, regions, 300_000) : undefined;
  bootstrapped?.catch(() => undefined);
  // us reads the head counter globally: it must exist in us too (us's own part, 1, is constant).
  const created = await regions.region('us').client.increment(0, new CounterNames(runId).name(0), 1n, {
    key: `${runId}-head`,
    deadlineMs: 20_000,
  });
  assert.equal(created.outcome, 'ok', `us could not create the head counter: ${created.error}`);
  // The follower and (linked) the peer take in the creation before the window.
  await pause(3_000);
  if (bootstrapped === undefined) return undefined;
  // The measured window is the steady state: us already holds a component of every counter, so the lag and
  // the catch-up measured in it are of counters us knows, and the initial sync is reported on its own.
  const doneMs = await bootstrapped;
  return { counters: options.counters, sinceStartMs: doneMs - startedMs, sincePrefillMs: doneMs - prefilledMs };
}

/** Waits until us holds every prefilled counter and eu has nothing unacknowledged for us; returns when (performance.now()). */
async function awaitBootstrap(options: Options, regions: RegionCluster, timeoutMs: number): Promise<number> {
  type Status = { counters?: number; peerRegions?: { region: string; componentsPending: string | number }[] };
  const untilMs = performance.now() + timeoutMs;
  for (;;) {
    const [usStatus, euStatus] = (await Promise.all([
      regions
        .region('us')
        .client.status(0)
        .catch(() => undefined),
      regions
        .region('eu')
        .client.status(0)
        .catch(() => undefined),
    ])) as (Status | undefined)[];
    const pending = euStatus?.peerRegions?.find((peer) => peer.region === 'us')?.componentsPending;
    if ((usStatus?.counters ?? 0) >= options.counters && pending !== undefined && Number(pending) === 0) return performance.now();
    if (performance.now() > untilMs)
      throw new Error(
        `us did not learn eu's ${options.counters} counters within ${timeoutMs} ms (us holds ${usStatus?.counters}, ${pending} pending)`,
      );
    await pause(100);
  }
}

async function measuredRun(options: Options, linked: boolean, index: number): Promise<RunResult> {
  return withRegions(linked, async (regions) => {
    const runId = `regions${process.pid}r${index}`;
    const bootstrap = await prefill(options, regions, runId, linked);
    const eu = regions.region('eu');
    const pids = [eu.router, ...eu.nodes].map((one) => one.pid!);
    const phaseFile = path.join(regions.dataDir, 'phase');
    fs.writeFileSync(phaseFile, '');
    const bench = tallyBench(eu.client.process.host.namespace, [
      ...benchArgs(options, regions, runId, options.seconds),
      '--no-prefill',
      '--phase-file',
      phaseFile,
    ]);
    await awaitPhase(phaseFile, 'ready', 120_000);
    const sampler = linked ? sampleStaleness(regions, new CounterNames(runId).name(0)) : undefined;
    const cpuBefore = pids.map(cpuSeconds);
    fs.writeFileSync(phaseFile, 'run\n');
    await awaitPhase(phaseFile, 'done', (options.seconds + 60) * 1000);
    const cpuAfter = pids.map(cpuSeconds);
    fs.writeFileSync(phaseFile, 'check\n');
    const stalenessMs = (await sampler?.stop()) ?? [];
    const summary = await bench.done;
    const euCpuSeconds = cpuAfter.reduce((sum, after, i) => sum + after - cpuBefore[i]!, 0);
    const okIncrements = summary.okIncrements as number;
    return {
      linked,
      incrementsPerSec: summary.incrementsPerSec as number,
      okIncrements,
      euCpuSeconds,
      euCpuUsPerIncrement: (1e6 * euCpuSeconds) / okIncrements,
      stalenessMs,
      bootstrap,
    };
  });
}

interface CutResult {
  cutSeconds: number;
  /** From the heal until us's view of the head counter is under 1 s stale. */
  catchUpMs: number;
  stalenessAtHealMs: number | undefined;
  pendingAtHeal: number | undefined;
  bootstrap: Bootstrap | undefined;
}

async function cutRun(options: Options, index: number): Promise<CutResult> {
  return withRegions(true, async (regions) => {
    const runId = `regionscut${process.pid}r${index}`;
    const bootstrap = await prefill(options, regions, runId, true);
    const eu = regions.region('eu');
    const warmSeconds = 10;
    const bench = tallyBench(eu.client.process.host.namespace, [
      ...benchArgs(options, regions, runId, warmSeconds + options.cutSeconds + catchUpLimitSeconds),
      '--no-check',
    ]);
    const sampler = sampleStaleness(regions, new CounterNames(runId).name(0));
    await pause(warmSeconds * 1000);
    regions.cut('eu-us', 'eu', 'us');
    await pause(options.cutSeconds * 1000);
    const status = (await eu.client.status(0).catch(() => undefined)) as
      { peerRegions?: { region: string; componentsPending: string | number }[] } | undefined;
    const pendingAtHeal = status?.peerRegions?.find((peer) => peer.region === 'us')?.componentsPending;
    const stalenessAtHealMs = sampler.latest();
    regions.heal('eu-us');
    const healedMs = performance.now();
    let catchUpMs = Number.NaN;
    while (performance.now() - healedMs < catchUpLimitSeconds * 1000) {
      const latest = sampler.latest();
      // A sample taken after the heal, under 1 s stale.
      if (performance.now() - healedMs > 150 && latest !== undefined && latest < 1_000) {
        catchUpMs = performance.now() - healedMs;
        break;
      }
      await pause(50);
    }
    await sampler.stop();
    await bench.done.catch(() => undefined);
    return {
      cutSeconds: options.cutSeconds,
      catchUpMs,
      stalenessAtHealMs,
      pendingAtHeal: pendingAtHeal === undefined ? undefined : Number(pendingAtHeal),
      bootstrap,
    };
  });
}

/** Idle linked regions holding `counters` counters: from an increment acknowledged in eu until us's global read shows it, 4 times. */
async function idleLag(options: Options, counters: number): Promise<number[]> {
  return withRegions(true, async (regions) => {
    const runId = `regionsidle${process.pid}`;
    if (counters > 0) await prefill({ ...options, counters }, regions, runId, false);
    const counter = new CounterNames(runId).name(0);
    const eu = regions.region('eu');
    const us = regions.region('us');
    await us.client.increment(0, counter, 1n, { key: `${runId}-us`, deadlineMs: 20_000 });
    let euTotal = (await eu.client.read(0, counter, { deadlineMs: 20_000 })).total ?? 0n;
    const seenAfterMs: number[] = [];
    for (let attempt = 0; attempt < 4; attempt++) {
      const increment = await eu.client.increment(0, counter, 1n, { key: `${runId}-eu-${attempt}`, deadlineMs: 20_000 });
      assert.equal(increment.outcome, 'ok');
      euTotal += 1n;
      const startMs = performance.now();
      let seenMs = Number.NaN;
      while (performance.now() - startMs < 120_000) {
        const read = await us.client.globalRead(0, counter, { deadlineMs: 10_000 }).catch(() => undefined);
        if (read?.regions.find((part) => part.region === 'eu')?.total === euTotal) {
          seenMs = performance.now() - startMs;
          break;
        }
        await pause(50);
      }
      seenAfterMs.push(seenMs);
    }
    return seenAfterMs;
  });
}

const options = parseOptions(process.argv.slice(2));
if (options.idleLagCounters !== undefined) {
  const seen = await idleLag(options, options.idleLagCounters);
  console.log(
    `idle, ${options.idleLagCounters.toLocaleString('en-US')} counters: an increment in eu shows in us's global read after ${seen.map((ms) => (Number.isNaN(ms) ? '> 120 s' : `${ms.toFixed(0)} ms`)).join(', ')}`,
  );
  process.exit(0);
}
const log = (line: string): void => {
  if (!options.json) console.log(line);
};
log(
  `regions bench: ${os.cpus().length} cores, Zipf over ${options.counters.toLocaleString('en-US')} counters, batch ${options.batch}, ` +
    `concurrency ${options.concurrency} x ${options.procs} procs, ${options.seconds} s windows, ${options.runs} runs each`,
);
const runs: RunResult[] = [];
for (let index = 0; index < options.runs; index++) {
  for (const linked of options.modes) {
    const run = await measuredRun(options, linked, runs.length);
    runs.push(run);
    log(
      `  ${linked ? 'linked' : 'alone '}: ${run.incrementsPerSec.toLocaleString('en-US')} increments/s, eu CPU ${run.euCpuSeconds.toFixed(2)} s = ` +
        `${run.euCpuUsPerIncrement.toFixed(1)} us/increment` +
        (linked
          ? `, us sees eu's head counter p50 ${percentile(run.stalenessMs, 0.5)} ms, p99 ${percentile(run.stalenessMs, 0.99)} ms stale (${run.stalenessMs.length} samples)`
          : '') +
        describeBootstrap(run.bootstrap),
    );
  }
}
const cuts: CutResult[] = [];
for (let index = 0; index < options.cutRuns; index++) {
  const cut = await cutRun(options, index);
  cuts.push(cut);
  log(
    `  cut ${cut.cutSeconds} s: ${Number.isNaN(cut.catchUpMs) ? `not caught up within ${catchUpLimitSeconds} s of the heal` : `caught up ${cut.catchUpMs.toFixed(0)} ms after the heal`} (staleness at the heal ${cut.stalenessAtHealMs} ms, ${cut.pendingAtHeal} components pending)${describeBootstrap(cut.bootstrap)}`,
  );
}
const alone = runs.filter((run) => !run.linked);
const linked = runs.filter((run) => run.linked);
const summary = {
  cores: os.cpus().length,
  options,
  aloneIncrementsPerSec: median(alone.map((run) => run.incrementsPerSec)),
  linkedIncrementsPerSec: median(linked.map((run) => run.incrementsPerSec)),
  aloneCpuUsPerIncrement: median(alone.map((run) => run.euCpuUsPerIncrement)),
  linkedCpuUsPerIncrement: median(linked.map((run) => run.euCpuUsPerIncrement)),
  linkCpuShare: median(linked.map((run) => run.euCpuUsPerIncrement)) / median(alone.map((run) => run.euCpuUsPerIncrement)) - 1,
  stalenessP99Ms: linked.map((run) => percentile(run.stalenessMs, 0.99)),
  catchUpMs: cuts.map((cut) => cut.catchUpMs),
  bootstrapMs: [...linked, ...cuts].flatMap((one) => (one.bootstrap === undefined ? [] : [one.bootstrap.sinceStartMs])),
  runs,
  cuts,
};
if (options.json) console.log(JSON.stringify({ ...summary, runs: runs.map((run) => ({ ...run, stalenessMs: run.stalenessMs.length })) }));
else {
  log(
    `medians: alone ${summary.aloneIncrementsPerSec.toLocaleString('en-US')}/s at ${summary.aloneCpuUsPerIncrement.toFixed(1)} us, ` +
      `linked ${summary.linkedIncrementsPerSec.toLocaleString('en-US')}/s at ${summary.linkedCpuUsPerIncrement.toFixed(1)} us: ` +
      `the link adds ${(100 * summary.linkCpuShare).toFixed(1)}% CPU per increment (target <= 10%)`,
  );
  log(
    `component lag p99 per linked run: ${summary.stalenessP99Ms.join(', ')} ms (target <= 1000); catch-up after the cut: ${summary.catchUpMs.map((ms) => (Number.isNaN(ms) ? `over ${catchUpLimitSeconds} s` : `${ms.toFixed(0)} ms`)).join(', ')} (target <= 5000 ms)`,
  );
  log(
    `initial sync (before each window, not in the targets): ${summary.bootstrapMs.map((ms) => `${(ms / 1000).toFixed(1)} s`).join(', ')} for ${options.counters.toLocaleString('en-US')} counters new to us`,
  );
}
