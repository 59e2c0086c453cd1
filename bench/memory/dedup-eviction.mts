// Cost of one DedupIndex.add once the index is at its bound (keysMax), against
// the cost below it, measured in-process:
//   node --import tsx bench/memory/dedup-eviction.mts [--bounds 50000,100000,200000,400000]
// For each bound: fill to the bound, then add half as many keys again (each
// add evicts the oldest key). Found while timing a refill with 10 million keys
// (bench/recovery/refill.mts): a node holding more keys in its window than
// dedupKeysInMemoryMax never finished replaying them.
import { randomBytes } from 'node:crypto';
import { DedupIndex } from '../../src/node/state/dedup-index.ts';

const boundsIndex = process.argv.indexOf('--bounds');
const bounds = boundsIndex > 0 ? process.argv[boundsIndex + 1]!.split(',').map(Number) : [50_000, 100_000, 200_000, 400_000];
const rows: Record<string, number>[] = [];
for (const keysMax of bounds) {
  const index = new DedupIndex(24 * 60 * 60 * 1000, keysMax);
  const extraCount = keysMax / 2;
  const keys = Array.from({ length: keysMax + extraCount }, () => randomBytes(16));
  const nowMs = Date.now();
  let startedNs = process.hrtime.bigint();
  for (let key = 0; key < keysMax; key++) index.add(1, keys[key]!, BigInt(key + 1), nowMs, 0);
  const fillNsPerKey = Number(process.hrtime.bigint() - startedNs) / keysMax;
  startedNs = process.hrtime.bigint();
  for (let key = keysMax; key < keysMax + extraCount; key++) index.add(1, keys[key]!, BigInt(key + 1), nowMs, 0);
  const evictNsPerKey = Number(process.hrtime.bigint() - startedNs) / extraCount;
  rows.push({
    keysMax,
    evicted: index.evictedFromMemory,
    fillMicrosPerKey: Number((fillNsPerKey / 1000).toFixed(2)),
    pastBoundMicrosPerKey: Number((evictNsPerKey / 1000).toFixed(2)),
  });
  console.log(JSON.stringify(rows.at(-1)));
}
process.exit(0);
