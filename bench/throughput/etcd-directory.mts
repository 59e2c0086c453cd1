// What the etcd directory costs against the embedded one, on this machine
// (a local single-member etcd from PATH, fsync'd; SQLite synchronous=FULL):
//   node --import tsx bench/throughput/etcd-directory.mts [--count 200] [--growths 50]
// 1. getOrCreate of a new counter, one at a time: SQLite, then etcd (one router);
// 2. setShards 1 -> 2 with two routers open (announce, both acknowledge, activate);
// 3. watch propagation: from the etcd transaction's answer at router A to
//    router B's memory holding the change (both in this process).
// Medians (and p90) in milliseconds.
import { Etcd3, KVClient } from 'etcd3';
import { EtcdProcess } from '../../src/cluster/etcd-process.ts';
import { EtcdDirectory, etcdClientOptions } from '../../src/router/directory/etcd/index.ts';
import { SqliteDirectory } from '../../src/router/directory/sqlite/store.ts';
import { createLogger } from '../../src/common/index.ts';
import { makeTempDir, removeTempDir } from '../../test/helpers/temp-dir.ts';

function flag(name: string, fallback: number): number {
  const index = process.argv.indexOf(`--${name}`);
  return index > 0 ? Number(process.argv[index + 1]) : fallback;
}
const count = flag('count', 200);
const growthCount = flag('growths', 50);
const pairs = [
  { primary: 'p0:1', follower: 'f0:1' },
  { primary: 'p1:1', follower: 'f1:1' },
];
const logger = createLogger('bench', 'error');

function summary(samplesMs: number[]): string {
  const sorted = [...samplesMs].sort((left, right) => left - right);
  const at = (fraction: number): string => sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))]!.toFixed(2);
  return `median ${at(0.5)} ms, p90 ${at(0.9)} ms (${sorted.length} samples)`;
}

async function timed(action: () => Promise<unknown>): Promise<number> {
  const startedMs = performance.now();
  await action();
  return performance.now() - startedMs;
}

const dir = makeTempDir('bench-etcd-directory');
const etcd = new EtcdProcess({ dataDir: `${dir}/etcd` });
await etcd.start();
const clients = [new Etcd3(etcdClientOptions([etcd.endpoint])), new Etcd3(etcdClientOptions([etcd.endpoint]))];
try {
  const sqlite = SqliteDirectory.open(`${dir}/sqlite`, pairs);
  await sqlite.getOrCreate('warm');
  const sqliteMs: number[] = [];
  for (let index = 0; index < count; index++) sqliteMs.push(await timed(() => sqlite.getOrCreate(`s:${index}`)));
  await sqlite.close();
  console.log(`getOrCreate of a new counter, SQLite: ${summary(sqliteMs)}`);

  const open = (client: Etcd3, routerId: string): Promise<EtcdDirectory> =>
    EtcdDirectory.open({ client, prefix: '/bench/', routerId, pairs, logger, leaseTtlMs: 5_000 });
  const a = await open(clients[0]!, 'a');
  // The first creation reserves a block of shard ids: not what one creation costs.
  await a.getOrCreate('warm');
  const etcdMs: number[] = [];
  for (let index = 0; index < count; index++) etcdMs.push(await timed(() => a.getOrCreate(`e:${index}`)));
  console.log(`getOrCreate of a new counter, etcd (one router): ${summary(etcdMs)}`);

  const b = await open(clients[1]!, 'b');
  for (let index = 0; index < growthCount; index++) await a.getOrCreate(`g:${index}`);
  const growthMs: number[] = [];
  for (let index = 0; index < growthCount; index++) growthMs.push(await timed(() => a.setShards(`g:${index}`, 2)));
  console.log(`setShards 1 -> 2 with two routers (announce, acknowledgements, activate): ${summary(growthMs)}`);

  // When A's transaction answered, then when B held the change.
  let answeredMs = 0;
  const txn = KVClient.prototype.txn;
  KVClient.prototype.txn = async function (this: KVClient, ...args: Parameters<KVClient['txn']>) {
    const response = await txn.apply(this, args);
    answeredMs = performance.now();
    return response;
  };
  const propagationMs: number[] = [];
  for (let index = 0; index < count; index++) {
    const name = `w:${index}`;
    const created = a.getOrCreate(name);
    while (b.get(name) === undefined) await new Promise((resolve) => setImmediate(resolve));
    propagationMs.push(performance.now() - answeredMs);
    await created;
  }
  KVClient.prototype.txn = txn;
  console.log(`watch propagation, A's transaction answered -> B's memory holds it: ${summary(propagationMs)}`);
  await a.close();
  await b.close();
} finally {
  for (const client of clients) client.close();
  await etcd.stop();
  removeTempDir(dir);
}
