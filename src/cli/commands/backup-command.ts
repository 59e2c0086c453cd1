// `tally backup --out DIR`, `tally backup verify --from DIR` and `tally
// restore --from DIR ...`: thin wiring over src/backup. A backup goes
// through a router (online); verify reads files only; restore writes a new
// cluster's data directories (or etcd) before its processes start.
import { credentials } from '@grpc/grpc-js';
import { routerAddresses, securityOptions } from '../connection.ts';
import { parseWholeNumber } from '../args.ts';
import { plural } from '../format.ts';

/** One backup or restore command; a usage mistake comes back through usageError (exit 2). */
export async function backupCommand(
  command: 'backup' | 'restore',
  args: readonly string[],
  flags: Map<string, string>,
  usageError: (message: string) => Error,
  print: (json: unknown, text: string) => void,
): Promise<void> {
  // Loaded here: no other command needs the node's log or the router's directory code.
  const { restoreBackup, takeBackup, verifyBackup } = await import('../../backup/index.ts');
  if (command === 'backup' && args[0] === 'verify') {
    const from = flags.get('from');
    if (args.length !== 1 || from === undefined) throw usageError('expected: tally backup verify --from DIR');
    const { manifest, chunkCount } = verifyBackup(from);
    print(
      { verified: true, from, pairs: manifest.pairs.length, pieces: chunkCount, counters: manifest.counterCount },
      `${from}: a whole backup (${plural(manifest.pairs.length, 'pair')}, ${plural(chunkCount, 'piece')}, ${plural(manifest.counterCount, 'counter')}, taken ${new Date(manifest.startedUnixMs).toISOString()})`,
    );
    return;
  }
  if (command === 'backup') {
    const out = flags.get('out');
    if (args.length !== 0 || out === undefined) throw usageError('expected: tally backup --out DIR | tally backup verify --from DIR');
    const security = securityOptions(flags);
    const tls = security.tls;
    const manifest = await takeBackup({
      out,
      routers: routerAddresses(flags),
      credentials: tls === undefined ? credentials.createInsecure() : credentials.createSsl(tls.ca, tls.key ?? null, tls.cert ?? null),
      token: security.token,
      callTimeoutMs: flags.has('deadline-ms') ? parseWholeNumber(flags.get('deadline-ms')!, '--deadline-ms') : 55_000,
    });
    const sizeBytes = manifest.files.reduce((sum, file) => sum + file.sizeBytes, 0);
    print(
      manifest,
      `backup in ${out}: ${plural(manifest.counterCount, 'counter')}, ${plural(manifest.pairs.length, 'pair')} (up to lsn ${manifest.pairs.map((pair) => pair.endLsn).join(', ')}), ${sizeBytes} bytes in ${manifest.finishedUnixMs - manifest.startedUnixMs} ms`,
    );
    return;
  }
  const shape =
    'tally restore --from DIR (--data-dir ROUTER_DIR | --etcd URL[,URL] [--etcd-prefix P]) --node-data-dirs PRIMARY_DIR[,PRIMARY_DIR...]';
  const from = flags.get('from');
  const nodeDirs = flags.get('node-data-dirs');
  if (args.length !== 0 || from === undefined || nodeDirs === undefined) throw usageError(`expected: ${shape}`);
  if ((flags.get('data-dir') === undefined) === (flags.get('etcd') === undefined))
    throw usageError(`name one store, --data-dir or --etcd: ${shape}`);
  const { parseEtcdEndpoints } = await import('../../router/index.ts');
  const summary = await restoreBackup({
    from,
    store:
      flags.get('data-dir') !== undefined
        ? { dataDir: flags.get('data-dir')! }
        : {
            etcdEndpoints: parseEtcdEndpoints(flags.get('etcd'))!,
            ...(flags.has('etcd-prefix') ? { etcdPrefix: flags.get('etcd-prefix')! } : {}),
            ...(flags.has('etcd-tls-ca')
              ? { etcdTls: { caFile: flags.get('etcd-tls-ca')!, certFile: flags.get('etcd-tls-cert'), keyFile: flags.get('etcd-tls-key') } }
              : {}),
          },
    nodeDataDirs: nodeDirs.split(','),
  });
  print(
    summary,
    `restored ${plural(summary.counterCount, 'counter')} and ${plural(summary.pairCount, 'pair')} (${plural(summary.chunkCount, 'piece')}) from ${from}: start the cluster with its pairs in the order of --node-data-dirs (each a pair's primary)`,
  );
}
