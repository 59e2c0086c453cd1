// The `tally` command (bin/tally.mjs runs cli.ts, its entry): the commands,
// their arguments, usage text and output (commands*.ts, command-spec.ts,
// args.ts, format.ts), `tally bench` (bench*.ts: the workloads' draws, the
// seeded Zipf sampler, the latency histogram, shared with
// bench/compare-load.mts), `tally top` (top.ts) and `tally directory
// export|import` (directory-transfer.ts, the one use of the router's
// surface). Everything else goes through the client library.
export { UsageError } from './args.ts';
export { commandHelp, flagsOf, parseCommandLine } from './command-spec.ts';
export { commands } from './commands/index.ts';
export {
  CheckSample,
  CounterNames,
  LatencyHistogram,
  SampleTallies,
  SeededRandom,
  ZipfSampler,
  harmonicNumber,
  indexPicker,
  processSeed,
  type Workload,
} from './bench/index.ts';
