// EXACT reads: sums every shard of the named counters with one ReadShards
// call per node, however many shards and counters. A shard that cannot be
// read fails the whole read: a partial sum is never a total (G3).
import { ErrorCode, TallyError, isInt64 } from '../common/index.ts';
import type { Directory } from './directory.ts';
import type { NodePool } from './node-pool.ts';

export interface ExactTotal {
  total: bigint;
  shardCount: number;
}

export interface ExactReadResult {
  totals: Map<string, ExactTotal>;
  nodeCalls: number;
}

export async function readExact(names: readonly string[], directory: Directory, pool: NodePool, timeoutMs: number): Promise<ExactReadResult> {
  // Per node: the shard ids to read and, for each, which counter it adds to.
  const plan = new Map<string, { shardIds: number[]; counterOf: string[] }>();
  const totals = new Map<string, ExactTotal>();
  for (const name of names) {
    if (totals.has(name)) continue;
    const counter = directory.get(name);
    const shards = counter?.shards ?? [];
    totals.set(name, { total: 0n, shardCount: shards.length });
    for (const shard of shards) {
      const address = directory.pair(shard.pairIndex).primary;
      let entry = plan.get(address);
      if (entry === undefined) plan.set(address, (entry = { shardIds: [], counterOf: [] }));
      entry.shardIds.push(shard.shardId);
      entry.counterOf.push(name);
    }
  }
  const responses = await Promise.all(
    [...plan].map(async ([address, entry]) => ({ entry, response: await pool.readShards(address, entry.shardIds, timeoutMs) })),
  );
  for (const { entry, response } of responses) {
    response.totals.forEach((shardTotal, index) => {
      const name = entry.counterOf[index]!;
      const sum = totals.get(name)!;
      sum.total += BigInt(shardTotal);
    });
  }
  for (const [name, { total }] of totals) {
    if (!isInt64(total)) throw new TallyError(ErrorCode.outOfRange, `the total of ${name} is beyond int64`);
  }
  return { totals, nodeCalls: plan.size };
}
