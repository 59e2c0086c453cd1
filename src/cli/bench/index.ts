// `tally bench`: the command (bench-command.ts), its workers and summary
// (bench.ts), the workloads' draws and check sample (bench-workload.ts), the
// seeded Zipf sampler and the latency histogram. bench/compare-load.mts and
// the storage benches share the draws from here, so every load is drawn alike.
export { bench, benchOptions } from './bench-command.ts';
export { LatencyHistogram } from './bench-histogram.ts';
export { CheckSample, CounterNames, SampleTallies, indexPicker, processSeed, untilDue, type Workload } from './bench-workload.ts';
export { SeededRandom, ZipfSampler, harmonicNumber } from './bench-zipf.ts';
