// The CLI's cluster commands: status, pairs and nodes, the checks that
// recompute from the logs (reconcile, rebuild: exit 3 on drift), health,
// top, and the offline directory transfer. One spec each (command-spec.ts).
import { UsageError, expectArgs, parseWholeNumber } from '../args.ts';
import type { CommandSpec } from '../command-spec.ts';
import { clientOf } from './counters.ts';
import { checkHealth, routerAddresses, securityOptions } from '../connection.ts';
import { backupCommand } from './backup-command.ts';
import { directoryCommand } from './directory-transfer.ts';
import { plural, print } from '../format.ts';
import { runTop } from './top.ts';

/** The exit code of a check that found drift: reconcile, rebuild, recount, a failed bench check. */
export const driftExitCode = 3;

const driftNote = `exit codes: 0 no drift; 3 drift found; 1 the call failed; 2 a usage error`;

export const clusterCommands: CommandSpec[] = [
  {
    name: 'status',
    synopsis: '',
    summary: 'every node: role, health, epoch, sync, log position, lag',
    flags: {},
    async run(context) {
      const { args, json } = context;
      expectArgs(args, 0, 'status');
      const status = await clientOf(context).clusterStatus();
      const lines = [
        `${status.counters} counter${status.counters === 1 ? '' : 's'} in the directory (${status.directoryStore}); router ${status.router}; supervisor ${status.supervisor || 'none (no router holds the lease)'}`,
        ...(status.routers.length > 1 ? [`routers: ${status.routers.join(', ')}`] : []),
        ...(status.region === '' ? [] : [`region ${status.region}`]),
        ...status.peerRegions.map(
          (peer) =>
            `  peer region ${peer.region}: link ${peer.link}${peer.address ? ` (${peer.address})` : ''}, ${peer.componentsPending} pending, lag ${peer.lagSeconds < 0 ? 'none received yet' : `${peer.lagSeconds.toFixed(1)} s`}${peer.error ? `; ${peer.error}` : ''}`,
        ),
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
    },
  },
  {
    name: 'pair',
    synopsis: 'add <primary> <follower> | drain <pair>',
    summary:
      'register a new node pair online (new shards may go there, nothing moves); or stop (resume) placing new shards on a pair (admin)',
    flags: { undrain: { help: 'with drain: take new shards on the pair again' } },
    async run(context) {
      const { args, flags, json } = context;
      const client = clientOf(context);
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
    },
  },
  {
    name: 'node',
    synopsis: 'replace <address> <new-address>',
    summary: "move a pair's follower slot to a new node (a lost disk or machine); the new node is filled by snapshot install",
    flags: {},
    async run(context) {
      const { args, json } = context;
      if (args[0] !== 'replace' || args.length !== 3) throw new UsageError('expected: tally node replace <address> <new-address>');
      const result = await clientOf(context).replaceNode(args[1]!, args[2]!);
      print(
        json,
        result,
        `pair ${result.pair}: primary ${result.primary}, follower ${result.follower} (to be filled by snapshot install), epoch ${result.epoch}`,
      );
    },
  },
  {
    name: 'directory',
    synopsis: 'export|import',
    summary:
      'move the whole directory between the embedded store and etcd, every router stopped (export to stdout or --file, import from stdin or --file)',
    router: false,
    flags: {
      'data-dir': { value: 'DIR', help: "the embedded store: a router's --data-dir" },
      etcd: { value: 'URL[,URL]', help: 'the etcd store: its endpoints' },
      'etcd-prefix': { value: 'P', help: "the routers' --etcd-prefix" },
      'etcd-tls-ca': { value: 'FILE', help: 'CA of etcd (https:// endpoints)' },
      'etcd-tls-cert': { value: 'FILE', help: 'client certificate for etcd, with --etcd-tls-key' },
      'etcd-tls-key': { value: 'FILE', help: "the client certificate's key" },
      file: { value: 'FILE', help: 'export to (import from) FILE instead of stdout (stdin)' },
    },
    async run({ args, flags }) {
      await directoryCommand(
        args,
        {
          dataDir: flags.get('data-dir'),
          etcd: flags.get('etcd'),
          etcdPrefix: flags.get('etcd-prefix'),
          etcdTlsCa: flags.get('etcd-tls-ca'),
          etcdTlsCert: flags.get('etcd-tls-cert'),
          etcdTlsKey: flags.get('etcd-tls-key'),
          file: flags.get('file'),
        },
        (message) => new UsageError(message),
        (text) => process.stderr.write(`${text}\n`),
      );
    },
  },
  {
    name: 'backup',
    synopsis: '--out DIR | verify --from DIR',
    summary:
      "an online, consistent copy of the whole cluster (directory, every pair's snapshot, key windows) into a new DIR, manifest last (admin); verify checks a backup's manifest, sizes, SHA-256 and CRCs",
    flags: {
      out: { value: 'DIR', help: 'where the backup goes: a directory that does not exist yet' },
      from: { value: 'DIR', help: 'the backup to verify' },
    },
    notes: 'exit codes: 0 a whole backup taken (verified); 1 it failed, naming the file or the call; 2 a usage error',
    async run({ args, flags, json }) {
      await backupCommand(
        'backup',
        args,
        flags,
        (message) => new UsageError(message),
        (value, text) => print(json, value, text),
      );
    },
  },
  {
    name: 'restore',
    synopsis: '--from DIR (--data-dir ROUTER_DIR | --etcd URL) --node-data-dirs D0[,D1...]',
    summary:
      "build a new cluster's data from a backup before it first starts: the directory into the router's store, each pair's log into its primary's data directory, in pair order (docs/operations.md)",
    router: false,
    flags: {
      from: { value: 'DIR', help: 'the backup (tally backup --out)' },
      'node-data-dirs': { value: 'D0[,D1...]', help: "each pair's primary data directory, in the new cluster's --pairs order" },
      'data-dir': { value: 'DIR', help: "the embedded store: the new router's --data-dir" },
      etcd: { value: 'URL[,URL]', help: 'the etcd store: its endpoints' },
      'etcd-prefix': { value: 'P', help: "the routers' --etcd-prefix" },
      'etcd-tls-ca': { value: 'FILE', help: 'CA of etcd (https:// endpoints)' },
      'etcd-tls-cert': { value: 'FILE', help: 'client certificate for etcd, with --etcd-tls-key' },
      'etcd-tls-key': { value: 'FILE', help: "the client certificate's key" },
    },
    async run({ args, flags, json }) {
      await backupCommand(
        'restore',
        args,
        flags,
        (message) => new UsageError(message),
        (value, text) => print(json, value, text),
      );
    },
  },
  {
    name: 'reconcile',
    synopsis: '[counter]',
    summary: 'recompute shards from their logs and report drift (all shards, or one counter); never repairs',
    flags: {},
    notes: driftNote,
    async run(context) {
      const { args, json } = context;
      if (args.length > 1) throw new UsageError('expected: tally reconcile [counter]');
      const report = await clientOf(context).reconcile(args[0]);
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
      if (report.shardsDrifting > 0) process.exitCode = driftExitCode;
    },
  },
  {
    name: 'rebuild',
    synopsis: '<counter>',
    summary: 'recount a membership counter from its members and report drift; --repair corrects it',
    flags: {
      repair: { help: 'correct the stored count to the members found' },
      verbose: { help: 'list every partition, not only those with drift' },
    },
    notes: `${driftNote} (after --repair: 0 once repaired)`,
    async run(context) {
      const { args, flags, json } = context;
      expectArgs(args, 1, 'rebuild <counter> [--repair] [--verbose]');
      const report = await clientOf(context).rebuild(args[0]!, { repair: flags.has('repair') });
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
      print(json, report, lines.join('\n'));
      // As reconcile: drift left standing is exit 3; drift this call repaired is not.
      if (report.drift !== 0n && !report.repaired) process.exitCode = driftExitCode;
    },
  },
  {
    name: 'health',
    synopsis: '',
    summary: 'grpc.health.v1 check of any Tally process (default: each router); exit 0 only when SERVING (for container health checks)',
    flags: {
      address: { value: 'host:port', help: 'check this process instead of the routers' },
      service: { value: 'NAME', help: "the service to ask about ('' : the whole process)" },
    },
    async run({ args, flags, json }) {
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
    },
  },
  {
    name: 'top',
    synopsis: '',
    summary: 'the hottest counters and the nodes, live (q quits); --json: one object per refresh',
    flags: {
      limit: { value: 'N', help: 'show the N hottest counters (default 20)' },
      iterations: { value: 'N', help: 'stop after N refreshes (default: until q or Ctrl-C)' },
      'interval-ms': { value: 'N', help: 'refresh every N ms (default 1000, at least 100)' },
    },
    async run(context) {
      const { args, flags, json } = context;
      expectArgs(args, 0, 'top [--limit N] [--iterations N]');
      const whole = (name: string, fallback: number): number =>
        flags.has(name) ? parseWholeNumber(flags.get(name)!, `--${name}`) : fallback;
      await runTop(clientOf(context), {
        router: routerAddresses(flags).join(','),
        limit: whole('limit', 20),
        iterations: whole('iterations', 0),
        intervalMs: Math.max(100, whole('interval-ms', 1_000)),
        json,
      });
    },
  },
];
