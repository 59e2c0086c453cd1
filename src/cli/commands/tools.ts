// The CLI's long-running tools: bench (load with a latency summary), and the
// outbox relay and its recount, whose settings are the relay's own reader's
// (the flags listed here are read from it, so they cannot drift apart).
import type { SettingHelp } from '../../common/index.ts';
import type * as RelayModule from '../../relay/index.ts';
import { UsageError, expectArgs } from '../args.ts';
import { bench } from '../bench/index.ts';
import type { CommandSpec, FlagSpec } from '../command-spec.ts';
import { clientOf } from './counters.ts';

/** A settings reader's flags as the CLI lists them: the value's shape, its environment key and default. */
function flagsOfSettings(settings: readonly SettingHelp[]): Record<string, FlagSpec> {
  return Object.fromEntries(
    settings
      .filter((setting) => setting.flag !== '')
      .map((setting) => [
        setting.flag,
        {
          value: setting.shape,
          help: `else ${setting.envKey}${setting.fallback === '' ? '' : `; default ${setting.fallback}`}`,
        },
      ]),
  );
}

const whole = (what: string): FlagSpec => ({ value: 'N', help: what });

// The relay and its settings reader bring the server plumbing and the
// PostgreSQL driver: loaded (load) only for a command line that may need
// them (cli.ts), so the other commands start without them.
let relayModule: typeof RelayModule | undefined;
async function loadRelay(): Promise<void> {
  relayModule ??= await import('../../relay/index.ts');
}
function relay(): typeof RelayModule {
  if (relayModule === undefined) throw new Error('the relay module is used before its command loaded it');
  return relayModule;
}
/** The settings reader's flags; none while the relay is not loaded (a line that could use one loads it first). */
function settingsFlags(settingsOf: (loaded: typeof RelayModule) => readonly SettingHelp[]): Record<string, FlagSpec> {
  return relayModule === undefined ? {} : flagsOfSettings(settingsOf(relayModule));
}

export const toolCommands: CommandSpec[] = [
  {
    name: 'bench',
    synopsis: '',
    summary: 'drive load and report throughput, latency and an exact-read check',
    flags: {
      workload: { value: 'hot|cold|mix|zipf|page', help: 'what to drive (default hot: one counter)' },
      counters: whole('the population of cold, mix, zipf and page (default 1000; zipf and page 1000000)'),
      'cold-counters': whole('the older name of --counters'),
      'zipf-s': { value: 'S', help: 'the Zipf exponent of --workload zipf (default 0.99)' },
      seed: whole('the seed of the draws (default 1)'),
      batch: whole('increments per call (default 1: unary)'),
      'page-size': whole('counters per ReadMany of --workload page (default 50)'),
      concurrency: whole('calls in flight per process (default 64)'),
      rate: whole('calls per second, paced (default 0: as fast as answered)'),
      seconds: whole('how long to run (default 10)'),
      'duration-ms': whole('how long to run, in ms (instead of --seconds)'),
      procs: whole('load-generating processes (default 1)'),
      keyed: { help: 'send an idempotency key with every increment' },
      'no-check': { help: 'skip the exact-read check after the run' },
      prefill: { help: 'create the population of cold or mix before the run' },
      'no-prefill': { help: 'do not create the population of zipf or page first' },
      'prefill-only': { help: 'create the population and stop' },
      coalesce: { help: 'unary increment calls through the coalescing client (no --batch)' },
      stream: {
        help: 'each call a batch of --batch items on one IncrementStream per router; --workload page: each page on one ReadStream per router',
      },
      'unary-batches': { help: 'with --coalesce: its batches as unary IncrementBatch calls, not on a stream' },
      'phase-file': { value: 'FILE', help: 'write the phase (prefill, run, check) to FILE as it changes' },
      // Set by a bench for the worker processes it starts.
      worker: { help: '(internal) run as a worker of a multi-process bench' },
      'process-index': whole("(internal) a worker's index"),
      'procs-total': whole('(internal) the workers of the run'),
      'run-id': { value: 'ID', help: "(internal) the run's id" },
    },
    notes: 'exit codes: 0 done; 3 the exact-read check failed; 1 a call failed; 2 a usage error',
    async run({ args, flags, json }) {
      expectArgs(args, 0, 'bench [flags]');
      await bench(flags, json);
    },
  },
  {
    name: 'relay',
    synopsis: '',
    summary: "apply a PostgreSQL outbox table's rows to Tally, each exactly once (docs/outbox.md)",
    flags: {
      once: { help: 'relay until the outbox is empty, then stop' },
      'create-table': { help: 'create the outbox tables and stop' },
      resolve: { value: 'list|counted|resend|dead-letter', help: 'what to do with rows older than the dedup window (list shows them)' },
      rows: { value: 'IDS|all', help: 'the rows --resolve acts on: comma-separated ids, or all' },
    },
    load: loadRelay,
    moreFlags: () => settingsFlags((loaded) => loaded.relaySettingsHelp()),
    async run(context) {
      await relay().relayCommand(clientOf(context), context.args, context.flags, (message) => new UsageError(message));
    },
  },
  {
    name: 'recount',
    synopsis: '<counter>',
    summary: 'compare an outbox-fed counter with its archived rows and report drift; --repair applies it as one keyed correction',
    flags: { repair: { help: 'apply the drift as one keyed correction' } },
    load: loadRelay,
    moreFlags: () => settingsFlags((loaded) => loaded.postgresSettingsHelp()),
    notes: 'exit codes: 0 no drift left; 3 drift remains; 1 a call failed; 2 a usage error',
    async run(context) {
      await relay().recountCommand(clientOf(context), context.args, context.flags, (message) => new UsageError(message));
    },
  },
];
