// The `tally` CLI: thin commands over the client library. Readable output by
// default, --json for scripts; any error is one line on stderr and a non-zero
// exit (2 for a usage error, 1 for a failed call), never a stack trace.
import { createTallyClient, TallyError, type TallyClient } from '../client/index.ts';
import { directoryCommand } from './directory-transfer.ts';
import { backupCommand } from './backup-command.ts';
import { print } from './format.ts';
import { usage } from './usage.ts';
import { UsageError, parseArgs, parseWholeNumber, type ParsedArgs } from './args.ts';
import { routerAddresses, securityOptions } from './connection.ts';
import { run } from './commands.ts';

async function main(): Promise<number> {
  let parsed: ParsedArgs;
  try {
    parsed = parseArgs(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`tally: ${(error as Error).message} (tally --help shows usage)\n`);
    return 2;
  }
  const [command, ...args] = parsed.positional;
  if (parsed.flags.has('help') || command === undefined || command === 'help') {
    process.stdout.write(`${usage}\n`);
    return command === undefined && !parsed.flags.has('help') ? 2 : 0;
  }
  let client: TallyClient | undefined;
  try {
    // Offline: works on a store, not through a router.
    if (command === 'directory') {
      await directoryCommand(
        args,
        {
          dataDir: parsed.flags.get('data-dir'),
          etcd: parsed.flags.get('etcd'),
          etcdPrefix: parsed.flags.get('etcd-prefix'),
          etcdTlsCa: parsed.flags.get('etcd-tls-ca'),
          etcdTlsCert: parsed.flags.get('etcd-tls-cert'),
          etcdTlsKey: parsed.flags.get('etcd-tls-key'),
          file: parsed.flags.get('file'),
        },
        (message) => new UsageError(message),
        (text) => process.stderr.write(`${text}\n`),
      );
      return 0;
    }
    if (command === 'backup' || command === 'restore') {
      const json = parsed.flags.has('json');
      await backupCommand(
        command,
        args,
        parsed.flags,
        (message) => new UsageError(message),
        (value, text) => print(json, value, text),
      );
      return 0;
    }
    const addresses = routerAddresses(parsed.flags);
    const deadlineText = parsed.flags.get('deadline-ms');
    const deadlineMs = deadlineText === undefined ? 5_000 : parseWholeNumber(deadlineText, '--deadline-ms');
    client = createTallyClient({ addresses, deadlineMs, ...securityOptions(parsed.flags) });
    await run(client, command, args, parsed.flags);
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`tally: ${error.message}\n`);
      return 2;
    }
    if (error instanceof TallyError) {
      process.stderr.write(`tally: ${error.code}: ${error.message}\n`);
      return 1;
    }
    process.stderr.write(`tally: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  } finally {
    client?.close();
  }
}

process.exitCode = await main();
