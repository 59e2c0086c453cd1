// Placement: which node pair holds a new shard. Pure: the directory calls it
// with counts and persists the answer. One counter's shards go to the pairs
// holding the fewest of its shards, then the fewest shards overall, so a
// counter with as many shards as there are pairs has one on every pair.

/**
 * Chooses a pair for each of `addCount` new shards of one counter.
 * counterShardsPerPair[i]: shards of this counter already on pair i.
 * totalShardsPerPair[i]: shards of all counters on pair i.
 */
export function choosePairs(
  counterShardsPerPair: readonly number[],
  totalShardsPerPair: readonly number[],
  addCount: number,
  /** Pairs that take no new shards (drained); at least one pair must not be. */
  draining: (pairIndex: number) => boolean = () => false,
): number[] {
  const pairCount = counterShardsPerPair.length;
  const open = Array.from({ length: pairCount }, (_, pair) => pair).filter((pair) => !draining(pair));
  if (open.length === 0) throw new Error('no node pairs to place shards on');
  const mine = [...counterShardsPerPair];
  const total = [...totalShardsPerPair];
  const chosen: number[] = [];
  for (let added = 0; added < addCount; added++) {
    let best = open[0]!;
    for (const pair of open) {
      if (mine[pair]! < mine[best]! || (mine[pair] === mine[best] && total[pair]! < total[best]!)) best = pair;
    }
    chosen.push(best);
    mine[best] = mine[best]! + 1;
    total[best] = total[best]! + 1;
  }
  return chosen;
}
