// Costs of the counter kinds, measured on this machine:
//   node --expose-gc --import tsx bench/throughput/kinds.mts [--seconds 8] [--runs 3] [--seeds 5]
//     [--cluster-members 200000] [--fill-seconds 60]
// 1. HLL accuracy (relative error at 10 .. 1,000,000 members) and bytes per sketch, in-process;
// 2. AddDistinct members/s and calls/s vs unary Increment calls/s, same run, 1 pair in sync;
// 3. SetMember flips/s and latency on one hot membership counter (16 partitions), 1 pair in sync;
// 4. bytes per member: MemberSet in-process (dense, random 64-bit, random 32-bit ids) and a node's
//    tally_member_set_bytes after dense ids set through the cluster;
// 5. CACHED and EXACT read latency at a paced 1,000 reads/s, 2 pairs, one 8-shard counter,
//    next to a bare grpc-js echo at the same rate (the floor for any gRPC call here).
// Prints one JSON line per measurement (medians over --runs), then a summary line.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance, monitorEventLoopDelay } from 'node:perf_hooks';
import { spawn } from 'node:child_process';
import * as grpc from '@grpc/grpc-js';
import roaring from 'roaring';
import { HllSketch, hllStandardError, loadMemberHasher } from '../../src/sketch/index.ts';
import { MemberSet, partitionOf } from '../../src/membership/index.ts';
import { LocalCluster } from '../../src/cluster/local-cluster.ts';
import { createTallyClient, type TallyClient } from '../../src/client/index.ts';
import { ShardNodeClient } from '../../src/common/index.ts';
import { waitFor } from '../../test/helpers/cluster.ts';

function flag(name: string, fallback: number): number {
  const index = process.argv.indexOf(`--${name}`);
  return index > 0 ? Number(process.argv[index + 1]) : fallback;
}
const seconds = flag('seconds', 8);
const runs = flag('runs', 3);
const seedCount = flag('seeds', 5);
/** Dense ids set through the cluster for the node's gauge (section 4); scaled to a million. */
const clusterMembers = flag('cluster-members', 200_000);
/** Longest time spent setting them; the gauge is read for however many were set. */
const fillSeconds = flag('fill-seconds', 60);
const sectionsIndex = process.argv.indexOf('--sections');
/** Which measurements to run, e.g. --sections 1,4 (2 and 3 share one cluster and run together). */
const sections = new Set((sectionsIndex > 0 ? process.argv[sectionsIndex + 1]! : '1,2,3,4,5').split(','));
const callers = 64;
const phaseMs = seconds * 1000;
const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with node --expose-gc');

const startedMs = Date.now();
const loadAverageAtStart = os.loadavg().map((value) => round(value, 1));
function emit(measurement: string, values: Record<string, unknown>): void {
  console.log(JSON.stringify({ measurement, ...values }));
}
function log(message: string): void {
  process.stderr.write(`[${((Date.now() - startedMs) / 1000).toFixed(0)} s, load ${os.loadavg()[0]!.toFixed(1)}] ${message}\n`);
}
function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}
/** Quantile of an ascending array (nearest rank). */
function quantile(sorted: Float64Array | number[], q: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
}
function round(value: number, digits = 0): number {
  const scale = 10 ** digits;
  return Math.round(value * scale) / scale;
}
/** Two collections with a pause between: dead ArrayBuffers' backing stores are freed after the first. */
async function settleMemory(): Promise<void> {
  gc!();
  await new Promise((resolve) => setTimeout(resolve, 50));
  gc!();
}
function sortedLatencies(latenciesMs: number[]): Float64Array {
  return Float64Array.from(latenciesMs).sort();
}

// ---------------------------------------------------------------- cluster helpers
interface RunningCluster {
  cluster: LocalCluster;
  client: TallyClient;
  dataDir: string;
  nodeMetricsPorts: number[];
  routerMetricsPort: number;
  stop(): Promise<void>;
}
async function startBenchCluster(pairCount: number): Promise<RunningCluster> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tally-kinds-'));
  const nodeCount = pairCount * 2;
  // Every port chosen by the kernel; each process reports its own.
  const cluster = new LocalCluster({
    pairCount,
    dataDir,
    host: '127.0.0.1',
    routerPort: 0,
    nodePorts: Array.from({ length: nodeCount }, () => 0),
    routerMetricsPort: 'any',
    nodeMetricsPorts: Array.from({ length: nodeCount }, () => 'any' as const),
  });
  await cluster.start();
  const nodeMetricsPorts = cluster.nodes.map((node) => node.metricsPort);
  const routerMetricsPort = cluster.routerMetricsPort;
  const client = createTallyClient({ address: cluster.routerAddress, deadlineMs: 30_000 });
  return {
    cluster,
    client,
    dataDir,
    nodeMetricsPorts,
    routerMetricsPort,
    async stop() {
      client.close();
      await cluster.stop('SIGKILL');
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
async function waitInSync(client: TallyClient, pairCount: number): Promise<void> {
  await waitFor(
    async () => {
      const nodes = (await client.clusterStatus()).nodes;
      return nodes.length === pairCount * 2 && nodes.every((node) => node.inSync);
    },
    { timeoutMs: 30_000, what: 'every pair in sync' },
  );
}
async function scrapeGauge(port: number, name: string): Promise<number> {
  const body = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const line = body.split('\n').find((candidate) => candidate.startsWith(`${name} `) || candidate.startsWith(`${name}{`));
  if (line === undefined) throw new Error(`metric ${name} not found on port ${port}`);
  return Number(line.slice(line.lastIndexOf(' ') + 1));
}

/** Cumulative bucket counts (le in seconds -> count) of one histogram series, e.g. the router's read latency. */
async function scrapeHistogram(port: number, name: string, label: string): Promise<Map<number, number>> {
  const body = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const buckets = new Map<number, number>();
  for (const line of body.split('\n')) {
    if (!line.startsWith(`${name}_bucket{`) || !line.includes(label)) continue;
    const le = /le="([^"]+)"/.exec(line)![1]!;
    buckets.set(le === '+Inf' ? Infinity : Number(le), Number(line.slice(line.lastIndexOf(' ') + 1)));
  }
  return buckets;
}

/** `callers` closed-loop callers, each running `call(caller, seq)` until the time is up. */
async function closedLoop(
  durationMs: number,
  concurrency: number,
  call: (caller: number, seq: number) => Promise<void>,
): Promise<{ calls: number; elapsedMs: number; latenciesMs: number[] }> {
  const untilMs = Date.now() + durationMs;
  const started = performance.now();
  const latenciesMs: number[] = [];
  let calls = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async (_, caller) => {
      for (let seq = 0; Date.now() < untilMs; seq++) {
        const callStarted = performance.now();
        await call(caller, seq);
        latenciesMs.push(performance.now() - callStarted);
        calls++;
      }
    }),
  );
  return { calls, elapsedMs: performance.now() - started, latenciesMs };
}

// ---------------------------------------------------------------- 1. HLL accuracy and sketch memory, pure
async function hllSection(): Promise<void> {
  log('1: HLL accuracy and sketch memory');
  const hasher = await loadMemberHasher();
  const encoder = new TextEncoder();
  const memberBytes = new Uint8Array(64);
  /** Fills a sketch with members "s<seed>:user:<i>" for i in [from, to), as the router hashes them. */
  function observeMembers(sketch: HllSketch, seed: number, from: number, to: number): void {
    for (let i = from; i < to; i++) {
      const { written } = encoder.encodeInto(`s${seed}:user:${i}`, memberBytes);
      const { index, rank } = hasher.registerOf(memberBytes.subarray(0, written));
      sketch.observe(index, rank);
    }
  }
  const cardinalities = [10, 1_000, 100_000, 1_000_000];
  const errorsByCardinality = new Map<number, number[]>(cardinalities.map((n) => [n, []]));
  const hashStartedMs = performance.now();
  let hashed = 0;
  for (let seed = 1; seed <= seedCount; seed++) {
    // One sketch per seed, grown through the cardinalities: each is a prefix of the next.
    const sketch = new HllSketch();
    let filled = 0;
    for (const n of cardinalities) {
      observeMembers(sketch, seed, filled, n);
      hashed += n - filled;
      filled = n;
      errorsByCardinality.get(n)!.push((sketch.estimate() - n) / n);
    }
  }
  const hashPerSec = hashed / ((performance.now() - hashStartedMs) / 1000);
  for (const n of cardinalities) {
    const errors = errorsByCardinality.get(n)!;
    const absolute = errors.map(Math.abs);
    emit('hll_error', {
      members: n,
      seeds: seedCount,
      medianAbsErrorPct: round(median(absolute) * 100, 3),
      worstAbsErrorPct: round(Math.max(...absolute) * 100, 3),
      signedErrorsPct: errors.map((error) => round(error * 100, 3)),
      standardErrorPct: round(hllStandardError * 100, 3),
    });
  }

  function sketchOf(n: number): HllSketch {
    const sketch = new HllSketch();
    observeMembers(sketch, 99, 0, n);
    return sketch;
  }
  let denseAtMembers = 0;
  {
    const sketch = new HllSketch();
    while (!sketch.isDense) observeMembers(sketch, 7, denseAtMembers, ++denseAtMembers);
  }
  /** Heap + ArrayBuffer bytes per sketch, copies of `sketch`: what memoryBytes leaves out (object headers). */
  async function measuredBytesPerSketch(sketch: HllSketch, count: number): Promise<number> {
    const serialized = sketch.serialize();
    await settleMemory();
    const before = process.memoryUsage();
    const keep: HllSketch[] = [];
    for (let i = 0; i < count; i++) keep.push(HllSketch.deserialize(serialized));
    await settleMemory();
    const after = process.memoryUsage();
    const bytes = after.heapUsed + after.arrayBuffers - before.heapUsed - before.arrayBuffers;
    return keep.length > 0 ? bytes / count : 0;
  }
  const sketchCases: [string, number][] = [
    ['empty', 0],
    ['100 members', 100],
    ['1,000 members', 1_000],
    ['dense (100,000 members)', 100_000],
  ];
  for (const [label, n] of sketchCases) {
    const sketch = sketchOf(n);
    emit('hll_memory', {
      sketch: label,
      dense: sketch.isDense,
      memoryBytes: sketch.memoryBytes(),
      serializedBytes: sketch.serialize().length,
      measuredBytes: round(await measuredBytesPerSketch(sketch, 2_000)),
    });
  }
  emit('hll_misc', { turnsDenseAtMembers: denseAtMembers, hashAndObservePerSec: round(hashPerSec) });
}

// ---------------------------------------------------------------- 2 + 3. AddDistinct and SetMember, one 1-pair cluster per run
async function throughputSection(): Promise<void> {
  const distinct100MembersPerSec: number[] = [];
  const distinct100CallsPerSec: number[] = [];
  const distinct1CallsPerSec: number[] = [];
  const incrementCallsPerSec: number[] = [];
  const distinct100P50: number[] = [];
  const distinct1P50: number[] = [];
  const incrementP50: number[] = [];
  const flipsPerSec: number[] = [];
  const flipCallsPerSec: number[] = [];
  const flipP50: number[] = [];
  const flipP99: number[] = [];
  const flipChangedShare: number[] = [];
  const memberReadsPerSec: number[] = [];
  const memberReadP50: number[] = [];
  const memberReadP99: number[] = [];
  const distinctEstimateErrorPct: number[] = [];
  const flipRangePerCaller = 1_000;

  for (let run = 0; run < runs; run++) {
    log(`2+3: run ${run + 1}/${runs}, 1-pair cluster`);
    const bench = await startBenchCluster(1);
    const { client } = bench;
    try {
      const totalCounter = 'bench:total';
      const distinctCounter = 'bench:distinct';
      const distinctSingleCounter = 'bench:distinct1';
      const post = 'post:1:likes';
      // Fixed shape for the whole run: one shard each, no heat-driven growth mid-phase.
      await client.increment(totalCounter, 1);
      await client.configure(totalCounter, { autoscale: false });
      await client.addDistinct(distinctCounter, ['warm']);
      await client.addDistinct(distinctSingleCounter, ['warm']);
      await client.setMember(post, 0n, true);
      await waitInSync(client, 1);

      let distinctMembersSent = 1;
      const phases: Record<string, () => Promise<void>> = {
        async distinct100() {
          const result = await closedLoop(phaseMs, callers, async (caller, seq) => {
            const members = Array.from({ length: 100 }, (_, item) => `r${run}:c${caller}:s${seq}:m${item}`);
            await client.addDistinct(distinctCounter, members);
          });
          distinctMembersSent += result.calls * 100;
          distinct100CallsPerSec.push((result.calls * 1000) / result.elapsedMs);
          distinct100MembersPerSec.push((result.calls * 100 * 1000) / result.elapsedMs);
          distinct100P50.push(quantile(sortedLatencies(result.latenciesMs), 0.5));
        },
        async distinct1() {
          const result = await closedLoop(phaseMs, callers, async (caller, seq) => {
            await client.addDistinct(distinctSingleCounter, [`r${run}:c${caller}:s${seq}`]);
          });
          distinct1CallsPerSec.push((result.calls * 1000) / result.elapsedMs);
          distinct1P50.push(quantile(sortedLatencies(result.latenciesMs), 0.5));
        },
        async increment() {
          // Unkeyed, like AddDistinct (which carries no idempotency key: adding twice is harmless).
          const result = await closedLoop(phaseMs, callers, async () => {
            await client.increment(totalCounter, 1, { idempotencyKey: null });
          });
          incrementCallsPerSec.push((result.calls * 1000) / result.elapsedMs);
          incrementP50.push(quantile(sortedLatencies(result.latenciesMs), 0.5));
        },
      };
      // Rotate the order so no phase always runs on the warmest (or most fragmented) processes.
      const order = ['distinct100', 'distinct1', 'increment'];
      for (let shift = 0; shift < run % order.length; shift++) order.push(order.shift()!);
      for (const phase of order) await phases[phase]!();
      const estimate = (await client.countDistinct(distinctCounter)).estimate;
      distinctEstimateErrorPct.push(((estimate - distinctMembersSent) / distinctMembersSent) * 100);
      log(
        `   distinct x100 ${distinct100MembersPerSec.at(-1)!.toFixed(0)} members/s (${distinct100CallsPerSec.at(-1)!.toFixed(0)} calls/s), ` +
          `distinct x1 ${distinct1CallsPerSec.at(-1)!.toFixed(0)} calls/s, increment ${incrementCallsPerSec.at(-1)!.toFixed(0)} calls/s; ` +
          `estimate ${estimate} of ${distinctMembersSent} sent`,
      );

      let changedFlips = 0;
      // 3: each caller owns members [base, base + range) and walks them, liking on even passes and
      // unliking on odd ones, so every call is a real flip (changed = true).
      const flips = await closedLoop(phaseMs, callers, async (caller, seq) => {
        const member = BigInt(1_000_000 + caller * flipRangePerCaller + (seq % flipRangePerCaller));
        const present = Math.floor(seq / flipRangePerCaller) % 2 === 0;
        const { changed } = await client.setMember(post, member, present);
        if (changed) changedFlips++;
      });
      const flipLatencies = sortedLatencies(flips.latenciesMs);
      flipCallsPerSec.push((flips.calls * 1000) / flips.elapsedMs);
      flipsPerSec.push((changedFlips * 1000) / flips.elapsedMs);
      flipChangedShare.push(changedFlips / flips.calls);
      flipP50.push(quantile(flipLatencies, 0.5));
      flipP99.push(quantile(flipLatencies, 0.99));
      // The second half of a SetMember: an exact read of the same 16-partition counter, same concurrency.
      const reads = await closedLoop(phaseMs / 2, callers, async () => {
        await client.read(post);
      });
      const readLatencies = sortedLatencies(reads.latenciesMs);
      memberReadsPerSec.push((reads.calls * 1000) / reads.elapsedMs);
      memberReadP50.push(quantile(readLatencies, 0.5));
      memberReadP99.push(quantile(readLatencies, 0.99));
      log(
        `   flips ${flipsPerSec.at(-1)!.toFixed(0)}/s (changed ${(flipChangedShare.at(-1)! * 100).toFixed(1)}%), p50 ${flipP50.at(-1)!.toFixed(1)} ms, p99 ${flipP99.at(-1)!.toFixed(1)} ms; ` +
          `exact reads of the post ${memberReadsPerSec.at(-1)!.toFixed(0)}/s, p50 ${memberReadP50.at(-1)!.toFixed(1)} ms`,
      );
    } finally {
      await bench.stop();
    }
  }
  emit('add_distinct', {
    pairs: 1,
    callers,
    seconds,
    runs,
    membersPerSecAt100PerCall: round(median(distinct100MembersPerSec)),
    callsPerSecAt100PerCall: round(median(distinct100CallsPerSec)),
    p50MsAt100PerCall: round(median(distinct100P50), 1),
    callsPerSecAt1PerCall: round(median(distinct1CallsPerSec)),
    p50MsAt1PerCall: round(median(distinct1P50), 1),
    incrementCallsPerSec: round(median(incrementCallsPerSec)),
    incrementP50Ms: round(median(incrementP50), 1),
    distinct1OverIncrement: round(median(distinct1CallsPerSec.map((value, index) => value / incrementCallsPerSec[index]!)), 2),
    distinct100CallsOverIncrement: round(median(distinct100CallsPerSec.map((value, index) => value / incrementCallsPerSec[index]!)), 2),
    estimateErrorPctAfterRun: distinctEstimateErrorPct.map((value) => round(value, 2)),
    runsMembersPerSec: distinct100MembersPerSec.map((value) => round(value)),
    runsDistinct1CallsPerSec: distinct1CallsPerSec.map((value) => round(value)),
    runsIncrementCallsPerSec: incrementCallsPerSec.map((value) => round(value)),
  });
  emit('set_member', {
    pairs: 1,
    partitions: 16,
    callers,
    seconds,
    runs,
    flipsPerSec: round(median(flipsPerSec)),
    callsPerSec: round(median(flipCallsPerSec)),
    changedShare: round(median(flipChangedShare), 3),
    p50Ms: round(median(flipP50), 1),
    p99Ms: round(median(flipP99), 1),
    exactReadOfPostPerSec: round(median(memberReadsPerSec)),
    exactReadOfPostP50Ms: round(median(memberReadP50), 1),
    exactReadOfPostP99Ms: round(median(memberReadP99), 1),
    runsFlipsPerSec: flipsPerSec.map((value) => round(value)),
  });
}

// ---------------------------------------------------------------- 4. bytes per member
async function memberMemorySection(): Promise<void> {
  log('4: MemberSet memory in-process');
  const million = 1_000_000;
  async function memberSetCase(label: string, makeMember: (index: number) => bigint): Promise<void> {
    const members = Array.from({ length: million }, (_, index) => makeMember(index));
    await settleMemory();
    const heapBefore = process.memoryUsage().heapUsed;
    const roaringBefore = roaring.getRoaringUsedMemory();
    const set = new MemberSet();
    for (const member of members) set.add(member);
    await settleMemory();
    const heapDelta = process.memoryUsage().heapUsed - heapBefore;
    const roaringDelta = roaring.getRoaringUsedMemory() - roaringBefore;
    const estimated = set.memoryBytes();
    const serializedBytes = set.serialize().length;
    // serialize() run-optimizes the bitmaps; the estimate after it is what a checkpointed node holds.
    const estimatedAfterSerialize = set.memoryBytes();
    // Random ids repeat now and then: per member means per distinct member held.
    const held = set.size;
    emit('member_set_memory', {
      ids: label,
      members: set.size,
      memoryBytesPerMember: round(estimated / held, 2),
      roaringMallocBytesPerMember: round(roaringDelta / held, 2),
      jsHeapBytesPerMember: round(heapDelta / held, 2),
      measuredBytesPerMember: round((roaringDelta + heapDelta) / held, 2),
      serializedBytesPerMember: round(serializedBytes / held, 2),
      memoryBytesPerMemberAfterSerialize: round(estimatedAfterSerialize / held, 2),
    });
    members.length = 0;
  }
  await memberSetCase('dense 1..1,000,000', (index) => BigInt(index + 1));
  {
    const bytes = randomBytes(8 * million);
    await memberSetCase('random 64-bit', (index) => bytes.readBigUInt64LE(index * 8));
  }
  {
    const bytes = randomBytes(4 * million);
    await memberSetCase('random < 2^32', (index) => BigInt(bytes.readUInt32LE(index * 4)));
  }
  // The node's view: dense ids split over 16 partitions by partitionOf, one MemberSet each.
  function partitionedDenseBytes(n: number): number {
    const sets = Array.from({ length: 16 }, () => new MemberSet());
    for (let member = 1n; member <= BigInt(n); member++) sets[partitionOf(member, 16)]!.add(member);
    return sets.reduce((total, set) => total + set.memoryBytes(), 0);
  }
  const partitionedMillionBytes = partitionedDenseBytes(million);
  emit('member_set_memory', {
    ids: 'dense 1..1,000,000 over 16 partitions (as on a node)',
    members: million,
    memoryBytesPerMember: round(partitionedMillionBytes / million, 2),
  });

  // Through the cluster: dense ids 1..N on one counter, up to clusterMembers or fillSeconds, whichever comes first.
  log(`4: up to ${clusterMembers} dense ids (at most ${fillSeconds} s) through a 1-pair cluster`);
  {
    const bench = await startBenchCluster(1);
    const { client } = bench;
    try {
      const post = 'post:dense:likes';
      await client.setMember(post, 1n, true);
      await waitInSync(client, 1);
      const primaryPort = bench.nodeMetricsPorts[0]!;
      const followerPort = bench.nodeMetricsPorts[1]!;
      const concurrency = 256;
      let next = 2;
      const fillUntilMs = Date.now() + fillSeconds * 1000;
      const bulkStarted = performance.now();
      await Promise.all(
        Array.from({ length: concurrency }, async () => {
          while (next <= clusterMembers && Date.now() < fillUntilMs) {
            const member = BigInt(next++);
            await client.setMember(post, member, true);
          }
        }),
      );
      const bulkSeconds = (performance.now() - bulkStarted) / 1000;
      const memberCount = Number((await client.read(post)).total);
      assert.equal(memberCount, next - 1, 'every id 1..N set exactly once');
      // The bitmaps agree with the stored count (no repair asked for).
      const rebuildStarted = performance.now();
      const rebuild = await client.rebuild(post);
      const rebuildMs = performance.now() - rebuildStarted;
      // The gauge is refreshed every second on each node: wait until both show the whole set.
      const modelBytes = partitionedDenseBytes(memberCount);
      const gauges = await waitFor(
        async () => {
          const primary = await scrapeGauge(primaryPort, 'tally_member_set_bytes');
          const follower = await scrapeGauge(followerPort, 'tally_member_set_bytes');
          return primary === modelBytes && follower === modelBytes ? { primary, follower } : undefined;
        },
        { timeoutMs: 10_000, intervalMs: 250, what: `tally_member_set_bytes = ${modelBytes} on both nodes` },
      ).catch(async () => ({
        primary: await scrapeGauge(primaryPort, 'tally_member_set_bytes'),
        follower: await scrapeGauge(followerPort, 'tally_member_set_bytes'),
      }));
      emit('member_set_memory_node', {
        ids: `dense 1..${memberCount}, one counter, 16 partitions`,
        members: memberCount,
        setMemberPerSecAt256Callers: round((memberCount - 1) / bulkSeconds),
        fillSeconds: round(bulkSeconds, 1),
        primaryMemberSetBytes: gauges.primary,
        followerMemberSetBytes: gauges.follower,
        inProcessModelBytes: modelBytes,
        bytesPerMember: round(gauges.primary / memberCount, 2),
        // Linear scaling overstates: the last, partial container of each partition weighs more per member at small N.
        linearlyScaledToMillionBytes: round((gauges.primary * million) / memberCount),
        modelScaledToMillionBytes: round(gauges.primary * (partitionedMillionBytes / modelBytes)),
        rebuildMembers: Number(rebuild.members),
        rebuildDrift: Number(rebuild.drift),
        rebuildMs: round(rebuildMs),
      });
    } finally {
      await bench.stop();
    }
  }
}

// ---------------------------------------------------------------- 5. paced reads, 2 pairs
interface PacedResult {
  p50: number;
  p99: number;
  p999: number;
  /** p99 counted from when the call was due, not sent: includes the client's own lateness. */
  p99FromSchedule: number;
  ratePerSec: number;
  errors: number;
  errorCodes: Record<string, number>;
  errorExample: string | undefined;
  stalenessP50: number;
  /** The bench process's own event-loop delay p99: a late callback inflates every latency above. */
  clientLoopDelayP99Ms: number;
  /** From the router's tally_read_latency_seconds histogram over the same phase. */
  router?: { reads: number; shareWithin1Ms: number; shareWithin2500Us: number; p99AtMostMs: number };
}

/** Open loop: calls are issued on a schedule, ratePerSec, whether or not earlier ones have answered. */
async function paced(ratePerSec: number, durationMs: number, call: () => Promise<number>): Promise<PacedResult> {
  const intervalMs = 1000 / ratePerSec;
  const latenciesMs: number[] = [];
  const fromScheduleMs: number[] = [];
  const stalenessMs: number[] = [];
  const pending: Promise<void>[] = [];
  let errors = 0;
  const errorCodes: Record<string, number> = {};
  let errorExample: string | undefined;
  const loopDelay = monitorEventLoopDelay({ resolution: 1 });
  loopDelay.enable();
  const started = performance.now();
  let issued = 0;
  for (;;) {
    const now = performance.now();
    if (now - started >= durationMs) break;
    const due = Math.floor((now - started) / intervalMs);
    while (issued <= due) {
      const scheduledAt = started + issued * intervalMs;
      const sentAt = performance.now();
      issued++;
      pending.push(
        call().then(
          (staleness) => {
            const doneAt = performance.now();
            latenciesMs.push(doneAt - sentAt);
            fromScheduleMs.push(doneAt - scheduledAt);
            stalenessMs.push(staleness);
          },
          (error: { code?: string; message?: string }) => {
            errors++;
            const code = error.code ?? 'unknown';
            errorCodes[code] = (errorCodes[code] ?? 0) + 1;
            errorExample ??= error.message;
          },
        ),
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  const elapsedMs = performance.now() - started;
  await Promise.all(pending);
  loopDelay.disable();
  const sorted = sortedLatencies(latenciesMs);
  return {
    p50: quantile(sorted, 0.5),
    p99: quantile(sorted, 0.99),
    p999: quantile(sorted, 0.999),
    p99FromSchedule: quantile(sortedLatencies(fromScheduleMs), 0.99),
    ratePerSec: (latenciesMs.length * 1000) / elapsedMs,
    errors,
    errorCodes,
    errorExample,
    stalenessP50: median(stalenessMs),
    clientLoopDelayP99Ms: loopDelay.percentile(99) / 1e6,
  };
}

/** bench/cpu/grpc-echo.mts as a separate process: the floor for one gRPC round trip on this machine. */
async function startEcho(): Promise<{ call: () => Promise<number>; stop(): void }> {
  // Port 0: the server prints "ready <port>" with the port it bound.
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(import.meta.dirname, '../cpu/grpc-echo.mts'), 'serve', '0'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout!.once('data', (chunk: Buffer) => resolve(Number(/^ready (\d+)/.exec(chunk.toString())?.[1])));
    child.once('exit', (code) => reject(new Error(`grpc-echo exited with ${code}`)));
  });
  assert(port > 0, 'grpc-echo reported no port');
  const client = new ShardNodeClient(`127.0.0.1:${port}`, grpc.credentials.createInsecure()) as unknown as {
    Status(request: object, callback: (error: unknown) => void): void;
    close(): void;
  };
  return {
    call: () => new Promise<number>((resolve, reject) => client.Status({}, (error) => (error ? reject(error) : resolve(0)))),
    stop() {
      client.close();
      child.kill('SIGKILL');
    },
  };
}

async function readLatencySection(): Promise<void> {
  const readRatePerSec = 1_000;
  const kinds = ['cached', 'exact', 'echo'] as const;
  const results: Record<(typeof kinds)[number], PacedResult[]> = { cached: [], exact: [], echo: [] };
  for (let run = 0; run < runs; run++) {
    log(`5: run ${run + 1}/${runs}, 2-pair cluster, ${readRatePerSec} calls/s`);
    const bench = await startBenchCluster(2);
    const echo = await startEcho();
    const { client } = bench;
    let background: Promise<void> | undefined;
    let stopBackground = false;
    try {
      const counter = 'page:views';
      await client.increment(counter, 1);
      await client.configure(counter, { autoscale: false });
      await client.setShards(counter, 8);
      await waitInSync(client, 2);
      // Light background load: ~100 increments/s, spread over the shards by the router.
      background = (async () => {
        while (!stopBackground) {
          await Promise.all(Array.from({ length: 5 }, () => client.increment(counter, 1)));
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      })();
      const calls = {
        cached: async () => (await client.read(counter, { consistency: 'cached' })).stalenessMs,
        exact: async () => (await client.read(counter, { consistency: 'exact' })).stalenessMs,
        echo: echo.call,
      };
      // Rotate the order so no kind always runs first (or right after the heaviest).
      const order = [...kinds];
      for (let shift = 0; shift < run % order.length; shift++) order.push(order.shift()!);
      for (const kind of order) {
        await paced(readRatePerSec, 1_000, calls[kind]); // warm-up: fills the cache, opens channels
        const series = `consistency="${kind}"`;
        const before = kind === 'echo' ? undefined : await scrapeHistogram(bench.routerMetricsPort, 'tally_read_latency_seconds', series);
        const result = await paced(readRatePerSec, phaseMs, calls[kind]);
        if (before !== undefined) {
          // The router's own timing of the read (handler only: no gRPC decode, encode or queueing).
          const after = await scrapeHistogram(bench.routerMetricsPort, 'tally_read_latency_seconds', series);
          const delta = new Map([...after].map(([le, count]) => [le, count - (before.get(le) ?? 0)]));
          const total = delta.get(Infinity) ?? 0;
          result.router = {
            reads: total,
            shareWithin1Ms: (delta.get(0.001) ?? 0) / total,
            shareWithin2500Us: (delta.get(0.0025) ?? 0) / total,
            p99AtMostMs:
              1000 * [...delta].filter(([, count]) => count >= 0.99 * total).reduce((lowest, [le]) => Math.min(lowest, le), Infinity),
          };
        }
        results[kind].push(result);
        log(
          `   ${kind}: p50 ${result.p50.toFixed(2)} ms, p99 ${result.p99.toFixed(2)} ms, p999 ${result.p999.toFixed(2)} ms, ${result.ratePerSec.toFixed(0)}/s, ${result.errors} errors, client loop delay p99 ${result.clientLoopDelayP99Ms.toFixed(1)} ms`,
        );
      }
    } finally {
      stopBackground = true;
      await background;
      echo.stop();
      await bench.stop();
    }
  }
  for (const kind of kinds) {
    const kindResults = results[kind];
    emit('read_latency', {
      call:
        kind === 'echo'
          ? 'bare grpc-js echo (floor), same run'
          : `Read ${kind.toUpperCase()}, 8 shards on 2 pairs, ~100 increments/s in the background`,
      targetPerSec: readRatePerSec,
      seconds,
      runs,
      achievedPerSec: round(median(kindResults.map((result) => result.ratePerSec))),
      p50Ms: round(median(kindResults.map((result) => result.p50)), 2),
      p99Ms: round(median(kindResults.map((result) => result.p99)), 2),
      p999Ms: round(median(kindResults.map((result) => result.p999)), 2),
      p99FromScheduleMs: round(median(kindResults.map((result) => result.p99FromSchedule)), 2),
      clientLoopDelayP99Ms: round(median(kindResults.map((result) => result.clientLoopDelayP99Ms)), 1),
      ...(kind === 'echo'
        ? {}
        : {
            routerShareWithin1Ms: round(median(kindResults.map((result) => result.router!.shareWithin1Ms)), 4),
            routerShareWithin2500Us: round(median(kindResults.map((result) => result.router!.shareWithin2500Us)), 4),
            routerP99AtMostMs: median(kindResults.map((result) => result.router!.p99AtMostMs)),
          }),
      stalenessP50Ms: round(median(kindResults.map((result) => result.stalenessP50))),
      errors: kindResults.reduce((total, result) => total + result.errors, 0),
      errorCodes: kindResults.map((result) => result.errorCodes),
      errorExample: kindResults.find((result) => result.errorExample !== undefined)?.errorExample,
      runsP50Ms: kindResults.map((result) => round(result.p50, 2)),
      runsP99Ms: kindResults.map((result) => round(result.p99, 2)),
    });
  }
}

if (sections.has('1')) await hllSection();
if (sections.has('2') || sections.has('3')) await throughputSection();
if (sections.has('4')) await memberMemorySection();
if (sections.has('5')) await readLatencySection();
emit('summary', {
  cores: os.cpus().length,
  node: process.version,
  loadAverageAtStart,
  loadAverageAtEnd: os.loadavg().map((value) => round(value, 1)),
  totalSeconds: round((Date.now() - startedMs) / 1000),
});
process.exit(0);
