// Encode and decode time per IncrementBatch of 100 (request and response),
// proto-loader's serializers (protobufjs) against the lean codec
// (src/wire/codecs/counter-codec.ts), in one process: what each side of a call
// spends on the message itself. Single-threaded CPU time per operation, so a
// shared machine moves it less than throughput; still take the median of runs.
//   node --import tsx bench/codecs/codec-micro.mts [--items 100] [--ms 1000] [--rounds 5]
import { counterServiceDefinition } from '../../src/common/index.ts';
import { leanCounterCodecs } from '../../src/wire/index.ts';

const flag = (name: string, fallback: number): number => {
  const index = process.argv.indexOf(`--${name}`);
  return index < 0 ? fallback : Number(process.argv[index + 1]);
};
const itemCount = flag('items', 100);
const windowMs = flag('ms', 1_000);
const rounds = flag('rounds', 5);

type Codec = {
  requestSerialize(value: unknown): Buffer;
  requestDeserialize(bytes: Buffer): unknown;
  responseSerialize(value: unknown): Buffer;
  responseDeserialize(bytes: Buffer): unknown;
};
const codecs: Record<string, Codec> = {
  'proto-loader': counterServiceDefinition.IncrementBatch as unknown as Codec,
  lean: leanCounterCodecs.IncrementBatch as unknown as Codec,
};

// The shapes `tally bench` sends (amount 1, no key) and a keyed variant (16 random bytes, as the client's default key).
const workloads = {
  'hot, unkeyed': Array.from({ length: itemCount }, () => ({ counter: 'bench:hot', amount: 1, idempotencyKey: Buffer.alloc(0) })),
  'zipf names, unkeyed': Array.from({ length: itemCount }, (_, index) => ({
    counter: `bench:zipf:${(index * 7919) % 200_000}`,
    amount: 1,
    idempotencyKey: Buffer.alloc(0),
  })),
  'zipf names, 16-byte keys, amounts to 2^40': Array.from({ length: itemCount }, (_, index) => ({
    counter: `bench:zipf:${(index * 7919) % 200_000}`,
    amount: 1 + ((index * 104_729) % 2 ** 40),
    idempotencyKey: Buffer.from(Array.from({ length: 16 }, (_, byte) => (index * 31 + byte) & 255)),
  })),
};
const response = { results: Array.from({ length: itemCount }, (_, index) => ({ applied: true, shard: index % 4 })) };

/** µs of CPU per call of `operation`, over about windowMs. */
function cpuMicrosPerCall(operation: () => unknown): number {
  let calls = 0;
  const start = process.cpuUsage();
  const startMs = performance.now();
  while (performance.now() - startMs < windowMs) {
    for (let index = 0; index < 100; index++) operation();
    calls += 100;
  }
  const used = process.cpuUsage(start);
  return (used.user + used.system) / calls;
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

const rows: string[] = [];
for (const [workload, items] of Object.entries(workloads)) {
  const requestBytes = codecs['proto-loader']!.requestSerialize({ items });
  const responseBytes = codecs['proto-loader']!.responseSerialize(response);
  const operations: Record<string, (codec: Codec) => () => unknown> = {
    'client: encode request': (codec) => () => codec.requestSerialize({ items }),
    'router: decode request': (codec) => () => codec.requestDeserialize(requestBytes),
    'router: encode response': (codec) => () => codec.responseSerialize(response),
    'client: decode response': (codec) => () => codec.responseDeserialize(responseBytes),
  };
  for (const [operation, make] of Object.entries(operations)) {
    const results: Record<string, number[]> = { 'proto-loader': [], lean: [] };
    // Alternating by round, so a busy moment on the machine hits both.
    for (let round = 0; round < rounds; round++)
      for (const [name, codec] of Object.entries(codecs)) results[name]!.push(cpuMicrosPerCall(make(codec)));
    const before = median(results['proto-loader']!);
    const after = median(results.lean!);
    rows.push(`| ${workload} | ${operation} | ${before.toFixed(1)} | ${after.toFixed(1)} | ${(before / after).toFixed(1)}x |`);
  }
}
console.log(`IncrementBatch of ${itemCount}: µs of CPU per message (median of ${rounds} rounds of ${windowMs} ms)\n`);
console.log('| workload | operation | proto-loader µs | lean µs | ratio |');
console.log('| --- | --- | --- | --- | --- |');
for (const row of rows) console.log(row);
