// The `tally` CLI: thin commands over the client library. Readable output by
// default, --json for scripts; any error is one line on stderr and a non-zero
// exit (2 for a usage error, 1 for a failed call), never a stack trace.
import { createTallyClient, TallyError, type TallyClient, type ConfigureOptions, type CounterDescription } from '../client/index.ts';
import { runBench, runWorker, newRunId, type BenchOptions } from './bench.ts';
import fs from 'node:fs';
import { runTop } from './top.ts';
import { credentials, makeGenericClientConstructor } from '@grpc/grpc-js';
import { service as healthService } from 'grpc-health-check';
import { batchItemsMax, listPageSizeMax, memberPartitionsMax } from '../common/limits.ts';
import { parseMemberId } from '../common/validate.ts';
import { deadlineIn, monotonicNowMs } from '../common/clock.ts';
import { parseRouterList } from '../client/router-addresses.ts';
import { directoryCommand } from './directory-transfer.ts';
import { recountCommand, relayCommand } from '../relay/index.ts';

const usage = `usage: tally <command> [arguments] [--router host:port[,host:port...]] [--json] [--deadline-ms N]

commands:
  incr <counter> [amount]       add amount (default 1; may be negative) [--key K]
  get <counter>                 read a total [--cached]
  get <counter> --last D        read a windowed total over the last D (e.g. 90000, 1500ms, 30s, 15m, 1h, 7d) [--cached]
  get-many <counter>...         read several totals [--cached]
  describe <counter>            shard count, placements and heat
  ls [prefix]                   the counters whose names start with prefix, in byte order: name,
                                kind, shards [--limit N] (--json: one object per line)
  set-shards <counter> <n>      grow a counter's shard set to n
  clear <counter>               make a counter (any kind) read 0 from now on; racing increments
                                count at most once [--key K: a retry with K clears nothing more]
  delete <counter>              delete a counter: it reads 0 from now on and its next write
                                creates a new one; the nodes free its shards (admin)
  status                        every node: role, health, epoch, sync, log position, lag
  node replace <address> <new-address>
                                move a pair's follower slot to a new node (a lost disk or
                                machine); the new node is filled by snapshot install
  directory export|import (--data-dir DIR | --etcd URL [--etcd-prefix P] [--etcd-tls-ca/cert/key F]) [--file F]
                                move the whole directory between the embedded store and etcd,
                                every router stopped (export to stdout or F, import from stdin or F)
  pair add <primary> <follower> register a new node pair online: new shards may go there,
                                nothing moves (admin)
  pair drain <pair> [--undrain] stop (resume) placing new shards on a pair; its shards stay (admin)
  reconcile [counter]           recompute shards from their logs; report drift (exit 3 if any)
  configure <counter> [--autoscale on|off] [--window-bucket D --window-retention D | --no-window]
            [--membership-partitions N] [--ttl D|never|default]
                                let heat grow the counter's shards, or fix them; keep the last
                                D of a total in buckets (--no-window drops them); create a
                                membership counter with N partitions; delete the counter once
                                not written for D (never: not even under the router default;
                                default: follow the router's --counter-ttl-ms)
  distinct add <counter> <member>...
                                add members (any text) to a distinct counter
  distinct count <counter>...   estimated distinct members of the counters' union, ± its standard error
  member add|remove <counter> <member>
                                make a member (an unsigned 64-bit integer) present or absent
  member check <counter> <member>...
                                whether each member is present
  rebuild <counter> [--repair] [--verbose]
                                recount a membership counter from its members; report drift
                                (exit 0 either way); --repair corrects it
  health [--address host:port]  grpc.health.v1 check of any Tally process (default: each router);
                                exit 0 only when SERVING (for container health checks)
  top                           the hottest counters and the nodes, live [--limit N] [--iterations N]
  bench                         drive load and report throughput, latency and an exact-read check
      [--workload hot|cold|mix] [--cold-counters N] [--batch B] [--concurrency C]
      [--rate R] [--seconds S] [--procs P] [--keyed] [--no-check]
      [--coalesce]  unary increment calls through the coalescing client (no --batch)
  relay --postgres URL [--table T] [--archive-table A] [--batch N] [--relay-id ID] [--once]
      [--dead-letter-table D] [--dedup-window-ms MS] [--reconcile-every D] [--metrics-port P|any]
                                apply a PostgreSQL outbox table's rows to Tally, each exactly once
                                (docs/outbox.md); --create-table creates the tables; --resolve list
                                shows what to do with rows older than the dedup window
  recount <counter> --postgres URL --archive-table A [--table T] [--repair]
                                compare an outbox-fed counter with its archived rows; report drift
                                (exit 3 if any remains); --repair applies it as one keyed correction

The router address comes from --router, else TALLY_ROUTER, else 127.0.0.1:50051. Several
routers of one cluster, comma-separated (--router a:50051,b:50051): calls take turns over
them and pass over one that cannot be reached; a call that may have reached a router is sent
to another only when that cannot count twice (reads, keyed increments).
TLS: --tls-ca (and --tls-cert/--tls-key for a client certificate), or TALLY_TLS_CA,
TALLY_TLS_CERT, TALLY_TLS_KEY. Token: --token-file, TALLY_TOKEN_FILE or TALLY_TOKEN.`;

class UsageError extends Error {}

interface ParsedArgs {
  positional: string[];
  flags: Map<string, string>;
}

const booleanFlags = new Set([
  'json',
  'cached',
  'help',
  'keyed',
  'coalesce',
  'worker',
  'no-check',
  'no-window',
  'repair',
  'verbose',
  'undrain',
  'create-table',
  'once',
]);
const valueFlags = new Set([
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
  'batch',
  'concurrency',
  'rate',
  'seconds',
  'duration-ms',
  'procs',
  'procs-total',
  'run-id',
  'data-dir',
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

function parseArgs(argv: readonly string[]): ParsedArgs {
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

function parseWholeNumber(text: string, what: string): number {
  if (!/^\d+$/.test(text)) throw new UsageError(`${what} must be a whole number, got "${text}"`);
  return Number(text);
}

function parseAmount(text: string): bigint {
  if (!/^[+-]?\d+$/.test(text)) throw new UsageError(`amount must be an integer, got "${text}"`);
  return BigInt(text);
}

/** A membership member id, checked here so a typo is a usage error, not a call. */
function parseMember(text: string): string {
  try {
    return parseMemberId(text).toString();
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

const msPerUnit = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** A positive duration: plain milliseconds ("90000") or a whole number with a unit ("1500ms", "30s", "15m", "1h", "7d"). */
function parseDurationMs(text: string, what: string): number {
  const match = /^(\d+)(ms|s|m|h|d)?$/.exec(text);
  if (match === null) throw new UsageError(`${what} must be a duration such as 90000 (ms), 1500ms, 30s, 15m, 1h or 7d, got "${text}"`);
  // In bigint first: "99999999999999999999d" must fail as too long, not round.
  const durationMs = BigInt(match[1]!) * BigInt(msPerUnit[(match[2] ?? 'ms') as keyof typeof msPerUnit]);
  if (durationMs === 0n) throw new UsageError(`${what} must be longer than 0, got "${text}"`);
  if (durationMs > BigInt(Number.MAX_SAFE_INTEGER)) throw new UsageError(`${what} is too long, got "${text}"`);
  return Number(durationMs);
}

/** The largest unit that divides durationMs evenly: 3600000 is "1h", 1500 is "1500ms". */
/** What describe adds for counters beyond plain totals. */
function kindNote(description: CounterDescription): string {
  if (description.kind !== 'total') return `, ${description.kind} counter`;
  if (description.windowBucketMs > 0)
    return `, window ${formatDuration(description.windowRetentionMs)} in ${formatDuration(description.windowBucketMs)} buckets`;
  return '';
}

/** "ttl 7d (default)", "ttl 1h", "no ttl" or "never expires". */
function ttlNote(description: CounterDescription): string {
  if (description.ttlFrom === 'never') return 'never expires';
  if (description.ttlMs === 0) return 'no ttl';
  return `ttl ${formatDuration(description.ttlMs)}${description.ttlFrom === 'default' ? ' (default)' : ''}`;
}

function formatDuration(durationMs: number): string {
  for (const unit of ['d', 'h', 'm', 's'] as const) {
    if (durationMs > 0 && durationMs % msPerUnit[unit] === 0) return `${durationMs / msPerUnit[unit]}${unit}`;
  }
  return `${durationMs}ms`;
}

function plural(count: number | bigint, noun: string): string {
  return `${count} ${noun}${count === 1 || count === 1n ? '' : 's'}`;
}

function expectArgs(args: string[], count: number, shape: string): void {
  if (args.length !== count) throw new UsageError(`expected: tally ${shape}`);
}

function print(json: boolean, value: unknown, text: string): void {
  process.stdout.write(
    json ? `${JSON.stringify(value, (_key, field) => (typeof field === 'bigint' ? field.toString() : field))}\n` : `${text}\n`,
  );
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
      print(
        json,
        { counter: args[0], amount, ...result },
        `${result.applied ? 'applied' : 'duplicate (not applied again)'}: ${args[0]} ${amount >= 0n ? '+' : ''}${amount} on shard ${result.shard}`,
      );
      return;
    }
    case 'get': {
      expectArgs(args, 1, 'get <counter> [--last D]');
      const lastText = flags.get('last');
      if (lastText !== undefined) {
        const lastMs = parseDurationMs(lastText, '--last');
        const window = await client.readWindow(args[0]!, lastMs, { consistency });
        const range = `${plural(window.buckets, 'bucket')} of ${formatDuration(window.bucketMs)}, ${new Date(window.fromUnixMs).toISOString()} to ${new Date(window.toUnixMs).toISOString()}`;
        print(
          json,
          { ...window, lastMs },
          `${window.counter} = ${window.total} in the last ${formatDuration(lastMs)} (${window.exact ? 'exact' : `cached, ${window.stalenessMs} ms old`}; ${range})`,
        );
        return;
      }
      const read = await client.read(args[0]!, { consistency });
      print(
        json,
        read,
        `${read.counter} = ${read.total}${read.exact ? ' (exact' : ` (cached, ${read.stalenessMs} ms old`}, ${read.shards} shard${read.shards === 1 ? '' : 's'})`,
      );
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
        `${description.counter}: ${description.shards} shard${description.shards === 1 ? '' : 's'}, heat ${description.heatPerSec.toFixed(1)} increments/s (peak ${description.peakPerSec.toFixed(1)}), skew ${description.skew.toFixed(2)}, autoscale ${description.autoscale ? 'on' : 'off'}${kindNote(description)}, created ${new Date(description.createdUnixMs).toISOString()}${description.ttlMs > 0 ? `, ${ttlNote(description)}, idle ${formatDuration(Math.floor(description.idleMs / 1_000) * 1_000 || description.idleMs)}` : ''}`,
        ...description.placements.map(
          (placement) =>
            `  shard ${placement.shard} (id ${placement.shardId})  pair ${placement.pair}  primary ${placement.primary}  follower ${placement.follower}  epoch ${placement.epoch}`,
        ),
      ];
      print(json, description, lines.join('\n'));
      return;
    }
    case 'ls': {
      if (args.length > 1) throw new UsageError('expected: tally ls [prefix] [--limit N]');
      await list(client, args[0] ?? '', flags.has('limit') ? parseWholeNumber(flags.get('limit')!, '--limit') : undefined, json);
      return;
    }
    case 'set-shards': {
      expectArgs(args, 2, 'set-shards <counter> <n>');
      const shards = parseWholeNumber(args[1]!, 'n');
      const result = await client.setShards(args[0]!, shards);
      print(json, { counter: args[0], ...result }, `${args[0]}: ${result.previousShards} -> ${result.shards} shards`);
      return;
    }
    case 'clear': {
      expectArgs(args, 1, 'clear <counter> [--key K]');
      const result = await client.clear(args[0]!, { idempotencyKey: flags.get('key') });
      const pending = result.shardsPending === 0 ? '' : `; ${result.shardsPending} not yet confirmed by their node (they read 0)`;
      print(
        json,
        result,
        result.applied
          ? `cleared ${result.counter} (generation ${result.generation}, ${plural(result.shards, 'shard')}${pending})`
          : `already cleared with this key: ${result.counter} (generation ${result.generation}); nothing more cleared`,
      );
      return;
    }
    case 'delete': {
      expectArgs(args, 1, 'delete <counter>');
      const result = await client.deleteCounter(args[0]!);
      const pending =
        result.shardsPending === 0 ? '' : `; ${result.shardsPending} not yet confirmed by their node (the router keeps sending the drop)`;
      print(json, result, `deleted ${result.counter} (${plural(result.shards, 'shard')} freed${pending})`);
      return;
    }
    case 'status': {
      expectArgs(args, 0, 'status');
      const status = await client.clusterStatus();
      const lines = [
        `${status.counters} counter${status.counters === 1 ? '' : 's'} in the directory (${status.directoryStore}); router ${status.router}; supervisor ${status.supervisor || 'none (no router holds the lease)'}`,
        ...(status.routers.length > 1 ? [`routers: ${status.routers.join(', ')}`] : []),
        ...status.pairs.map(
          (pair) =>
            `pair ${pair.pair}: ${plural(pair.shardCount, 'shard')}, epoch ${pair.epoch}${pair.draining ? ', DRAINING (no new shards)' : ''}`,
        ),
        ...status.nodes.map(
          (node) =>
            `  pair ${node.pair}  ${node.role.padEnd(8)}  ${node.address.padEnd(21)}  ${node.health.padEnd(11)}  pid ${String(node.pid).padEnd(7)}  epoch ${String(node.epoch).padEnd(3)}  ${node.inSync ? 'in sync ' : 'OUT OF SYNC'}  log ${node.nodeId.slice(0, 8) || '-'}  lsn ${node.lastLsn}${node.role === 'follower' ? `  lag ${node.replicationLagEntries} entries ${node.replicationLagMs} ms` : ''}${node.error ? `  (${node.error})` : ''}`,
        ),
      ];
      print(json, status, lines.join('\n'));
      return;
    }
    case 'pair': {
      if (args[0] === 'add' && args.length === 3) {
        const pair = await client.addPair(args[1]!, args[2]!);
        print(json, pair, `pair ${pair.pair} added: primary ${pair.primary}, follower ${pair.follower}; new shards may be placed on it`);
        return;
      }
      if (args[0] === 'drain' && args.length === 2) {
        const index = Number(args[1]);
        if (!Number.isInteger(index) || index < 0)
          throw new UsageError(`pair must be a pair number (tally status lists them), got ${args[1]}`);
        const pair = await client.drainPair(index, { undrain: flags.has('undrain') });
        print(
          json,
          pair,
          pair.draining
            ? `pair ${pair.pair} is draining: no new shards go there; its ${plural(pair.shardCount, 'shard')} stay and serve`
            : `pair ${pair.pair} takes new shards again`,
        );
        return;
      }
      throw new UsageError('expected: tally pair add <primary> <follower> | tally pair drain <pair> [--undrain]');
    }
    case 'node': {
      if (args[0] !== 'replace' || args.length !== 3) throw new UsageError('expected: tally node replace <address> <new-address>');
      const result = await client.replaceNode(args[1]!, args[2]!);
      print(
        json,
        result,
        `pair ${result.pair}: primary ${result.primary}, follower ${result.follower} (to be filled by snapshot install), epoch ${result.epoch}`,
      );
      return;
    }
    case 'reconcile': {
      if (args.length > 1) throw new UsageError('expected: tally reconcile [counter]');
      const report = await client.reconcile(args[0]);
      const lines = [
        `${report.shardsChecked} shard${report.shardsChecked === 1 ? '' : 's'} checked, ${report.shardsDrifting} drifting`,
        ...report.pairs.map(
          (pair) =>
            `  pair ${pair.pair}: primary lsn ${pair.primaryLsn}, follower ${pair.followerChecked ? `lsn ${pair.followerLsn}` : 'not compared'}${pair.note ? ` (${pair.note})` : ''}`,
        ),
        ...report.shards.map(
          (shard) =>
            `  shard ${shard.shardId}${shard.counter ? ` (${shard.counter})` : ''} pair ${shard.pair}: primary memory ${shard.primaryMemory} log ${shard.primaryLog}; follower memory ${shard.followerMemory} log ${shard.followerLog}; drift ${shard.primaryDrift}/${shard.followerDrift}/${shard.replicaDrift}`,
        ),
      ];
      print(json, report, lines.join('\n'));
      if (report.shardsDrifting > 0) process.exitCode = 3;
      return;
    }
    case 'health': {
      expectArgs(args, 0, 'health [--address host:port] [--service name]');
      // Every router of the list: a health check answers for one process each.
      const addresses = flags.has('address') ? [flags.get('address')!] : routerAddresses(flags);
      const checks = await Promise.all(
        addresses.map(async (address) => ({
          address,
          status: await checkHealth(address, flags.get('service') ?? '', Number(flags.get('deadline-ms') ?? 2_000), securityOptions(flags)),
        })),
      );
      print(json, checks.length === 1 ? checks[0] : checks, checks.map((check) => `${check.address}: ${check.status}`).join('\n'));
      if (checks.some((check) => check.status !== 'SERVING')) process.exitCode = 1;
      return;
    }
    case 'configure': {
      expectArgs(
        args,
        1,
        'configure <counter> [--autoscale on|off] [--window-bucket D --window-retention D | --no-window] [--membership-partitions N] [--ttl D|never|default]',
      );
      const options = configureOptions(flags);
      const description = await client.configure(args[0]!, options);
      print(json, description, configureLine(description, options));
      return;
    }
    case 'distinct': {
      const [action, counter, ...rest] = args;
      if (action === 'add' && counter !== undefined && rest.length > 0) {
        const result = await client.addDistinct(counter, rest);
        print(
          json,
          { counter, members: rest.length, ...result },
          `${counter}: ${plural(result.registersChanged, 'register')} changed (${plural(rest.length, 'member')} given)`,
        );
        return;
      }
      if (action === 'count' && counter !== undefined) {
        const counters = [counter, ...rest];
        const count = await client.countDistinct(counters);
        const name = counters.length === 1 ? counter : `union of ${counters.join(', ')}`;
        print(
          json,
          { counters, ...count },
          `${name}: ${count.estimate} distinct ± ${(count.standardError * 100).toFixed(2)}% (${plural(count.shards, 'shard')})`,
        );
        return;
      }
      throw new UsageError('expected: tally distinct add <counter> <member>... or tally distinct count <counter>...');
    }
    case 'member': {
      const [action, counter, ...rest] = args;
      if ((action === 'add' || action === 'remove') && counter !== undefined && rest.length === 1) {
        const member = parseMember(rest[0]!);
        const result = await client.setMember(counter, member, action === 'add');
        print(
          json,
          { counter, member, present: action === 'add', ...result },
          `changed: ${result.changed ? 'yes' : 'no'}\ncount: ${result.count ?? 'unavailable now (a pair of the counter cannot be read)'}`,
        );
        return;
      }
      if (action === 'check' && counter !== undefined && rest.length > 0) {
        const members = rest.map(parseMember);
        const present = await client.isMember(counter, members);
        print(
          json,
          members.map((member, index) => ({ member, present: present[index] })),
          members.map((member, index) => `${member} ${present[index] ? 'present' : 'absent'}`).join('\n'),
        );
        return;
      }
      throw new UsageError('expected: tally member add|remove <counter> <member> or tally member check <counter> <member>...');
    }
    case 'rebuild': {
      expectArgs(args, 1, 'rebuild <counter> [--repair] [--verbose]');
      const report = await client.rebuild(args[0]!, { repair: flags.has('repair') });
      const advice = report.drift !== 0n && !report.repaired ? ' (tally rebuild --repair corrects it)' : '';
      const lines = [
        `${report.counter}: members ${report.members}, stored count ${report.storedCount}, drift: ${report.drift}, repaired: ${report.repaired ? 'yes' : 'no'}${advice}`,
        ...report.partitions
          .filter((partition) => flags.has('verbose') || partition.drift !== 0n)
          .map(
            (partition) =>
              `  partition ${partition.partition} (shard id ${partition.shardId}, pair ${partition.pair}): members ${partition.members}, stored count ${partition.storedCount}, drift: ${partition.drift}${partition.repaired !== 0n ? `, corrected by ${partition.repaired}` : ''}`,
          ),
      ];
      // A report, not a check: drift is stated plainly, and exit stays 0.
      print(json, report, lines.join('\n'));
      return;
    }
    case 'top': {
      expectArgs(args, 0, 'top [--limit N] [--iterations N]');
      const whole = (name: string, fallback: number): number =>
        flags.has(name) ? parseWholeNumber(flags.get(name)!, `--${name}`) : fallback;
      await runTop(client, {
        router: routerAddresses(flags).join(','),
        limit: whole('limit', 20),
        iterations: whole('iterations', 0),
        intervalMs: Math.max(100, whole('interval-ms', 1_000)),
      });
      return;
    }
    case 'relay':
      await relayCommand(client, args, flags, (message) => new UsageError(message));
      return;
    case 'recount':
      await recountCommand(client, args, flags, (message) => new UsageError(message));
      return;
    case 'bench': {
      expectArgs(args, 0, 'bench [flags]');
      await bench(flags, json);
      return;
    }
    default:
      throw new UsageError(`unknown command "${command}"`);
  }
}

/**
 * Prints counters as the pages arrive (a listing may be millions of names),
 * one per line; --json makes each line a JSON object. With limitCount, stops
 * there and says on stderr when more follow.
 */
async function list(client: TallyClient, prefix: string, limitCount: number | undefined, json: boolean): Promise<void> {
  if (limitCount === 0) throw new UsageError('--limit must be at least 1');
  let printedCount = 0;
  let pageToken = '';
  do {
    const pageSize = Math.min(listPageSizeMax, limitCount === undefined ? listPageSizeMax : limitCount - printedCount);
    const page = await client.listCounters({ prefix, pageToken, pageSize });
    const lines = page.counters.map((counter) =>
      json
        ? JSON.stringify(counter)
        : `${counter.name}  ${counter.kind}  ${plural(counter.shards, counter.kind === 'membership' ? 'partition' : 'shard')}${counter.ttlMs > 0 ? `  ttl ${formatDuration(counter.ttlMs)}` : ''}`,
    );
    if (lines.length > 0) process.stdout.write(`${lines.join('\n')}\n`);
    printedCount += lines.length;
    pageToken = page.nextPageToken;
  } while (pageToken !== '' && (limitCount === undefined || printedCount < limitCount));
  if (pageToken !== '') process.stderr.write(`tally: stopped at --limit ${limitCount}; more counters follow\n`);
}

/** What configure changes; each flag is optional but at least one is needed. */
function configureOptions(flags: Map<string, string>): ConfigureOptions {
  const options: ConfigureOptions = {};
  const autoscale = flags.get('autoscale');
  if (autoscale !== undefined) {
    if (autoscale !== 'on' && autoscale !== 'off') throw new UsageError('--autoscale must be on or off');
    options.autoscale = autoscale === 'on';
  }
  const bucketText = flags.get('window-bucket');
  const retentionText = flags.get('window-retention');
  if (flags.has('no-window')) {
    if (bucketText !== undefined || retentionText !== undefined)
      throw new UsageError('--no-window goes without --window-bucket and --window-retention');
    options.window = { bucketMs: 0, retentionMs: 0 };
  } else if (bucketText !== undefined || retentionText !== undefined) {
    if (bucketText === undefined || retentionText === undefined) throw new UsageError('--window-bucket and --window-retention go together');
    options.window = {
      bucketMs: parseDurationMs(bucketText, '--window-bucket'),
      retentionMs: parseDurationMs(retentionText, '--window-retention'),
    };
  }
  const partitionsText = flags.get('membership-partitions');
  if (partitionsText !== undefined) {
    const partitions = parseWholeNumber(partitionsText, '--membership-partitions');
    if (partitions < 1 || partitions > memberPartitionsMax)
      throw new UsageError(`--membership-partitions must be between 1 and ${memberPartitionsMax}, got ${partitions}`);
    options.membershipPartitions = partitions;
  }
  const ttlText = flags.get('ttl');
  if (ttlText !== undefined) options.ttlMs = ttlText === 'never' || ttlText === 'default' ? ttlText : parseDurationMs(ttlText, '--ttl');
  if (
    options.autoscale === undefined &&
    options.window === undefined &&
    options.membershipPartitions === undefined &&
    options.ttlMs === undefined
  ) {
    throw new UsageError(
      'configure needs --autoscale on|off, --window-bucket with --window-retention, --no-window, --membership-partitions or --ttl',
    );
  }
  return options;
}

/** "c: autoscale on, 1 shard" as before, with the kind and window when there is something to say. */
function configureLine(description: CounterDescription, options: ConfigureOptions): string {
  const kind = description.kind === 'total' ? '' : `${description.kind} counter, `;
  const shards = plural(description.shards, description.kind === 'membership' ? 'partition' : 'shard');
  const window =
    description.windowBucketMs > 0
      ? `, window ${formatDuration(description.windowRetentionMs)} in ${formatDuration(description.windowBucketMs)} buckets`
      : options.window !== undefined
        ? ', no window'
        : '';
  return `${description.counter}: ${kind}autoscale ${description.autoscale ? 'on' : 'off'}, ${shards}${window}${options.ttlMs !== undefined ? `, ${ttlNote(description)}` : ''}`;
}

/** The routers of --router, else TALLY_ROUTER, else the local default; a malformed list is a usage error. */
function routerAddresses(flags: Map<string, string>): string[] {
  const flag = flags.get('router');
  const [text, what] =
    flag !== undefined
      ? [flag, '--router']
      : process.env.TALLY_ROUTER !== undefined
        ? [process.env.TALLY_ROUTER, 'TALLY_ROUTER']
        : ['127.0.0.1:50051', 'router'];
  try {
    return parseRouterList(text, what);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

/** TLS files and the token, from flags or TALLY_* environment (never the token itself on the command line). */
function securityOptions(flags: Map<string, string>): { tls?: { ca: Buffer; cert?: Buffer; key?: Buffer }; token?: string } {
  const read = (file: string, what: string): Buffer => {
    try {
      return fs.readFileSync(file);
    } catch (error) {
      throw new UsageError(`cannot read ${what} ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
    }
  };
  const caFile = flags.get('tls-ca') ?? process.env.TALLY_TLS_CA;
  const certFile = flags.get('tls-cert') ?? process.env.TALLY_TLS_CERT;
  const keyFile = flags.get('tls-key') ?? process.env.TALLY_TLS_KEY;
  if ((certFile === undefined) !== (keyFile === undefined)) throw new UsageError('--tls-cert and --tls-key go together');
  if (certFile !== undefined && caFile === undefined) throw new UsageError('--tls-cert needs --tls-ca');
  const tokenFile = flags.get('token-file') ?? process.env.TALLY_TOKEN_FILE;
  const token = tokenFile !== undefined ? read(tokenFile, '--token-file').toString('utf8').trim() : process.env.TALLY_TOKEN;
  return {
    tls:
      caFile === undefined
        ? undefined
        : {
            ca: read(caFile, '--tls-ca'),
            cert: certFile === undefined ? undefined : read(certFile, '--tls-cert'),
            key: keyFile === undefined ? undefined : read(keyFile, '--tls-key'),
          },
    token,
  };
}

/** grpc.health.v1 Check against any process; a failed call is NOT_SERVING's cousin, UNREACHABLE. */
function checkHealth(address: string, service: string, deadlineMs: number, security: ReturnType<typeof securityOptions>): Promise<string> {
  const HealthClient = makeGenericClientConstructor(healthService as never, 'Health');
  const channelCredentials =
    security.tls === undefined
      ? credentials.createInsecure()
      : credentials.createSsl(security.tls.ca, security.tls.key ?? null, security.tls.cert ?? null);
  const client = new HealthClient(address, channelCredentials) as unknown as {
    check(request: object, options: object, callback: (error: Error | null, response?: { status: string }) => void): void;
    close(): void;
  };
  return new Promise((resolve) => {
    client.check({ service }, { deadline: deadlineIn(deadlineMs) }, (error, response) => {
      client.close();
      resolve(error || response === undefined ? 'UNREACHABLE' : response.status);
    });
  });
}

function benchOptions(flags: Map<string, string>, router: string): BenchOptions {
  const workload = flags.get('workload') ?? 'hot';
  if (workload !== 'hot' && workload !== 'cold' && workload !== 'mix')
    throw new UsageError(`--workload must be hot, cold or mix, got "${workload}"`);
  const whole = (name: string, fallback: number, min: number, max: number): number => {
    const text = flags.get(name);
    if (text === undefined) return fallback;
    const value = parseWholeNumber(text, `--${name}`);
    if (value < min || value > max) throw new UsageError(`--${name} must be between ${min} and ${max}, got ${value}`);
    return value;
  };
  const seconds = whole('seconds', 10, 1, 3_600);
  const coalesce = flags.has('coalesce');
  if (coalesce && flags.has('batch')) throw new UsageError('--coalesce drives unary increment calls; it takes no --batch');
  return {
    router,
    workload,
    coldCounters: whole('cold-counters', 1_000, 1, 10_000_000),
    keyed: flags.has('keyed'),
    batch: whole('batch', 1, 1, batchItemsMax),
    coalesce,
    concurrency: whole('concurrency', 64, 1, 10_000),
    ratePerSec: whole('rate', 0, 0, 100_000_000),
    durationMs: whole('duration-ms', seconds * 1000, 100, 3_600_000),
    procs: whole('procs-total', whole('procs', 1, 1, 64), 1, 64),
    runId: flags.get('run-id') ?? newRunId(),
    check: !flags.has('no-check'),
    security: securityOptions(flags),
    securityFlags: ['tls-ca', 'tls-cert', 'tls-key'].flatMap((name) => (flags.has(name) ? [`--${name}`, flags.get(name)!] : [])),
  };
}

async function bench(flags: Map<string, string>, json: boolean): Promise<void> {
  const options = benchOptions(flags, routerAddresses(flags).join(','));
  if (flags.has('worker')) {
    // A worker of a multi-process bench: JSON lines on stdout for the parent.
    const result = await runWorker(options, (ok, errors, p99) =>
      process.stdout.write(`${JSON.stringify({ progress: { ok, errors, p99 } })}\n`),
    );
    process.stdout.write(`${JSON.stringify({ result })}\n`);
    return;
  }
  const startedMs = monotonicNowMs();
  const tty = process.stderr.isTTY === true;
  const summary = await runBench(options, (ok, errors, p99) => {
    const elapsedSec = (monotonicNowMs() - startedMs) / 1000;
    const line = `${elapsedSec.toFixed(0)}s  ${Math.round(ok / elapsedSec).toLocaleString('en-US')} increments/s  errors ${errors}  p99 ${p99.toFixed(2)} ms`;
    process.stderr.write(tty ? `\r${line.padEnd(70)}` : `${line}\n`);
  });
  if (tty) process.stderr.write('\n');
  const lines = [
    `${summary.workload} workload, ${summary.keyed ? 'keyed' : 'unkeyed'}, ${summary.coalesce ? 'unary through the coalescing client' : summary.batch === 1 ? 'unary' : `batches of ${summary.batch}`}, ${summary.concurrency} in flight x ${summary.procs} process${summary.procs === 1 ? '' : 'es'}, ${(summary.durationMs / 1000).toFixed(1)} s`,
    `throughput  ${summary.incrementsPerSec.toLocaleString('en-US')} increments/s (${summary.callsPerSec.toLocaleString('en-US')} calls/s), ${summary.okIncrements.toLocaleString('en-US')} acknowledged`,
    `latency     p50 ${summary.latencyMs.p50.toFixed(2)} ms  p99 ${summary.latencyMs.p99.toFixed(2)} ms  p999 ${summary.latencyMs.p999.toFixed(2)} ms  max ${summary.latencyMs.max.toFixed(2)} ms`,
    `errors      ${
      Object.keys(summary.errors).length === 0
        ? 'none'
        : Object.entries(summary.errors)
            .map(([code, count]) => `${code} ${count}`)
            .join(', ')
    }`,
    summary.check === undefined
      ? 'check       skipped'
      : `check       ${summary.check.passed ? 'passed' : 'FAILED'}: exact totals of ${summary.check.counters} counter${summary.check.counters === 1 ? '' : 's'} ${summary.check.passed ? 'match the acknowledged sums' : `disagree: ${summary.check.failures.join('; ')}`}`,
  ];
  print(json, summary, lines.join('\n'));
  if (summary.check !== undefined && !summary.check.passed) process.exitCode = 3;
}

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
