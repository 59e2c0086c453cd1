// The etcd directory store: several routers share one directory in etcd.
export { etcdClientOptions, openEtcdClient, type EtcdTlsFiles } from './client.ts';
export { EtcdDirectory, type EtcdDirectoryOptions } from './store.ts';
export type { PairUpdateFence } from './transactions.ts';
export { exportFromEtcd, importIntoEtcd } from './transfer.ts';
