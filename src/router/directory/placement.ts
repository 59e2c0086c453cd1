// Placement: which node pair holds a new shard. Pure: the directory calls it
// with counts and persists the answer. One counter's shards go first to the
// zones holding the fewest of its shards (a pair's zone is its primary's,
// where the shard's writes are served), then to the pairs there holding the
// fewest of its shards, then the fewest shards overall: a counter with as
// many shards as there are zones has one in every zone, and with as many as
// there are pairs, one on every pair. Without zones every pair is in zone ''.

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
  /** The zone a pair serves from ('' for none). */
  zoneOfPair: (pairIndex: number) => string = () => '',
): number[] {
  const pairCount = counterShardsPerPair.length;
  const open = Array.from({ length: pairCount }, (_, pair) => pair).filter((pair) => !draining(pair));
  if (open.length === 0) throw new Error('no node pairs to place shards on');
  const mine = [...counterShardsPerPair];
  const total = [...totalShardsPerPair];
  const zones = Array.from({ length: pairCount }, (_, pair) => zoneOfPair(pair));
  const mineInZone = new Map<string, number>();
  for (let pair = 0; pair < pairCount; pair++) mineInZone.set(zones[pair]!, (mineInZone.get(zones[pair]!) ?? 0) + mine[pair]!);
  const inZone = (pair: number): number => mineInZone.get(zones[pair]!)!;
  const chosen: number[] = [];
  for (let added = 0; added < addCount; added++) {
    let best = open[0]!;
    for (const pair of open) {
      const byZone = inZone(pair) - inZone(best);
      const byPair = mine[pair]! - mine[best]!;
      if (byZone < 0 || (byZone === 0 && (byPair < 0 || (byPair === 0 && total[pair]! < total[best]!)))) best = pair;
    }
    chosen.push(best);
    mine[best] = mine[best]! + 1;
    total[best] = total[best]! + 1;
    mineInZone.set(zones[best]!, inZone(best) + 1);
  }
  return chosen;
}

/**
 * Why a pair's two nodes do not span failure domains, or '' when they do
 * (or its nodes name no zone): both in one zone while a node of the cluster
 * reports another. Pairs are formed by configuration (--pairs, tally pair
 * add), so the supervisor cannot re-pair them; it says so instead.
 */
export function zoneWarningOf(primaryZone: string, followerZone: string, clusterZones: ReadonlySet<string>): string {
  if (primaryZone === '' || primaryZone !== followerZone) return '';
  const others = [...clusterZones].filter((zone) => zone !== '' && zone !== primaryZone).sort();
  if (others.length === 0) return '';
  return `both nodes are in zone ${primaryZone} while ${others.length === 1 ? 'zone' : 'zones'} ${others.join(', ')} ${others.length === 1 ? 'exists' : 'exist'}: losing ${primaryZone} loses the pair (re-pair the nodes across zones: docs/operations.md)`;
}
