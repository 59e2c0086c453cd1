// The `tally` CLI: thin commands over the client library. Readable output by
// default, --json for scripts; any error is one line on stderr and a non-zero
// exit (2 for a usage error, 1 for a failed call), never a stack trace.
import { createTallyClient, TallyError, type TallyClient } from './index.ts';

const usage = `usage: tally <command> [arguments] [--router host:port] [--json] [--deadline-ms N]

commands:
  incr <counter> [amount]       add amount (default 1; may be negative) [--key K]
  get <counter>                 read a total [--cached]
  get-many <counter>...         read several totals [--cached]
  describe <counter>            shard count, placements and heat
  set-shards <counter> <n>      grow a counter's shard set to n
  status                        every node: role, health, epoch, sync, log position, lag
  reconcile [counter]           recompute shards from their logs; report drift (exit 3 if any)

The router address comes from --router, else TALLY_ROUTER, else 127.0.0.1:50051.`;

class UsageError extends Error {}

interface ParsedArgs {
  positional: string[];
  flags: Map<string, string>;
}

const booleanFlags = new Set(['json', 'cached', 'help']);
const valueFlags = new Set(['router', 'key', 'deadline-ms']);

function parseArgs(argv: readonly string[]): ParsedArgs {
  const positional: string[] = [];
  const flags = new Map<string, string>();
  for (let index = 0; index < argv.length; index++) {
    const arg = argv[index]!;
    // A lone "-5" is a negative amount, not a flag.
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

function parseWholeNumber(text: string, what: string): number {
  if (!/^\d+$/.test(text)) throw new UsageError(`${what} must be a whole number, got "${text}"`);
  return Number(text);
}

function parseAmount(text: string): bigint {
  if (!/^[+-]?\d+$/.test(text)) throw new UsageError(`amount must be an integer, got "${text}"`);
  return BigInt(text);
}

function expectArgs(args: string[], count: number, shape: string): void {
  if (args.length !== count) throw new UsageError(`expected: tally ${shape}`);
}

function print(json: boolean, value: unknown, text: string): void {
  process.stdout.write(json ? `${JSON.stringify(value, (_key, field) => (typeof field === 'bigint' ? field.toString() : field))}\n` : `${text}\n`);
}

async function run(client: TallyClient, command: string, args: string[], flags: Map<string, string>): Promise<void> {
  const json = flags.has('json');
  const consistency = flags.has('cached') ? ('cached' as const) : ('exact' as const);
  switch (command) {
    case 'incr': {
      if (args.length < 1 || args.length > 2) throw new UsageError('expected: tally incr <counter> [amount]');
      const amount = args[1] === undefined ? 1n : parseAmount(args[1]);
      // Without --key the client makes a key, so its own retries cannot count twice.
      const result = await client.increment(args[0]!, amount, { idempotencyKey: flags.get('key') });
      print(json, { counter: args[0], amount, ...result }, `${result.applied ? 'applied' : 'duplicate (not applied again)'}: ${args[0]} ${amount >= 0n ? '+' : ''}${amount} on shard ${result.shard}`);
      return;
    }
    case 'get': {
      expectArgs(args, 1, 'get <counter>');
      const read = await client.read(args[0]!, { consistency });
      print(json, read, `${read.counter} = ${read.total}${read.exact ? ' (exact' : ` (cached, ${read.stalenessMs} ms old`}, ${read.shards} shard${read.shards === 1 ? '' : 's'})`);
      return;
    }
    case 'get-many': {
      if (args.length === 0) throw new UsageError('expected: tally get-many <counter>...');
      const reads = await client.readMany(args, { consistency });
      const width = Math.max(...reads.map((read) => read.counter.length));
      print(json, reads, reads.map((read) => `${read.counter.padEnd(width)}  ${read.total}`).join('\n'));
      return;
    }
    case 'describe': {
      expectArgs(args, 1, 'describe <counter>');
      const description = await client.describe(args[0]!);
      const lines = [
        `${description.counter}: ${description.shards} shard${description.shards === 1 ? '' : 's'}, heat ${description.heatPerSec.toFixed(1)} increments/s, created ${new Date(description.createdUnixMs).toISOString()}`,
        ...description.placements.map((placement) => `  shard ${placement.shard} (id ${placement.shardId})  pair ${placement.pair}  primary ${placement.primary}  follower ${placement.follower}  epoch ${placement.epoch}`),
      ];
      print(json, description, lines.join('\n'));
      return;
    }
    case 'set-shards': {
      expectArgs(args, 2, 'set-shards <counter> <n>');
      const shards = parseWholeNumber(args[1]!, 'n');
      const result = await client.setShards(args[0]!, shards);
      print(json, { counter: args[0], ...result }, `${args[0]}: ${result.previousShards} -> ${result.shards} shards`);
      return;
    }
    case 'status': {
      expectArgs(args, 0, 'status');
      const status = await client.clusterStatus();
      const lines = [
        `${status.counters} counter${status.counters === 1 ? '' : 's'} in the directory`,
        ...status.nodes.map(
          (node) =>
            `  pair ${node.pair}  ${node.role.padEnd(8)}  ${node.address.padEnd(21)}  ${node.health.padEnd(11)}  pid ${String(node.pid).padEnd(7)}  epoch ${String(node.epoch).padEnd(3)}  ${node.inSync ? 'in sync ' : 'OUT OF SYNC'}  lsn ${node.lastLsn}${node.role === 'follower' ? `  lag ${node.replicationLagEntries} entries ${node.replicationLagMs} ms` : ''}${node.error ? `  (${node.error})` : ''}`,
        ),
      ];
      print(json, status, lines.join('\n'));
      return;
    }
    case 'reconcile': {
      if (args.length > 1) throw new UsageError('expected: tally reconcile [counter]');
      const report = await client.reconcile(args[0]);
      const lines = [
        `${report.shardsChecked} shard${report.shardsChecked === 1 ? '' : 's'} checked, ${report.shardsDrifting} drifting`,
        ...report.pairs.map((pair) => `  pair ${pair.pair}: primary lsn ${pair.primaryLsn}, follower ${pair.followerChecked ? `lsn ${pair.followerLsn}` : 'not compared'}${pair.note ? ` (${pair.note})` : ''}`),
        ...report.shards.map(
          (shard) =>
            `  shard ${shard.shardId}${shard.counter ? ` (${shard.counter})` : ''} pair ${shard.pair}: primary memory ${shard.primaryMemory} log ${shard.primaryLog}; follower memory ${shard.followerMemory} log ${shard.followerLog}; drift ${shard.primaryDrift}/${shard.followerDrift}/${shard.replicaDrift}`,
        ),
      ];
      print(json, report, lines.join('\n'));
      if (report.shardsDrifting > 0) process.exitCode = 3;
      return;
    }
    default:
      throw new UsageError(`unknown command "${command}"`);
  }
}

async function main(): Promise<number> {
  let parsed: ParsedArgs;
  try {
    parsed = parseArgs(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`tally: ${(error as Error).message}\n${usage}\n`);
    return 2;
  }
  const [command, ...args] = parsed.positional;
  if (parsed.flags.has('help') || command === undefined || command === 'help') {
    process.stdout.write(`${usage}\n`);
    return command === undefined && !parsed.flags.has('help') ? 2 : 0;
  }
  const address = parsed.flags.get('router') ?? process.env.TALLY_ROUTER ?? '127.0.0.1:50051';
  let client: TallyClient | undefined;
  try {
    const deadlineText = parsed.flags.get('deadline-ms');
    const deadlineMs = deadlineText === undefined ? 5_000 : parseWholeNumber(deadlineText, '--deadline-ms');
    client = createTallyClient({ address, deadlineMs });
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
