// The counter directory: the contract every router part reads it through
// (and the narrow role each part takes), the model both stores keep in
// memory, and the two stores.
export {
  counterKinds,
  defaultDirectoryLimits,
  type ClearOutcome,
  type CounterInfo,
  type CounterKind,
  type Directory,
  type DirectoryLimits,
  type NameRange,
  type PairAddresses,
  type PairInfo,
  type PairUpdate,
  type ShardInfo,
  type ShardTask,
  type Tombstone,
  type DeleteOptions,
  type AdvertisedNode,
  replicationAddressOf,
  zoneOf,
} from './contract.ts';
export * from './roles.ts';
export { plainCounter, sameCounter } from './counter-view.ts';
export type { CounterColumns } from './contract.ts';
export { EtcdDirectory, etcdClientOptions, openEtcdClient, type EtcdTlsFiles, type PairUpdateFence } from './etcd/index.ts';
export { SqliteDirectory } from './sqlite/index.ts';
export { openDirectoryTransfer, type DirectoryLocation, type DirectoryTransfer } from './transfer.ts';
export { validateSnapshot, type DirectorySnapshot } from './snapshot.ts';
