// The etcd directory's reads of etcd itself (not of memory): the whole
// prefix at one revision, a page of counter names, and whether names memory
// does not hold exist there.
import assert from 'node:assert';
import type { Etcd3, IKeyValue, IRequestOp, Namespace } from 'etcd3';
import { deadlineIn } from '../../../wire/index.ts';
import { etcdCallTimeoutMs, etcdRangePageKeysMax, etcdTxnOpsMax } from '../../../common/index.ts';
import type { ListedCounterRow, NameRange } from '../contract.ts';
import { storeError } from './client.ts';
import { counterKeyPrefix, prefixEnd, shardIdNextKey, checkCounter, parseJson } from './schema.ts';

/**
 * Every key under the prefix at one revision, in pages (a page larger than
 * a gRPC message halves the page).
 */
export async function readPrefix(client: Etcd3, prefixBytes: Buffer): Promise<{ kvs: IKeyValue[]; revision: number }> {
  const end = prefixEnd(prefixBytes);
  const kvs: IKeyValue[] = [];
  let revision = 0;
  let start = prefixBytes;
  let pageKeys = etcdRangePageKeysMax;
  for (;;) {
    let response;
    try {
      response = await client.kv.range(
        { key: start, range_end: end, limit: pageKeys, ...(revision > 0 ? { revision } : {}) },
        { deadline: deadlineIn(etcdCallTimeoutMs) },
      );
    } catch (error) {
      if (/larger than max|RESOURCE_EXHAUSTED/i.test((error as Error).message) && pageKeys > 1) {
        pageKeys = Math.ceil(pageKeys / 2);
        continue;
      }
      throw error;
    }
    if (revision === 0) revision = Number(response.header.revision);
    for (const kv of response.kvs) kvs.push(kv);
    if (!response.more || response.kvs.length === 0) break;
    start = Buffer.concat([response.kvs[response.kvs.length - 1]!.key, Buffer.from([0])]);
  }
  return { kvs, revision };
}

/**
 * Up to `limit` counters in `range`, in byte order of their UTF-8 names:
 * one range read of etcd (which orders keys by their bytes), limited.
 */
export async function scanCounters(client: Etcd3, prefix: string, range: NameRange, limit: number): Promise<ListedCounterRow[]> {
  assert(Number.isInteger(limit) && limit > 0, `scan limit ${limit}`);
  const base = prefix + counterKeyPrefix;
  const baseLength = Buffer.byteLength(base);
  const after = Buffer.concat([Buffer.from(base + range.after), Buffer.from([0])]);
  const from = Buffer.from(base + range.from);
  const start = Buffer.compare(after, from) > 0 ? after : from;
  const end = range.before === undefined ? prefixEnd(Buffer.from(base)) : Buffer.from(base + range.before);
  if (Buffer.compare(start, end) >= 0) return [];
  let response;
  try {
    response = await client.kv.range({ key: start, range_end: end, limit }, { deadline: deadlineIn(etcdCallTimeoutMs) });
  } catch (error) {
    throw storeError(error);
  }
  return response.kvs.map((kv) => {
    const name = kv.key.subarray(baseLength).toString('utf8');
    const stored = checkCounter(name, parseJson(`counter ${name}`, kv.value));
    return { name, kind: stored.kind, shardCount: stored.shards.length, ttlMs: stored.ttlMs };
  });
}

/**
 * The newest mod revision among `keys` in etcd (0 when none exists):
 * linearizable, in transactions of ranges.
 */
export async function newestRevisionOf(ns: Namespace, keys: readonly Buffer[]): Promise<number> {
  let newest = 0;
  for (let from = 0; from < keys.length; from += etcdTxnOpsMax) {
    const ops = keys.slice(from, from + etcdTxnOpsMax).map((key): IRequestOp => ({ request_range: { key, keys_only: true } }));
    try {
      const response = await ns
        .if(shardIdNextKey, 'Create', '>', -1)
        .then(...ops)
        .options({ deadline: deadlineIn(etcdCallTimeoutMs) })
        .commit();
      for (const op of response.responses)
        for (const kv of op.response_range?.kvs ?? []) newest = Math.max(newest, Number(kv.mod_revision));
    } catch (error) {
      throw storeError(error);
    }
  }
  return newest;
}
