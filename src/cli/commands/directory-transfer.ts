// `tally directory export|import`: moves a whole directory between the
// embedded store (a router's --data-dir) and etcd (--etcd, --etcd-prefix),
// with every router stopped (the SQLite file is locked while a router
// holds it; etcd refuses while a router's presence key is alive). Export
// writes one JSON document to stdout or --file; import reads one from stdin
// or --file into an empty store, keeping every shard id, epoch and identity.
import fs from 'node:fs';
import { ErrorCode, TallyError } from '../../wire/index.ts';

export interface DirectoryStoreFlags {
  dataDir: string | undefined;
  etcd: string | undefined;
  etcdPrefix: string | undefined;
  /** TLS to etcd, as the routers' --etcd-tls-* take it. */
  etcdTlsCa: string | undefined;
  etcdTlsCert: string | undefined;
  etcdTlsKey: string | undefined;
  file: string | undefined;
}

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  let text = '';
  for await (const chunk of stream) text += chunk.toString();
  return text;
}

/** Runs export or import; a usage mistake comes back through usageError (exit 2). */
export async function directoryCommand(
  args: readonly string[],
  flags: DirectoryStoreFlags,
  usageError: (message: string) => Error,
  out: (text: string) => void,
): Promise<void> {
  const shape = 'tally directory export|import (--data-dir DIR | --etcd URL[,URL] [--etcd-prefix P]) [--file F]';
  const action = args[0];
  if (args.length !== 1 || (action !== 'export' && action !== 'import')) throw usageError(`expected: ${shape}`);
  if ((flags.dataDir === undefined) === (flags.etcd === undefined)) throw usageError(`name one store, --data-dir or --etcd: ${shape}`);
  if (flags.etcdPrefix !== undefined && flags.etcd === undefined) throw usageError('--etcd-prefix goes with --etcd');
  // Loaded here: no other command needs the router's directory code.
  const { openDirectoryTransfer, parseEtcdEndpoints, validateSnapshot } = await import('../../router/index.ts');
  if ((flags.etcdTlsCert === undefined) !== (flags.etcdTlsKey === undefined))
    throw usageError('--etcd-tls-cert and --etcd-tls-key go together');
  if (flags.etcdTlsCert !== undefined && flags.etcdTlsCa === undefined) throw usageError('--etcd-tls-cert needs --etcd-tls-ca');
  const store = await openDirectoryTransfer(
    flags.dataDir !== undefined
      ? { dataDir: flags.dataDir }
      : {
          etcdEndpoints: parseEtcdEndpoints(flags.etcd)!,
          ...(flags.etcdPrefix === undefined ? {} : { etcdPrefix: flags.etcdPrefix }),
          ...(flags.etcdTlsCa === undefined
            ? {}
            : { etcdTls: { caFile: flags.etcdTlsCa, certFile: flags.etcdTlsCert, keyFile: flags.etcdTlsKey } }),
        },
  );
  try {
    if (action === 'export') {
      const snapshot = await store.export();
      const text = `${JSON.stringify(snapshot, null, 1)}\n`;
      if (flags.file === undefined) process.stdout.write(text);
      else fs.writeFileSync(flags.file, text, { mode: 0o600 });
      out(`exported ${snapshot.counters.length} counters, ${snapshot.pairs.length} pairs, next shard id ${snapshot.shardIdNext}`);
      return;
    }
    const text = flags.file === undefined ? await readAll(process.stdin) : fs.readFileSync(flags.file, 'utf8');
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (error) {
      throw new TallyError(ErrorCode.invalidArgument, `not a directory export: ${(error as Error).message}`);
    }
    const snapshot = validateSnapshot(parsed);
    await store.import(snapshot);
    out(`imported ${snapshot.counters.length} counters, ${snapshot.pairs.length} pairs, next shard id ${snapshot.shardIdNext}`);
  } finally {
    await store.close();
  }
}
