// The options of a whole cluster with one node pair on loopback ports the
// kernel picks (each process reports its own), metrics off: what most bench
// scripts start. Each adds what it needs.
import { LocalCluster, type LocalClusterOptions } from '../../src/cluster/local-cluster.ts';

export async function onePairCluster(dataDir: string, extra: Partial<LocalClusterOptions> = {}): Promise<LocalCluster> {
  return new LocalCluster({
    pairCount: 1,
    dataDir,
    host: '127.0.0.1',
    routerPort: 0,
    nodePorts: [0, 0],
    routerMetricsPort: 0,
    nodeMetricsPorts: [0, 0],
    ...extra,
  });
}
