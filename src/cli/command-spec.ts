// What a CLI command is: its name, arguments, summary and the flags it takes,
// one definition from which the parser checks a command line and the help
// text is written. No command's behaviour lives here.
import type { TallyClient } from '../client/index.ts';
import { UsageError } from './args.ts';

/** A flag as a command takes it: its value's name (none: a switch) and what it does there. */
export interface FlagSpec {
  /** The value's placeholder, e.g. 'N', 'D', 'host:port'; undefined for a switch (--json). */
  value?: string;
  help: string;
}

/** What a command's run is given. */
export interface CommandContext {
  /** The router client; undefined for a command whose spec says router: false. */
  client: TallyClient | undefined;
  args: string[];
  flags: Map<string, string>;
  json: boolean;
}

export interface CommandSpec {
  name: string;
  /** Its arguments after the name, e.g. '<counter> [amount]'. */
  synopsis: string;
  /** What it does: the first line is the summary `tally --help` shows. */
  summary: string;
  /** Its own flags; the connection flags come with router: true, --json and --help with every command. */
  flags: Readonly<Record<string, FlagSpec>>;
  /** Whether it calls routers (takes --router, TLS, token, --deadline-ms). Default true. */
  router?: boolean;
  /**
   * Loads what moreFlags and run need, before the command line is parsed:
   * a module the other commands start without.
   */
  load?: () => Promise<void>;
  /** Flags it takes beyond `flags`, when another definition owns them (the relay's settings reader); read after load. */
  moreFlags?: () => Readonly<Record<string, FlagSpec>>;
  /** Lines after the flags in its --help (exit codes, a note). */
  notes?: string;
  run(context: CommandContext): Promise<void>;
}

/** Flags every command takes. */
export const commonFlags: Readonly<Record<string, FlagSpec>> = {
  json: { help: 'print JSON (one value, or one object per line); errors too, on stderr' },
  help: { help: 'this help' },
};

/** Flags of every command that calls routers. */
export const connectionFlags: Readonly<Record<string, FlagSpec>> = {
  router: { value: 'host:port[,host:port...]', help: 'the routers (else TALLY_ROUTER, else 127.0.0.1:50051)' },
  'deadline-ms': { value: 'N', help: 'deadline of each call, retries included (default 5000)' },
  'tls-ca': { value: 'FILE', help: 'CA to verify the router by (else TALLY_TLS_CA)' },
  'tls-cert': { value: 'FILE', help: 'client certificate, with --tls-key (else TALLY_TLS_CERT)' },
  'tls-key': { value: 'FILE', help: "the client certificate's key (else TALLY_TLS_KEY)" },
  'token-file': { value: 'FILE', help: 'file holding the bearer token (else TALLY_TOKEN_FILE, or the token in TALLY_TOKEN)' },
};

/** Every flag the command takes, its own first. */
export function flagsOf(command: CommandSpec): Record<string, FlagSpec> {
  return {
    ...command.flags,
    ...command.moreFlags?.(),
    ...(command.router === false ? {} : connectionFlags),
    ...commonFlags,
  };
}

export interface ParsedCommandLine {
  /** The command, or undefined for `tally` alone or a global flag only (--help, --version). */
  command: CommandSpec | undefined;
  positional: string[];
  flags: Map<string, string>;
}

/**
 * Splits a command line by the command's own flags: a flag it does not take
 * is a usage error naming the command, whether or not another command takes
 * it. `-h` is --help; `--` ends the flags; a lone "-5" is an argument.
 */
export function parseCommandLine(argv: readonly string[], commands: readonly CommandSpec[]): ParsedCommandLine {
  const first = commandIndex(argv, commands);
  const name = first === -1 ? undefined : argv[first];
  const command = name === undefined ? undefined : commands.find((candidate) => candidate.name === name);
  if (name !== undefined && name !== 'help' && command === undefined)
    throw new UsageError(`unknown command "${name}" (tally --help lists the commands)`);
  const known: Record<string, FlagSpec> = command === undefined ? { ...commonFlags, version: { help: 'the version' } } : flagsOf(command);
  const positional: string[] = [];
  const flags = new Map<string, string>();
  for (let index = 0; index < argv.length; index++) {
    const arg = argv[index]!;
    if (index === first) continue;
    if (arg === '--') {
      positional.push(...argv.slice(index + 1));
      break;
    }
    if (arg === '-h') {
      flags.set('help', 'true');
      continue;
    }
    if (!arg.startsWith('--')) {
      positional.push(arg);
      continue;
    }
    const [flagName, inline] = arg.slice(2).split(/=(.*)/s, 2) as [string, string | undefined];
    const spec = known[flagName];
    if (spec === undefined) {
      if (command === undefined) throw new UsageError(`unknown flag --${flagName} (tally --help lists the commands and their flags)`);
      throw new UsageError(`${command.name} does not take --${flagName} (tally help ${command.name} lists its flags)`);
    }
    if (spec.value === undefined) {
      if (inline !== undefined) throw new UsageError(`--${flagName} takes no value, got "--${flagName}=${inline}"`);
      flags.set(flagName, 'true');
      continue;
    }
    const value = inline ?? argv[++index];
    if (value === undefined) throw new UsageError(`--${flagName} needs a value (${spec.value})`);
    flags.set(flagName, value);
  }
  return { command, positional, flags };
}

/**
 * Where the command's name is: the first argument that is not a flag or the
 * value of one (flags may come first: tally --router a:50051 incr c), or -1.
 */
function commandIndex(argv: readonly string[], commands: readonly CommandSpec[]): number {
  const takesValue = new Set(
    commands.flatMap((command) =>
      Object.entries(flagsOf(command))
        .filter(([, spec]) => spec.value !== undefined)
        .map(([name]) => name),
    ),
  );
  for (let index = 0; index < argv.length; index++) {
    const arg = argv[index]!;
    if (arg === '--') return -1;
    if (!arg.startsWith('-') || /^-\d/.test(arg)) return index;
    if (arg.startsWith('--') && !arg.includes('=') && takesValue.has(arg.slice(2))) index++;
  }
  return -1;
}

/** `tally <command> --help`: its usage, what it does, and each flag it takes. */
export function commandHelp(command: CommandSpec): string {
  const flags = Object.entries(flagsOf(command)).map(([name, spec]) => [
    `--${name}${spec.value === undefined ? '' : ` ${spec.value}`}`,
    spec.help,
  ]);
  const width = Math.min(36, Math.max(...flags.map(([left]) => left!.length))) + 2;
  const lines = flags.map(([left, help]) =>
    left!.length + 2 > width ? `  ${left}\n  ${''.padEnd(width)}${help}` : `  ${left!.padEnd(width)}${help}`,
  );
  return [
    `usage: tally ${command.name}${command.synopsis === '' ? '' : ` ${command.synopsis}`} [flags]`,
    '',
    command.summary,
    '',
    'flags:',
    ...lines,
    ...(command.notes === undefined ? [] : ['', command.notes]),
  ].join('\n');
}

/** `tally --help`: every command's summary. */
export function mainHelp(commands: readonly CommandSpec[]): string {
  const width = Math.max(...commands.map((command) => command.name.length)) + 2;
  return [
    'usage: tally <command> [arguments] [flags]',
    '       tally help <command>    (or tally <command> --help): its arguments and flags',
    '       tally --version',
    '',
    'commands:',
    ...commands.map((command) => `  ${command.name.padEnd(width)}${command.summary.split('\n')[0]}`),
    '',
    'The router address comes from --router, else TALLY_ROUTER, else 127.0.0.1:50051. Several',
    'routers of one cluster, comma-separated (--router a:50051,b:50051): calls take turns over',
    'them and pass over one that cannot be reached; a call that may have reached a router is sent',
    'to another only when that cannot count twice (reads, keyed increments).',
    'TLS: --tls-ca (and --tls-cert/--tls-key for a client certificate), or TALLY_TLS_CA,',
    'TALLY_TLS_CERT, TALLY_TLS_KEY. Token: --token-file, TALLY_TOKEN_FILE or TALLY_TOKEN.',
    '',
    'exit codes: 0 done; 1 a call failed; 2 a usage error; 3 drift found (reconcile, rebuild,',
    'recount, a failed bench check). With --json, an error is one JSON object on stderr:',
    '{"error":{"code":...,"message":...,"exitCode":...}}.',
  ].join('\n');
}
