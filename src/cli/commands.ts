// Every CLI command that calls a router, one case each: parse its
// arguments, make the call, print the result.
import { type TallyClient, type ConfigureOptions } from '../client/index.ts';
import { runTop } from './top.ts';
import { listPageSizeMax, memberPartitionsMax } from '../common/limits.ts';
import { recountCommand, relayCommand } from '../relay/index.ts';
import { UsageError, expectArgs, parseAmount, parseDurationMs, parseMember, parseWholeNumber } from './args.ts';
import { configureLine, formatDuration, kindNote, plural, print, ttlNote } from './format.ts';
import { checkHealth, routerAddresses, securityOptions } from './connection.ts';
import { bench } from './bench-command.ts';

export async function run(client: TallyClient, command: string, args: string[], flags: Map<string, string>): Promise<void> {
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
            `pair ${pair.pair}: ${plural(pair.shardCount, 'shard')}, epoch ${pair.epoch}${pair.draining ? ', DRAINING (no new shards)' : ''}${pair.zoneWarning ? `; WARNING: ${pair.zoneWarning}` : ''}`,
        ),
        ...status.nodes.map(
          (node) =>
            `  pair ${node.pair}  ${node.role.padEnd(8)}  ${node.address.padEnd(21)}  ${node.health.padEnd(11)}  pid ${String(node.pid).padEnd(7)}  epoch ${String(node.epoch).padEnd(3)}  ${node.inSync ? 'in sync ' : 'OUT OF SYNC'}  log ${node.nodeId.slice(0, 8) || '-'}  lsn ${node.lastLsn}${node.zone ? `  zone ${node.zone}` : ''}${node.replicationAddress ? `  replicates via ${node.replicationAddress}` : ''}${node.role === 'follower' ? `  lag ${node.replicationLagEntries} entries ${node.replicationLagMs} ms` : ''}${node.error ? `  (${node.error})` : ''}`,
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
export async function list(client: TallyClient, prefix: string, limitCount: number | undefined, json: boolean): Promise<void> {
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
export function configureOptions(flags: Map<string, string>): ConfigureOptions {
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
