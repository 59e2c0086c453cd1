// tally directory export|import on etcd: the whole directory under a prefix
// as one document (directory-snapshot.ts), read at one revision by a
// short-lived EtcdDirectory, or written into an empty prefix.
import type { Etcd3, IRequestOp } from 'etcd3';
import { ErrorCode, TallyError } from '../../../wire/index.ts';
import { createLogger, etcdTxnOpsMax } from '../../../common/index.ts';
import { pairInfoOf, type DirectorySnapshot } from '../snapshot.ts';
import {
  counterKeyPrefix,
  pairKeyPrefix,
  shardIdNextKey,
  taskKeyPrefix,
  checkCounter,
  checkTask,
  storedPairOf,
  checkPair,
  type StoredCounter,
  type StoredTask,
} from './schema.ts';
import { EtcdDirectory } from './store.ts';

/** The directory under prefix, as one export (consistent: loaded at one revision). */
export async function exportFromEtcd(client: Etcd3, prefix: string): Promise<DirectorySnapshot> {
  const directory = await EtcdDirectory.open({
    client,
    prefix,
    routerId: `directory-export-${process.pid}`,
    pairs: [],
    logger: createLogger('directory-export', 'error'),
    leaseTtlMs: 2_000,
  });
  try {
    return await directory.exportSnapshot();
  } finally {
    await directory.close();
  }
}

/**
 * Writes an export under prefix, which must hold nothing (routers stopped,
 * never started on it): pairs, counters and tasks first, shard-id-next
 * last. Interrupted, the prefix is partly written: delete it (etcdctl del
 * --prefix) and import again.
 */
export async function importIntoEtcd(client: Etcd3, prefix: string, snapshot: DirectorySnapshot): Promise<void> {
  const ns = client.namespace(prefix);
  const held = await ns.getAll().count();
  if (held > 0)
    throw new TallyError(ErrorCode.failedPrecondition, `etcd already holds ${held} keys under ${prefix}: import into an empty prefix`);
  const puts: IRequestOp[] = [];
  const put = (key: string, value: unknown): void => {
    puts.push({ request_put: { key: Buffer.from(prefix + key), value: Buffer.from(JSON.stringify(value)) } });
  };
  for (const pair of snapshot.pairs) put(pairKeyPrefix + pair.pairIndex, checkPair(pair.pairIndex, storedPairOf(pairInfoOf(pair))));
  for (const counter of snapshot.counters) {
    const stored: StoredCounter = {
      kind: counter.kind,
      window: counter.window,
      createdMs: counter.createdMs,
      autoscale: counter.autoscale,
      generation: counter.generation,
      ttlMs: counter.ttlMs,
      shards: counter.shards,
      writableShardCount: counter.writableShardCount,
      growths: counter.growths,
      clearKeys: [],
    };
    put(counterKeyPrefix + counter.name, checkCounter(counter.name, stored));
  }
  for (const task of snapshot.shardTasks) {
    const stored: StoredTask = { pairIndex: task.pairIndex, kind: task.kind, generation: task.generation, createdMs: task.createdMs };
    put(taskKeyPrefix + task.shardId, checkTask(task.shardId, stored));
  }
  for (let from = 0; from < puts.length; from += etcdTxnOpsMax) {
    await client
      .if(Buffer.from(prefix + shardIdNextKey), 'Create', '==', 0)
      .then(...puts.slice(from, from + etcdTxnOpsMax))
      .commit();
  }
  const done = await client
    .if(Buffer.from(prefix + shardIdNextKey), 'Create', '==', 0)
    .then({ request_put: { key: Buffer.from(prefix + shardIdNextKey), value: Buffer.from(String(snapshot.shardIdNext)) } })
    .commit();
  if (!done.succeeded)
    throw new TallyError(
      ErrorCode.failedPrecondition,
      `a router started on ${prefix} during the import: delete the prefix and import again`,
    );
}
