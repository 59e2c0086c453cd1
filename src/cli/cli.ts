// The `tally` CLI: thin commands over the client library. Readable output by
// default, --json for scripts; any error is one line on stderr (one JSON
// object with --json) and a non-zero exit (2 a usage error, 1 a failed call,
// 3 drift found), never a stack trace.
import fs from 'node:fs';
import { createTallyClient, TallyError, type TallyClient } from '../client/index.ts';
import { UsageError, parseWholeNumber } from './args.ts';
import { commandHelp, flagsOf, mainHelp, parseCommandLine, type ParsedCommandLine } from './command-spec.ts';
import { commands } from './commands/index.ts';
import { routerAddresses, securityOptions } from './connection.ts';

/** The version of the package the CLI ships in (package.json beside src/ and dist/). */
function version(): string {
  const manifest = JSON.parse(fs.readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  return manifest.version;
}

/** One line on stderr, or with --json one object: {"error":{"code","message","exitCode"}}. */
function fail(json: boolean, code: string, message: string, exitCode: number): number {
  process.stderr.write(json ? `${JSON.stringify({ error: { code, message, exitCode } })}\n` : `tally: ${message}\n`);
  return exitCode;
}

/** help, --help, -h, help <command>, <command> --help, --version: what to print, or undefined to run the command. */
function helpOrVersion(parsed: ParsedCommandLine): { text: string; exitCode: number } | undefined {
  const { command, positional, flags } = parsed;
  if (command === undefined) {
    if (flags.has('version')) return { text: `tally ${version()}`, exitCode: 0 };
    const topic = positional[0];
    if (topic !== undefined) {
      const named = commands.find((candidate) => candidate.name === topic);
      if (named === undefined) throw new UsageError(`no command "${topic}" to help with (tally --help lists the commands)`);
      return { text: commandHelp(named), exitCode: 0 };
    }
    // `tally` alone is a usage error; `tally help` and `tally --help` ask for it.
    const asked = flags.has('help') || process.argv.slice(2).includes('help');
    return { text: mainHelp(commands), exitCode: asked ? 0 : 2 };
  }
  if (flags.has('help')) return { text: commandHelp(command), exitCode: 0 };
  return undefined;
}

/**
 * Loads what a command keeps out of start-up (CommandSpec.load) when the line
 * may need it: it names the command (to run it or show its help), or it has a
 * flag no command takes without loading (a flag of the loaded command's, or a
 * usage error that must read as it would with every flag known). A counter
 * that shares a command's name only loads a module more.
 */
async function loadCommandsOf(argv: readonly string[]): Promise<void> {
  const known = new Set(['version', ...commands.flatMap((command) => Object.keys(flagsOf(command)))]);
  const unknownFlag = argv.some((arg) => arg.startsWith('--') && arg !== '--' && !known.has(arg.slice(2).split('=')[0]!));
  const loading = commands.filter((command) => unknownFlag || argv.includes(command.name));
  await Promise.all(loading.map((command) => command.load?.()));
}

async function main(argv: readonly string[]): Promise<number> {
  // --json decides how even a usage error is printed, so it is looked for before parsing.
  let json = argv.includes('--json');
  let parsed: ParsedCommandLine;
  try {
    await loadCommandsOf(argv);
    parsed = parseCommandLine(argv, commands);
    const shown = helpOrVersion(parsed);
    if (shown !== undefined) {
      (shown.exitCode === 0 ? process.stdout : process.stderr).write(`${shown.text}\n`);
      return shown.exitCode;
    }
  } catch (error) {
    return fail(json, 'usage', `${(error as Error).message}`, 2);
  }
  const command = parsed.command!;
  json = parsed.flags.has('json');
  let client: TallyClient | undefined;
  try {
    if (command.router !== false) {
      const addresses = routerAddresses(parsed.flags);
      const deadlineText = parsed.flags.get('deadline-ms');
      const deadlineMs = deadlineText === undefined ? 5_000 : parseWholeNumber(deadlineText, '--deadline-ms');
      client = createTallyClient({ addresses, deadlineMs, ...securityOptions(parsed.flags) });
    }
    await command.run({ client, args: parsed.positional, flags: parsed.flags, json });
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (error) {
    if (error instanceof UsageError) return fail(json, 'usage', error.message, 2);
    if (error instanceof TallyError) return fail(json, error.code, json ? error.message : `${error.code}: ${error.message}`, 1);
    return fail(json, 'error', error instanceof Error ? error.message : String(error), 1);
  } finally {
    client?.close();
  }
}

process.exitCode = await main(process.argv.slice(2));
