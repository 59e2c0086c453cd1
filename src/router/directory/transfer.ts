// `tally directory export|import`: the one entry point the CLI uses to move
// a whole directory between stores (embedded SQLite <-> etcd). Each store is
// loaded only when named, so an export from SQLite never loads etcd.
import type { EtcdTlsFiles } from './etcd/index.ts';
import type { DirectorySnapshot } from './snapshot.ts';

/** Where a directory lives: a router's data directory, or a prefix in etcd. */
export type DirectoryLocation =
  | { dataDir: string }
  | {
      etcdEndpoints: readonly string[];
      /** Default '/tally/'. */
      etcdPrefix?: string;
      etcdTls?: EtcdTlsFiles;
    };

export interface DirectoryTransfer {
  export(): Promise<DirectorySnapshot>;
  /** Into an empty store only (FAILED_PRECONDITION otherwise). */
  import(snapshot: DirectorySnapshot): Promise<void>;
  close(): Promise<void>;
}

export async function openDirectoryTransfer(location: DirectoryLocation): Promise<DirectoryTransfer> {
  if ('dataDir' in location) {
    const { exportFromSqlite, importIntoSqlite } = await import('./sqlite/index.ts');
    return {
      export: () => exportFromSqlite(location.dataDir),
      import: async (snapshot) => importIntoSqlite(location.dataDir, snapshot),
      close: async () => {},
    };
  }
  const { openEtcdClient, exportFromEtcd, importIntoEtcd } = await import('./etcd/index.ts');
  const prefix = location.etcdPrefix ?? '/tally/';
  const client = openEtcdClient(location.etcdEndpoints, location.etcdTls);
  return {
    export: () => exportFromEtcd(client, prefix),
    import: (snapshot) => importIntoEtcd(client, prefix, snapshot),
    close: async () => client.close(),
  };
}
