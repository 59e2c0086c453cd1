// What the router allocates per increment under a Zipf batch load: a 1-pair
// cluster whose router preloads bench/cpu/heap-sampler.mjs; `--counters` counters
// are created first, a warm-up runs, then V8's sampling heap profiler counts
// every allocation (collected or not) in the router while `--batches`
// IncrementBatch calls of `--batch` unkeyed increments, Zipf(0.99) over the
// counters, run `--in-flight` at once through the public client. Prints bytes
// allocated (the sampler's estimate) per acknowledged increment, all of
// them and those outside the router's interval tasks (expiry sweep, heat
// tick, cache refresh: they run by the clock, not per increment), the same
// per stage of the write path (each allocation charged to the innermost
// stage on its stack: the request decoder, the API handlers, the write path,
// heat, the node sender, grpc-js, the rest), and the functions that
// allocate most. Run it at two batch sizes (--batch 100, --batch 1000): what
// a stage allocates per call falls tenfold per increment, what it allocates
// per increment stays.
//   node --import tsx bench/cpu/router-allocations.mts [--counters 100000] [--batches 2000] [--batch 100] [--in-flight 8] [--runs 3]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createTallyClient } from '../../src/client/index.ts';
import { waitFor } from '../../test/helpers/cluster.ts';
import { onePairCluster } from '../support/one-pair.mts';

function flag(name: string, fallback: number): number {
  const index = process.argv.indexOf(`--${name}`);
  return index > 0 ? Number(process.argv[index + 1]) : fallback;
}
const counterCount = flag('counters', 100_000);
const batchCount = flag('batches', 2_000);
const batch = flag('batch', 100);
const inFlight = flag('in-flight', 8);
const runs = flag('runs', 3);
const zipfExponent = 0.99;
const samplerPath = path.join(import.meta.dirname, 'heap-sampler.mjs');

interface ProfileNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  id: number;
  children: ProfileNode[];
}
interface Profile {
  head: ProfileNode;
  samples: { size: number; nodeId: number }[];
}

/** Counter index by rank: a Zipf(s) cumulative table searched by bisection. */
function zipfSampler(count: number, exponent: number): () => number {
  const cumulative = new Float64Array(count);
  let sum = 0;
  for (let rank = 0; rank < count; rank++) cumulative[rank] = sum += 1 / (rank + 1) ** exponent;
  return () => {
    const target = Math.random() * sum;
    let low = 0;
    let high = count - 1;
    while (low < high) {
      const middle = (low + high) >> 1;
      if (cumulative[middle]! < target) low = middle + 1;
      else high = middle;
    }
    return low;
  };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/** The write path's stages, by where their code lives; the first that matches a frame's URL names it. */
const stages: readonly (readonly [string, RegExp])[] = [
  ['decoder', /src\/wire\/codecs\/(counter-codec-read|proto-reader)\.ts$/],
  ['API handlers', /src\/router\/api\//],
  ['write path', /src\/router\/write\//],
  ['heat', /src\/router\/sizing\/heat(-admission)?\.ts$/],
  ['node sender', /src\/router\/nodes\/|src\/generated\//],
  ['grpc-js', /node_modules\/@grpc\//],
];
const otherStage = 'other';

function stageOf(url: string): string | undefined {
  for (const [name, pattern] of stages) if (pattern.test(url)) return name;
  return undefined;
}

interface Run {
  bytesPerIncrement: number;
  /** The same, less what the interval tasks allocated. */
  perCallBytesPerIncrement: number;
  byFunction: Map<string, number>;
  /** Bytes per increment outside interval tasks, by the innermost write-path stage on the stack. */
  byStage: Map<string, number>;
}

async function run(): Promise<Run> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tally-router-allocations-'));
  const sampleFile = path.join(dataDir, 'router.heapsample.json');
  const cluster = await onePairCluster(dataDir, {
    envOf: (name) =>
      name.startsWith('router') ? { TALLY_HEAP_SAMPLE_FILE: sampleFile, NODE_OPTIONS: `--import ${samplerPath}` } : undefined,
  });
  await cluster.start();
  const client = createTallyClient({ address: cluster.routerAddress });
  const routerPid = cluster.router.pid!;
  const names = Array.from({ length: counterCount }, (_, index) => `z:${index}:view`);
  const pick = zipfSampler(counterCount, zipfExponent);
  const load = async (calls: number): Promise<number> => {
    let next = 0;
    let acknowledged = 0;
    const worker = async (): Promise<void> => {
      while (next < calls) {
        next++;
        const items = [];
        for (let index = 0; index < batch; index++) items.push({ counter: names[pick()]!, amount: 1, idempotencyKey: null });
        const results = await client.incrementBatch(items);
        acknowledged += results.length;
      }
    };
    await Promise.all(Array.from({ length: inFlight }, worker));
    return acknowledged;
  };
  try {
    for (let first = 0; first < counterCount; first += 1_000)
      await client.incrementBatch(names.slice(first, first + 1_000).map((counter) => ({ counter, amount: 1, idempotencyKey: null })));
    await load(Math.max(200, batchCount / 4));
    process.kill(routerPid, 'SIGUSR2');
    // The sampler starts asynchronously in the router: a moment before the measured load.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const acknowledged = await load(batchCount);
    process.kill(routerPid, 'SIGUSR2');
    await waitFor(() => fs.existsSync(sampleFile) && fs.statSync(sampleFile).size > 0, { timeoutMs: 60_000 });
    const { profile } = JSON.parse(fs.readFileSync(sampleFile, 'utf8')) as { profile: Profile };
    const byFunction = new Map<string, number>();
    const byStage = new Map<string, number>();
    let bytes = 0;
    let backgroundBytes = 0;
    const walk = (node: ProfileNode, background: boolean, outerStage: string): void => {
      const { functionName, url } = node.callFrame;
      const inBackground = background || (functionName === 'runNow' && url.endsWith('interval-task.ts'));
      const stage = stageOf(url) ?? outerStage;
      if (inBackground) backgroundBytes += node.selfSize;
      else if (node.selfSize > 0) byStage.set(stage, (byStage.get(stage) ?? 0) + node.selfSize / acknowledged);
      bytes += node.selfSize;
      if (node.selfSize > 0) {
        const { lineNumber } = node.callFrame;
        const where = `${functionName || '(anonymous)'} ${url.replace(/^.*\/(src|node_modules)\//, '$1/')}:${lineNumber + 1}`;
        byFunction.set(where, (byFunction.get(where) ?? 0) + node.selfSize / acknowledged);
      }
      for (const child of node.children) walk(child, inBackground, stage);
    };
    walk(profile.head, false, otherStage);
    const result = {
      bytesPerIncrement: bytes / acknowledged,
      perCallBytesPerIncrement: (bytes - backgroundBytes) / acknowledged,
      byFunction,
      byStage,
    };
    console.error(
      `run: ${acknowledged} increments; ${result.bytesPerIncrement.toFixed(1)} B allocated per increment, ${result.perCallBytesPerIncrement.toFixed(1)} B without interval tasks`,
    );
    return result;
  } finally {
    client.close();
    await cluster.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

console.log(
  `router allocations: Zipf(${zipfExponent}) over ${counterCount} counters, ${batchCount} batches of ${batch}, ${inFlight} in flight; Node ${process.version}, ${os.cpus().length} cores, load average ${os
    .loadavg()
    .map((load) => load.toFixed(1))
    .join(' ')}; medians of ${runs} runs`,
);
const all: Run[] = [];
for (let index = 0; index < runs; index++) all.push(await run());
const pick = (key: Exclude<keyof Run, 'byFunction' | 'byStage'>, digits: number): string =>
  median(all.map((one) => one[key])).toFixed(digits);
console.log(
  `router per increment: ${pick('bytesPerIncrement', 1)} bytes allocated, ${pick('perCallBytesPerIncrement', 1)} without interval tasks`,
);
console.log('  by stage (without interval tasks):');
for (const name of [...stages.map(([stage]) => stage), otherStage])
  console.log(
    `  ${median(all.map((one) => one.byStage.get(name) ?? 0))
      .toFixed(1)
      .padStart(7)} B  ${name}`,
  );
const functions = new Set(all.flatMap((one) => [...one.byFunction.keys()]));
const rows = [...functions].map((where) => [where, median(all.map((one) => one.byFunction.get(where) ?? 0))] as const);
rows.sort((a, b) => b[1] - a[1]);
for (const [where, bytesPerIncrement] of rows.slice(0, 15)) console.log(`  ${bytesPerIncrement.toFixed(1).padStart(7)} B  ${where}`);
