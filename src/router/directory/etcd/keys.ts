// The etcd directory's key schema. Every key lives under the prefix:
//   counters/<name>          JSON StoredCounter (shards, growths, settings, recent clear keys)
//   pairs/<index>            JSON StoredPair (bigints as decimal strings)
//   shard-id-next            the next shard id never reserved, decimal: a router reserves a block of
//                            ids in one conditioned transaction and hands them out from memory
//   shard-tasks/<shardId>    JSON StoredTask: a drop or clear a node still owes
//   routers/<routerId>       presence, bound to the router's lease: JSON { seenRevision }
// Other keys under the prefix (the supervisor election's) are not the directory's.

export const counterKeyPrefix = 'counters/';
export const pairKeyPrefix = 'pairs/';
export const taskKeyPrefix = 'shard-tasks/';
export const routerKeyPrefix = 'routers/';
export const shardIdNextKey = 'shard-id-next';

/** The first key after every key that starts with `prefix` (etcd's prefix range end). */
export function prefixEnd(prefix: Buffer): Buffer {
  const end = Buffer.from(prefix);
  for (let index = end.length - 1; index >= 0; index--) {
    if (end[index]! < 0xff) {
      end[index]!++;
      return end.subarray(0, index + 1);
    }
  }
  // All 0xff: to the end of the keyspace.
  return Buffer.from([0]);
}
