// Flag and environment parsing shared by every process's parseConfig. A flag
// `--refresh-interval-ms` mirrors the environment key TALLY_REFRESH_INTERVAL_MS;
// a flag wins over the environment, which wins over the default.
import path from 'node:path';
import { splitHostPort } from '../wire/index.ts';
import { zoneBytesMax } from './limits.ts';

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

/**
 * Asked for by --help or -h on any process: the reader ran with every
 * default and lists what it read instead of configuring anything.
 */
export class HelpRequested extends Error {
  constructor(
    readonly text: string,
    readonly settings: readonly SettingHelp[] = [],
  ) {
    super('help requested');
    this.name = 'HelpRequested';
  }
}

/** Parses `--name value`, `--name=value` and bare `--flag` (true); `--help` and `-h` set flag help. */
export function parseFlags(argv: readonly string[], booleanFlags: readonly string[] = []): Map<string, string> {
  const flags = new Map<string, string>();
  for (let index = 0; index < argv.length; index++) {
    const arg = argv[index]!;
    if (arg === '--help' || arg === '-h') {
      flags.set('help', 'true');
      continue;
    }
    if (!arg.startsWith('--')) throw new ConfigError(`unexpected argument "${arg}"`);
    const equals = arg.indexOf('=');
    if (equals > 0) {
      flags.set(arg.slice(2, equals), arg.slice(equals + 1));
    } else if (booleanFlags.includes(arg.slice(2))) {
      flags.set(arg.slice(2), 'true');
    } else {
      const value = argv[index + 1];
      if (value === undefined) throw new ConfigError(`flag ${arg} needs a value`);
      flags.set(arg.slice(2), value);
      index++;
    }
  }
  return flags;
}

function envKeyOf(flag: string): string {
  return `TALLY_${flag.toUpperCase().replaceAll('-', '_')}`;
}

/**
 * Where a process serves /metrics: a port, 0 for no endpoint, or 'any' for a
 * port the kernel picks (the process reports it in its "ready" log line).
 * 0 cannot mean "any port" here as it does for --listen: it has meant "off".
 */
export type MetricsPort = number | 'any';

/** One setting a reader reads, as --help lists it. */
export interface SettingHelp {
  flag: string;
  envKey: string;
  /** What the value is: "N (100..600000)", "true|false", "on|off", "TEXT". */
  shape: string;
  /** The default, as text; '' when there is none. */
  fallback: string;
}

/**
 * Reads typed settings from flags, then env, then defaults, and refuses
 * unknown flags. Given flag help (--help, -h), it reads nothing from flags or
 * the environment: every setting takes its default, is noted as read, and
 * rejectUnknownFlags throws HelpRequested with the list, so the help is the
 * parser's own definition and cannot drift from it.
 */
export class ConfigReader {
  private readonly used = new Set<string>();
  private readonly helpSettings: Map<string, SettingHelp> | undefined;
  constructor(
    private readonly flags: Map<string, string>,
    private readonly env: NodeJS.ProcessEnv,
  ) {
    this.helpSettings = flags.has('help') ? new Map() : undefined;
  }

  /** Whether this reader lists its settings (--help) rather than reading them. */
  get helpMode(): boolean {
    return this.helpSettings !== undefined;
  }

  private note(flag: string, shape: string, fallback: unknown): void {
    this.used.add(flag);
    if (this.helpSettings === undefined || this.helpSettings.has(flag)) return;
    this.helpSettings.set(flag, { flag, envKey: envKeyOf(flag), shape, fallback: fallback === undefined ? '' : String(fallback) });
  }

  private raw(flag: string, shape: string, fallback: unknown): { value: string; source: string } | undefined {
    this.note(flag, shape, fallback);
    if (this.helpSettings !== undefined) return undefined;
    const fromFlag = this.flags.get(flag);
    if (fromFlag !== undefined) return { value: fromFlag, source: `--${flag}` };
    const envKey = envKeyOf(flag);
    const fromEnv = this.env[envKey];
    if (fromEnv !== undefined && fromEnv !== '') return { value: fromEnv, source: envKey };
    return undefined;
  }

  string(flag: string, fallback: string): string {
    return this.raw(flag, 'TEXT', fallback)?.value ?? fallback;
  }

  /**
   * A setting that must never be empty when given (security settings: an
   * empty TALLY_TLS_CERT silently meaning "no TLS" would be a trap): undefined
   * when neither the flag nor the environment key is there at all.
   */
  nonEmptyString(flag: string): string | undefined {
    this.note(flag, 'TEXT', undefined);
    if (this.helpSettings !== undefined) return undefined;
    const envKey = envKeyOf(flag);
    const fromFlag = this.flags.get(flag);
    const [value, source] = fromFlag !== undefined ? [fromFlag, `--${flag}`] : [this.env[envKey], envKey];
    if (value === undefined) return undefined;
    if (value.trim() === '') throw new ConfigError(`${source} is set but empty: give a value or leave it unset`);
    return value;
  }

  int(flag: string, fallback: number, bounds: { min: number; max: number }): number {
    const raw = this.raw(flag, `N (${bounds.min}..${bounds.max})`, fallback);
    if (raw === undefined) return fallback;
    if (!/^\d+$/.test(raw.value)) throw new ConfigError(`${raw.source} must be a whole number, got "${raw.value}"`);
    const value = Number(raw.value);
    if (value < bounds.min || value > bounds.max) {
      throw new ConfigError(`${raw.source} must be between ${bounds.min} and ${bounds.max}, got ${value}`);
    }
    return value;
  }

  bool(flag: string, fallback: boolean): boolean {
    const raw = this.raw(flag, '[=true|false]', fallback);
    if (raw === undefined) return fallback;
    if (raw.value === 'true' || raw.value === '1') return true;
    if (raw.value === 'false' || raw.value === '0') return false;
    throw new ConfigError(`${raw.source} must be true or false, got "${raw.value}"`);
  }

  /** A metrics endpoint's port: a number (0 turns the endpoint off) or "any" (the kernel picks one). */
  metricsPort(flag: string, fallback: MetricsPort): MetricsPort {
    const raw = this.raw(flag, 'PORT|any (0: off)', fallback);
    if (raw === undefined) return fallback;
    if (raw.value === 'any') return 'any';
    if (!/^\d+$/.test(raw.value) || Number(raw.value) > 65535)
      throw new ConfigError(`${raw.source} must be a port (0-65535, 0 turns metrics off) or "any", got "${raw.value}"`);
    return Number(raw.value);
  }

  oneOf<T extends string>(flag: string, fallback: T, allowed: readonly T[]): T {
    const raw = this.raw(flag, allowed.join('|'), fallback);
    if (raw === undefined) return fallback;
    if (!(allowed as readonly string[]).includes(raw.value)) {
      throw new ConfigError(`${raw.source} must be one of ${allowed.join(', ')}, got "${raw.value}"`);
    }
    return raw.value as T;
  }

  /**
   * A setting with no flag, only an environment key (a secret that must not
   * appear in a process listing): undefined when unset.
   */
  envOnly(envKey: string): string | undefined {
    if (this.helpSettings !== undefined) {
      this.helpSettings.set(envKey, { flag: '', envKey, shape: 'TEXT', fallback: '' });
      return undefined;
    }
    return this.env[envKey];
  }

  /** Every setting read so far, in the order read: what --help lists. */
  settings(): SettingHelp[] {
    return [...(this.helpSettings?.values() ?? [])];
  }

  /**
   * Call after reading every setting: a typo in a flag is a startup error.
   * Under --help, throws HelpRequested with the settings read instead.
   */
  rejectUnknownFlags(): void {
    if (this.helpSettings !== undefined) throw new HelpRequested(formatSettingsHelp(this.settings()), this.settings());
    for (const flag of this.flags.keys()) {
      if (!this.used.has(flag)) throw new ConfigError(`unknown flag --${flag}`);
    }
  }
}

/** The flag, environment key, shape and default of each setting, one line each. */
export function formatSettingsHelp(settings: readonly SettingHelp[]): string {
  // A boolean's shape follows without a space: --insecure, --insecure=false.
  const left = settings.map((setting) =>
    setting.flag === '' ? '  (environment only)' : `  --${setting.flag}${setting.shape.startsWith('[') ? '' : ' '}${setting.shape}`,
  );
  const leftWidth = Math.max(...left.map((text) => text.length)) + 2;
  const envWidth = Math.max(...settings.map((setting) => setting.envKey.length)) + 2;
  const lines = settings.map((setting, index) =>
    `${left[index]!.padEnd(leftWidth)}${setting.envKey.padEnd(envWidth)}${setting.fallback === '' ? '' : `default ${setting.fallback}`}`.trimEnd(),
  );
  return [
    'Every flag also reads from its environment key; a flag wins over the environment, which wins over the default.',
    '',
    ...lines,
    '  --help, -h'.padEnd(leftWidth) + 'this list',
  ].join('\n');
}

/** host:port with a port in range; the host may be empty for "all interfaces". */
export function parseAddress(value: string, what: string): { host: string; port: number } {
  const address = splitHostPort(value);
  if (address === undefined) throw new ConfigError(`${what} must be host:port, got "${value}"`);
  return address;
}

/** Letters, digits and . _ - / : as Kubernetes topology values and cloud zone names are. */
const zonePattern = /^[A-Za-z0-9][A-Za-z0-9._:/-]*$/;

/** Whether `zone` is a zone name (a failure domain: a zone, a rack): '' (none) or up to zoneBytesMax of zonePattern. */
export function isZoneName(zone: string): boolean {
  return zone === '' || (zone.length <= zoneBytesMax && zonePattern.test(zone));
}

/** A zone name (see isZoneName), or a ConfigError naming `what`. */
export function checkZone(zone: string, what = '--zone'): string {
  if (!isZoneName(zone))
    throw new ConfigError(
      `${what} must be 1..${zoneBytesMax} letters, digits and . _ - / : (starting with a letter or digit), got "${zone}"`,
    );
  return zone;
}

/**
 * Runs a process's main, turning a ConfigError into one line and exit code 2,
 * and --help into the process's settings on stdout and exit code 0.
 */
export function runMain(main: () => Promise<void>): void {
  main().catch((error: unknown) => {
    if (error instanceof HelpRequested) {
      // The process is named by its folder: src/router/main.ts, dist/node/main.js.
      const name = path.basename(path.dirname(process.argv[1] ?? 'tally'));
      process.stdout.write(`usage: ${name} [--flag value]...\n\n${error.text}\n`);
      process.exit(0);
    }
    const message = error instanceof Error ? error.message : String(error);
    process.stderr.write(`${error instanceof ConfigError ? 'config error' : 'fatal'}: ${message}\n`);
    process.exit(error instanceof ConfigError ? 2 : 1);
  });
}

/**
 * Calls stop when the parent that launched us (with TALLY_STOP_WITH_PARENT=1)
 * goes away: it holds our stdin open, so its death closes it.
 */
export function stopWithParent(env: NodeJS.ProcessEnv, stop: () => void): void {
  if (env.TALLY_STOP_WITH_PARENT !== '1') return;
  process.stdin.on('end', stop);
  process.stdin.on('error', stop);
  process.stdin.resume();
}
