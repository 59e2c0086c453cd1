// The local cluster behind `npm start` and the tests' startCluster(): the
// routers and N node pairs as child processes on loopback (local-cluster.ts),
// each child spawned with node directly and watched until it logs ready
// (managed-process.ts: the compiled dist/*/main.js when running compiled, the
// .ts through tsx in tests), a local one-member etcd for --routers N
// (etcd-process.ts), the launcher's settings and the check that a data
// directory is started with the store it holds (launcher-config.ts, pure), and
// the backoff and give-up rule for a child that dies (restart-policy.ts).
// main.ts is the `npm start` entry and is not exported.
export { LocalCluster, nodeCertName, type LocalClusterOptions, type NodeCertName, type NodeProcess } from './local-cluster.ts';
export { ManagedProcess, childrenFromDist, nodeMainPath, repoRoot, routerMainPath } from './managed-process.ts';
export { EtcdProcess, etcdInstalled, etcdMissingMessage } from './etcd-process.ts';
export { checkDataDirStore, parseLauncherConfig, portLayout, storePaths } from './launcher-config.ts';
export { keepRestarting, type RestartPolicy, type Restartable } from './restart-policy.ts';
