// npx tsx scripts/nemesis-observe.mts (as root) — a few measured observations on a namespaced
// cluster with the chaos suite's short timeouts (not pass/fail: numbers for
// the issue): epochs after the supervisor is cut from every node and the links
// return; ClusterStatus time with a node blackholed; the router's etcd error
// while it is cut from every etcd member.
import { NemesisCluster, applyFault, machineMonotonicMs, shortTimeouts, supervisorName } from '../test/helpers/nemesis/index.ts';
import { pause, waitFor } from '../test/helpers/cluster.ts';

const cluster = await NemesisCluster.start({ routerArgs: shortTimeouts.routerArgs, nodeArgs: shortTimeouts.nodeArgs });
const epochs = async (): Promise<string> =>
  (await cluster.client.status(0)).pairs
    .map((pair) => `pair ${pair.pair} epoch ${pair.epoch} ${cluster.nodeNameAt(pair.primary)}`)
    .join(', ');
try {
  await cluster.client.increment(0, 'observe', 1n);
  // 1. The supervisor cut from every node (both ways, silent) for 4 s, then the links return.
  const supervisor = await supervisorName(cluster);
  const supervisorIndex = Number(supervisor.slice(1)) - 1;
  console.log(`before: ${await epochs()} (supervisor ${supervisor})`);
  const cut = await applyFault(cluster, { kind: 'partition', sides: [[supervisor], ['n0a', 'n0b', 'n1a', 'n1b']], mode: 'drop' });
  await pause(4_000);
  console.log(`during the cut: ${await epochs()}`);
  await cut.heal();
  await pause(5_000);
  console.log(`5 s after the links returned: ${await epochs()}`);
  const failedOver = cluster.logs.filter((line) => line.startsWith(`[${supervisor}]`) && /fail|promot/i.test(line)).slice(-5);
  console.log(`supervisor lines about failover:\n  ${failedOver.join('\n  ')}`);

  // 2. ClusterStatus with one node blackholed.
  for (const label of ['all reachable', 'n1b blackholed']) {
    const fault = label === 'all reachable' ? undefined : await applyFault(cluster, { kind: 'blackhole', host: 'n1b' });
    await pause(1_000);
    const times: number[] = [];
    for (let index = 0; index < 5; index++) {
      const startMs = machineMonotonicMs();
      await cluster.client.status(supervisorIndex === 0 ? 1 : 0).catch(() => undefined);
      times.push(Math.round(machineMonotonicMs() - startMs));
    }
    console.log(`ClusterStatus, ${label}: ${times.join(', ')} ms`);
    await fault?.heal();
  }

  // 3. A router cut from every etcd member: what it logs.
  const mark = cluster.logs.length;
  const etcdCut = await applyFault(cluster, { kind: 'partition', sides: [['r2'], ['e1', 'e2', 'e3']], mode: 'drop' });
  await pause(6_000);
  await etcdCut.heal();
  const r2Lines = cluster.logs.slice(mark).filter((line) => line.startsWith('[r2]') && /etcd|lease|directory/i.test(line));
  console.log(`r2 cut from etcd, its lines:\n  ${r2Lines.slice(0, 8).join('\n  ')}`);
  await waitFor(async () => (await cluster.client.status(1)).supervisor !== '', { timeoutMs: 20_000 });
} finally {
  await cluster.stop({ removeData: true });
}
