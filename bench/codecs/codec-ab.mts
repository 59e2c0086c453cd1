// Two versions of the lean counter.v1 codec side by side in one process, for
// a refactor of the codec (the lean codecs module of two checkouts, given by
// path): CPU µs per IncrementBatch and ReadMany message of 100, each
// operation measured in windows alternating A-B and B-A so that load on a
// shared machine falls on both alike. Give the same module twice (with a
// query string, `?copy`, for a second instance) to see the noise floor.
//   node --import tsx bench/codecs/codec-ab.mts A_MODULE B_MODULE [--ms 150] [--windows 9]
//   e.g. A_MODULE /other/checkout/src/wire/codecs/counter-codec.ts
import path from 'node:path';
import { pathToFileURL } from 'node:url';

interface Codec {
  requestSerialize(value: unknown): Buffer;
  requestDeserialize(bytes: Buffer): unknown;
  responseSerialize(value: unknown): Buffer;
  responseDeserialize(bytes: Buffer): unknown;
}
type Codecs = Record<'IncrementBatch' | 'ReadMany', Codec>;

const [modulePathA, modulePathB] = process.argv
  .slice(2)
  .filter((arg, index, args) => !arg.startsWith('--') && !args[index - 1]?.startsWith('--'));
if (modulePathA === undefined || modulePathB === undefined) {
  process.stderr.write('usage: codec-ab.mts A_MODULE B_MODULE [--ms 150] [--windows 9]\n');
  process.exit(2);
}
const flag = (name: string, fallback: number): number => {
  const index = process.argv.indexOf(`--${name}`);
  return index < 0 ? fallback : Number(process.argv[index + 1]);
};
const windowMs = flag('ms', 150);
const windows = flag('windows', 9);

async function load(modulePath: string): Promise<Codecs> {
  const [file, query] = modulePath.split('?');
  const url = pathToFileURL(path.resolve(file!)).href + (query === undefined ? '' : `?${query}`);
  return ((await import(url)) as { leanCounterCodecs: Codecs }).leanCounterCodecs;
}
const [a, b] = [await load(modulePathA), await load(modulePathB)];

const items = Array.from({ length: 100 }, (_, index) => ({
  counter: `bench:zipf:${(index * 7919) % 200_000}`,
  amount: 1 + ((index * 104_729) % 2 ** 40),
  idempotencyKey: Buffer.alloc(0),
}));
const results = { results: items.map((_, index) => ({ applied: true, shard: index % 16 })) };
const counters = items.map((item) => item.counter);
const page = {
  values: counters.map((counter, index) => ({
    counter,
    total: BigInt(index * 1_000_003),
    exact: true,
    asOfUnixMs: 1_764_900_000_000 + index,
    stalenessMs: 0,
    shards: 4,
  })),
};
const readRequest = { counters, consistency: 'CACHED' };
const batchBytes = a.IncrementBatch.requestSerialize({ items });
const resultBytes = a.IncrementBatch.responseSerialize(results);
const readBytes = a.ReadMany.requestSerialize(readRequest);
const pageBytes = a.ReadMany.responseSerialize(page);

const operations: [string, (codecs: Codecs) => unknown][] = [
  ['IncrementBatch encode request', (codecs) => codecs.IncrementBatch.requestSerialize({ items })],
  ['IncrementBatch decode request', (codecs) => codecs.IncrementBatch.requestDeserialize(batchBytes)],
  ['IncrementBatch encode response', (codecs) => codecs.IncrementBatch.responseSerialize(results)],
  ['IncrementBatch decode response', (codecs) => codecs.IncrementBatch.responseDeserialize(resultBytes)],
  ['ReadMany encode request', (codecs) => codecs.ReadMany.requestSerialize(readRequest)],
  ['ReadMany decode request', (codecs) => codecs.ReadMany.requestDeserialize(readBytes)],
  ['ReadMany encode response', (codecs) => codecs.ReadMany.responseSerialize(page)],
  ['ReadMany decode response', (codecs) => codecs.ReadMany.responseDeserialize(pageBytes)],
];

/** CPU µs per operation over one window. */
function cpuMicrosPerOperation(codecs: Codecs, operation: (codecs: Codecs) => unknown, durationMs: number): number {
  let count = 0;
  const cpuStart = process.cpuUsage();
  const startMs = performance.now();
  while (performance.now() - startMs < durationMs) {
    for (let index = 0; index < 100; index++) operation(codecs);
    count += 100;
  }
  const cpu = process.cpuUsage(cpuStart);
  return (cpu.user + cpu.system) / count;
}

const median = (values: number[]): number => [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)]!;
console.log(`| operation (100 items) | A µs | B µs | B against A |\n| --- | --- | --- | --- |`);
for (const [name, operation] of operations) {
  for (let warm = 0; warm < 3; warm++) {
    cpuMicrosPerOperation(a, operation, windowMs);
    cpuMicrosPerOperation(b, operation, windowMs);
  }
  const [timesA, timesB]: [number[], number[]] = [[], []];
  for (let window = 0; window < windows; window++) {
    const order = window % 2 === 0 ? [a, b] : [b, a];
    for (const codecs of order) (codecs === a ? timesA : timesB).push(cpuMicrosPerOperation(codecs, operation, windowMs));
  }
  const [medianA, medianB] = [median(timesA), median(timesB)];
  console.log(
    `| ${name} | ${medianA.toFixed(2)} | ${medianB.toFixed(2)} | ${medianB >= medianA ? '+' : ''}${((100 * (medianB - medianA)) / medianA).toFixed(0)}% |`,
  );
}
