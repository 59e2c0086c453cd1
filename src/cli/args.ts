// The CLI's arguments: flags (known ones only), positional arguments, and
// the parsers that turn their text into values or a one-line usage error.
import { parseMemberId } from '../common/validate.ts';

export class UsageError extends Error {}

export interface ParsedArgs {
  positional: string[];
  flags: Map<string, string>;
}

export const booleanFlags = new Set([
  'json',
  'cached',
  'help',
  'keyed',
  'coalesce',
  'stream',
  'unary-batches',
  'worker',
  'no-check',
  'prefill',
  'no-prefill',
  'prefill-only',
  'no-window',
  'repair',
  'verbose',
  'undrain',
  'create-table',
  'once',
]);

export const valueFlags = new Set([
  'router',
  'key',
  'deadline-ms',
  'last',
  'window-bucket',
  'window-retention',
  'membership-partitions',
  'ttl',
  'address',
  'service',
  'tls-ca',
  'tls-cert',
  'tls-key',
  'token-file',
  'autoscale',
  'limit',
  'iterations',
  'interval-ms',
  'workload',
  'cold-counters',
  'counters',
  'zipf-s',
  'seed',
  'process-index',
  'page-size',
  'phase-file',
  'batch',
  'concurrency',
  'rate',
  'seconds',
  'duration-ms',
  'procs',
  'procs-total',
  'run-id',
  'data-dir',
  'out',
  'from',
  'node-data-dirs',
  'etcd',
  'etcd-prefix',
  'etcd-tls-ca',
  'etcd-tls-cert',
  'etcd-tls-key',
  'file',
  'postgres',
  'table',
  'archive-table',
  'dead-letter-table',
  'relay-id',
  'dedup-window-ms',
  'reconcile-every',
  'resolve',
  'rows',
  'key-namespace',
  'poll-interval-ms',
  'metrics-host',
  'metrics-port',
  'log-level',
]);

export function parseArgs(argv: readonly string[]): ParsedArgs {
  const positional: string[] = [];
  const flags = new Map<string, string>();
  for (let index = 0; index < argv.length; index++) {
    const arg = argv[index]!;
    // "--" ends the flags; a lone "-5" is a negative amount, not a flag.
    if (arg === '--') {
      positional.push(...argv.slice(index + 1));
      break;
    }
    if (arg.startsWith('--')) {
      const [name, inline] = arg.slice(2).split(/=(.*)/s, 2) as [string, string | undefined];
      if (booleanFlags.has(name)) {
        flags.set(name, 'true');
      } else if (valueFlags.has(name)) {
        const value = inline ?? argv[++index];
        if (value === undefined) throw new UsageError(`--${name} needs a value`);
        flags.set(name, value);
      } else {
        throw new UsageError(`unknown flag --${name}`);
      }
    } else {
      positional.push(arg);
    }
  }
  return { positional, flags };
}

export function parseWholeNumber(text: string, what: string): number {
  if (!/^\d+$/.test(text)) throw new UsageError(`${what} must be a whole number, got "${text}"`);
  return Number(text);
}

export function parseAmount(text: string): bigint {
  if (!/^[+-]?\d+$/.test(text)) throw new UsageError(`amount must be an integer, got "${text}"`);
  return BigInt(text);
}

/** A membership member id, checked here so a typo is a usage error, not a call. */
export function parseMember(text: string): string {
  try {
    return parseMemberId(text).toString();
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

export const msPerUnit = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** A positive duration: plain milliseconds ("90000") or a whole number with a unit ("1500ms", "30s", "15m", "1h", "7d"). */
export function parseDurationMs(text: string, what: string): number {
  const match = /^(\d+)(ms|s|m|h|d)?$/.exec(text);
  if (match === null) throw new UsageError(`${what} must be a duration such as 90000 (ms), 1500ms, 30s, 15m, 1h or 7d, got "${text}"`);
  // In bigint first: "99999999999999999999d" must fail as too long, not round.
  const durationMs = BigInt(match[1]!) * BigInt(msPerUnit[(match[2] ?? 'ms') as keyof typeof msPerUnit]);
  if (durationMs === 0n) throw new UsageError(`${what} must be longer than 0, got "${text}"`);
  if (durationMs > BigInt(Number.MAX_SAFE_INTEGER)) throw new UsageError(`${what} is too long, got "${text}"`);
  return Number(durationMs);
}

export function expectArgs(args: string[], count: number, shape: string): void {
  if (args.length !== count) throw new UsageError(`expected: tally ${shape}`);
}
