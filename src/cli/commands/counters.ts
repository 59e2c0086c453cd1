// The CLI's counter commands: increments, reads, listing, sizing, clearing,
// deleting and per-counter settings, each one spec (command-spec.ts) with its
// flags and its run. Output goes through print (readable, or --json).
import type { ConfigureOptions, ReadResult, TallyClient } from '../../client/index.ts';
import { listPageSizeMax } from '../../wire/index.ts';
import { UsageError, expectArgs, parseAmount, parseDurationMs, parseMember, parseWholeNumber } from '../args.ts';
import type { CommandContext, CommandSpec } from '../command-spec.ts';
import { configureLine, formatDuration, kindNote, plural, print, ttlNote } from '../format.ts';

/** The client of a command that calls routers (its spec leaves router at its default, true). */
export function clientOf(context: CommandContext): TallyClient {
  if (context.client === undefined) throw new Error('a router command ran without a client');
  return context.client;
}

const cached = { help: 'read the cached total (refreshed every second) instead of summing every shard now' };

const consistencyOf = (flags: Map<string, string>): 'cached' | 'exact' => (flags.has('cached') ? 'cached' : 'exact');

const global = { help: "add every peer region's last received total (docs/regions.md): never exact; each region's part and age shown" };

const scopeOf = (flags: Map<string, string>): 'global' | 'region' => (flags.has('global') ? 'global' : 'region');

/** A global read's parts: one line each, the answering region first. */
function regionLines(read: ReadResult): string[] {
  return (read.regions ?? []).map(
    (part) => `  ${part.region || '(this region)'}${part.home ? ' (home)' : ''} = ${part.total}, ${part.stalenessMs} ms old`,
  );
}

export const counterCommands: CommandSpec[] = [
  {
    name: 'incr',
    synopsis: '<counter> [amount]',
    summary: 'add amount (default 1; may be negative) to a counter',
    flags: { key: { value: 'K', help: 'idempotency key: a retry with the same K applies once (default: one the client makes)' } },
    async run(context) {
      const { args, flags, json } = context;
      if (args.length < 1 || args.length > 2) throw new UsageError('expected: tally incr <counter> [amount]');
      const amount = args[1] === undefined ? 1n : parseAmount(args[1]);
      // Without --key the client makes a key, so its own retries cannot count twice.
      const result = await clientOf(context).increment(args[0]!, amount, { idempotencyKey: flags.get('key') });
      print(
        json,
        { counter: args[0], amount, ...result },
        `${result.applied ? 'applied' : 'duplicate (not applied again)'}: ${args[0]} ${amount >= 0n ? '+' : ''}${amount} on shard ${result.shard}`,
      );
    },
  },
  {
    name: 'get',
    synopsis: '<counter>',
    summary: "read a counter's total; with --last D, a windowed total over the last D",
    flags: {
      cached,
      global,
      last: { value: 'D', help: 'sum the window buckets of the last D (90000, 1500ms, 30s, 15m, 1h, 7d)' },
    },
    async run(context) {
      const { args, flags, json } = context;
      const client = clientOf(context);
      expectArgs(args, 1, 'get <counter> [--last D]');
      const consistency = consistencyOf(flags);
      const lastText = flags.get('last');
      if (lastText !== undefined && flags.has('global'))
        throw new UsageError('--last reads a window, and windows are region-local: drop --global');
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
      const scope = scopeOf(flags);
      const read = await client.read(args[0]!, { consistency, scope });
      if (scope === 'global') {
        print(
          json,
          read,
          [
            `${read.counter} = ${read.total} (global over ${plural(read.regions?.length ?? 1, 'region')}, up to ${read.stalenessMs} ms old)`,
            ...regionLines(read),
          ].join('\n'),
        );
        return;
      }
      print(
        json,
        read,
        `${read.counter} = ${read.total}${read.exact ? ' (exact' : ` (cached, ${read.stalenessMs} ms old`}, ${read.shards} shard${read.shards === 1 ? '' : 's'})`,
      );
    },
  },
  {
    name: 'get-many',
    synopsis: '<counter>...',
    summary: 'read several totals in one call',
    flags: { cached, global },
    async run(context) {
      const { args, flags, json } = context;
      if (args.length === 0) throw new UsageError('expected: tally get-many <counter>...');
      const reads = await clientOf(context).readMany(args, { consistency: consistencyOf(flags), scope: scopeOf(flags) });
      const width = Math.max(...reads.map((read) => read.counter.length));
      print(json, reads, reads.map((read) => `${read.counter.padEnd(width)}  ${read.total}`).join('\n'));
    },
  },
  {
    name: 'describe',
    synopsis: '<counter>',
    summary: "a counter's shard count, placements and heat",
    flags: {},
    async run(context) {
      const { args, json } = context;
      expectArgs(args, 1, 'describe <counter>');
      const description = await clientOf(context).describe(args[0]!);
      const lines = [
        `${description.counter}: ${description.shards} shard${description.shards === 1 ? '' : 's'}, heat ${description.heatPerSec.toFixed(1)} increments/s (peak ${description.peakPerSec.toFixed(1)}), skew ${description.skew.toFixed(2)}, autoscale ${description.autoscale ? 'on' : 'off'}${kindNote(description)}, created ${new Date(description.createdUnixMs).toISOString()}${description.ttlMs > 0 ? `, ${ttlNote(description)}, idle ${formatDuration(Math.floor(description.idleMs / 1_000) * 1_000 || description.idleMs)}` : ''}`,
        ...description.placements.map(
          (placement) =>
            `  shard ${placement.shard} (id ${placement.shardId})  pair ${placement.pair}  primary ${placement.primary}  follower ${placement.follower}  epoch ${placement.epoch}`,
        ),
      ];
      print(json, description, lines.join('\n'));
    },
  },
  {
    name: 'ls',
    synopsis: '[prefix]',
    summary: 'the counters whose names start with prefix, in byte order: name, kind, shards (--json: one object per line)',
    flags: { limit: { value: 'N', help: 'stop after N counters (says on stderr when more follow)' } },
    async run(context) {
      const { args, flags, json } = context;
      if (args.length > 1) throw new UsageError('expected: tally ls [prefix] [--limit N]');
      await list(clientOf(context), args[0] ?? '', flags.has('limit') ? parseWholeNumber(flags.get('limit')!, '--limit') : undefined, json);
    },
  },
  {
    name: 'set-shards',
    synopsis: '<counter> <n>',
    summary: "grow a counter's shard set to n (online; nothing moves)",
    flags: {},
    async run(context) {
      const { args, json } = context;
      expectArgs(args, 2, 'set-shards <counter> <n>');
      const shards = parseWholeNumber(args[1]!, 'n');
      const result = await clientOf(context).setShards(args[0]!, shards);
      print(json, { counter: args[0], ...result }, `${args[0]}: ${result.previousShards} -> ${result.shards} shards`);
    },
  },
  {
    name: 'clear',
    synopsis: '<counter>',
    summary: 'make a counter (any kind) read 0 from now on; racing increments count at most once',
    flags: { key: { value: 'K', help: 'idempotency key: a retry with the same K clears nothing more' } },
    async run(context) {
      const { args, flags, json } = context;
      expectArgs(args, 1, 'clear <counter> [--key K]');
      const result = await clientOf(context).clear(args[0]!, { idempotencyKey: flags.get('key') });
      const pending = result.shardsPending === 0 ? '' : `; ${result.shardsPending} not yet confirmed by their node (they read 0)`;
      print(
        json,
        result,
        result.applied
          ? `cleared ${result.counter} (generation ${result.generation}, ${plural(result.shards, 'shard')}${pending})`
          : `already cleared with this key: ${result.counter} (generation ${result.generation}); nothing more cleared`,
      );
    },
  },
  {
    name: 'delete',
    synopsis: '<counter>',
    summary: 'delete a counter: it reads 0 from now on and its next write creates a new one; the nodes free its shards (admin)',
    flags: {},
    async run(context) {
      const { args, json } = context;
      expectArgs(args, 1, 'delete <counter>');
      const result = await clientOf(context).deleteCounter(args[0]!);
      const pending =
        result.shardsPending === 0 ? '' : `; ${result.shardsPending} not yet confirmed by their node (the router keeps sending the drop)`;
      print(json, result, `deleted ${result.counter} (${plural(result.shards, 'shard')} freed${pending})`);
    },
  },
  {
    name: 'configure',
    synopsis: '<counter>',
    summary: "change a counter's settings: heat-driven growth, a time window, membership partitions, a time to live",
    flags: {
      autoscale: { value: 'on|off', help: "let heat grow the counter's shards, or fix them" },
      'window-bucket': { value: 'D', help: 'keep the total in buckets of D (with --window-retention)' },
      'window-retention': { value: 'D', help: 'keep the buckets of the last D (with --window-bucket)' },
      'no-window': { help: "drop the counter's buckets" },
      'membership-partitions': { value: 'N', help: 'create a membership counter with N partitions (fixed for life)' },
      ttl: { value: 'D|never|default', help: "delete the counter once not written for D; never; or follow the router's --counter-ttl-ms" },
    },
    async run(context) {
      const { args, flags, json } = context;
      expectArgs(
        args,
        1,
        'configure <counter> [--autoscale on|off] [--window-bucket D --window-retention D | --no-window] [--membership-partitions N] [--ttl D|never|default]',
      );
      const options = await configureOptions(flags);
      const description = await clientOf(context).configure(args[0]!, options);
      print(json, description, configureLine(description, options));
    },
  },
  {
    name: 'distinct',
    synopsis: 'add <counter> <member>... | count [--global] <counter>...',
    summary: "add members (any text) to a distinct counter; or the estimated distinct members of counters' union, ± its standard error",
    flags: { global: { help: "the union over every region: this region's sketches and each peer's last received ones (docs/regions.md)" } },
    async run(context) {
      const { args, json } = context;
      const client = clientOf(context);
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
        const count = await client.countDistinct(counters, { scope: scopeOf(context.flags) });
        const name = counters.length === 1 ? counter : `union of ${counters.join(', ')}`;
        print(
          json,
          { counters, ...count },
          `${name}: ${count.estimate} distinct ± ${(count.standardError * 100).toFixed(2)}% (${plural(count.shards, 'shard')})`,
        );
        return;
      }
      throw new UsageError('expected: tally distinct add <counter> <member>... or tally distinct count <counter>...');
    },
  },
  {
    name: 'member',
    synopsis: 'add|remove <counter> <member> | check <counter> <member>...',
    summary: 'make a member (an unsigned 64-bit integer) present or absent in a membership counter; or whether each is present',
    flags: {},
    async run(context) {
      const { args, json } = context;
      const client = clientOf(context);
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
    },
  },
];

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
export async function configureOptions(flags: Map<string, string>): Promise<ConfigureOptions> {
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
    // The server's bound, from the server plumbing: loaded only here, so the other commands start without it.
    const { memberPartitionsMax } = await import('../../common/index.ts');
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
