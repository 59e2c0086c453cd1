// Window reads: the sum of a windowed counter's buckets over the last lastMs,
// every shard's buckets summed with one ReadWindows call per node pair (a
// partial sum is never returned). CACHED reads reuse a sum younger than the
// refresh interval; an older one is recomputed, never served. The sums kept
// are bounded (--cache-entries-max, least recently used out first, O(1)) and
// only for counters that exist and have a window.
import { ErrorCode, TallyError, isInt64, steadyWallClock } from '../../wire/index.ts';
import { LruMap, type shardV1 } from '../../common/index.ts';
import { windowRange } from '../../window/index.ts';
import type { CounterInfo, ExactReadDirectory } from '../directory/index.ts';
import { sameCounter } from '../directory/index.ts';
import type { NodePool } from '../nodes/index.ts';
import { overtakenCounters, readPairWithFallback, rereadOvertaken } from './exact-reader.ts';

export interface WindowRead {
  counter: string;
  total: bigint;
  exact: boolean;
  fromMs: number;
  toMs: number;
  bucketMs: number;
  buckets: number;
  asOfMs: number;
  stalenessMs: number;
}

export class WindowReader {
  /** By bucket count; each sum with the directory's counter it summed, so a deleted counter's sum never answers for a new one. */
  private readonly cache: LruMap<string, { read: WindowRead; source: CounterInfo; generation: number }>;

  constructor(
    private readonly directory: ExactReadDirectory,
    private readonly pool: NodePool,
    private readonly settings: { readTimeoutMs: number; refreshIntervalMs: number; cacheEntriesMax: number },
    /** Wall-clock times that are stored or shown and compared later: steady, so a step while running changes no decision. */
    private readonly now: () => number = steadyWallClock(),
  ) {
    this.cache = new LruMap(settings.cacheEntriesMax);
  }

  /** Window sums kept for CACHED reads. */
  get cacheSize(): number {
    return this.cache.size;
  }

  async read(name: string, lastMs: number, cached: boolean): Promise<WindowRead> {
    // A window set through another router must be known here before "no window" is answered.
    if (!cached) await this.directory.readBarrier([name]);
    const counter = this.directory.get(name);
    if (counter === undefined) throw new TallyError(ErrorCode.notFound, `counter "${name}" does not exist`);
    if (counter.kind !== 'total')
      throw new TallyError(ErrorCode.failedPrecondition, `counter "${name}" is a ${counter.kind} counter: only totals have windows`);
    const { bucketMs, retentionMs } = counter.window;
    if (bucketMs === 0) throw new TallyError(ErrorCode.failedPrecondition, `counter "${name}" has no window: set one with Configure`);
    if (!Number.isSafeInteger(lastMs) || lastMs <= 0)
      throw new TallyError(ErrorCode.invalidArgument, `last_ms must be a positive number of milliseconds, got ${lastMs}`);
    if (lastMs > retentionMs)
      throw new TallyError(ErrorCode.outOfRange, `last_ms ${lastMs} is beyond ${name}'s retention of ${retentionMs} ms`);

    // Keyed by the buckets summed, not by lastMs: every lastMs that rounds up to
    // the same bucket count is the same sum, so one counter holds at most
    // retention / bucket entries however many distinct lastMs a caller sends.
    const key = `${name}\u0000${Math.ceil(lastMs / bucketMs)}`;
    if (cached) {
      const hit = this.cache.get(key);
      const nowMs = this.now();
      if (
        hit !== undefined &&
        sameCounter(hit.source, counter) &&
        hit.generation === counter.generation &&
        hit.read.bucketMs === bucketMs &&
        nowMs - hit.read.asOfMs <= this.settings.refreshIntervalMs
      ) {
        return { ...hit.read, exact: false, stalenessMs: nowMs - hit.read.asOfMs };
      }
    }
    const generation = counter.generation;
    const read = await this.readExact(name, lastMs, bucketMs);
    // Deleted while the read was out: its sum may miss shards dropped before the read reached them.
    if (!sameCounter(this.directory.get(name), counter)) throw new TallyError(ErrorCode.notFound, `counter "${name}" was deleted`);
    if (cached) {
      // Not a sum from before a delete or a clear that happened while it was taken,
      // and a slower, older summing never replaces a newer one.
      const held = this.cache.peek(key);
      if (
        sameCounter(this.directory.get(name), counter) &&
        counter.generation === generation &&
        (held?.read.asOfMs ?? -Infinity) <= read.asOfMs
      )
        this.cache.set(key, { read, source: counter, generation });
      return { ...read, exact: false };
    }
    return read;
  }

  private async readExact(name: string, lastMs: number, bucketMs: number): Promise<WindowRead> {
    // Taken before the first node call: every increment acknowledged before it is in the sum.
    const asOfMs = this.now();
    const range = windowRange(asOfMs, lastMs, bucketMs);
    const total = await rereadOvertaken(
      [name],
      async () => {
        // The counter may be gone by now (deleted while this call waited): it then sums nothing.
        const counter = this.directory.get(name);
        const generation = String(counter?.generation ?? 0);
        const byPair = new Map<number, number[]>();
        for (const shard of counter?.shards ?? []) {
          let shardIds = byPair.get(shard.pairIndex);
          if (shardIds === undefined) byPair.set(shard.pairIndex, (shardIds = []));
          shardIds.push(shard.shardId);
        }
        const request = (shardIds: number[]): shardV1.ReadWindowsRequest => ({
          shardIds: shardIds.map(String),
          fromMs: String(range.fromMs),
          toMs: String(range.toMs),
          bucketMs: String(bucketMs),
          generations: generation === '0' ? [] : shardIds.map(() => generation),
        });
        const responses = await Promise.all(
          [...byPair].map(([pairIndex, shardIds]) =>
            readPairWithFallback(this.directory.pair(pairIndex), (address) =>
              this.pool.read<shardV1.ReadWindowsRequest, shardV1.ReadShardsResponse__Output>(
                address,
                'ReadWindows',
                request(shardIds),
                this.settings.readTimeoutMs,
              ),
            ),
          ),
        );
        let sum = 0n;
        let overtaken = new Set<string>();
        for (const { response } of responses) {
          for (const shardSum of response.totals) sum += BigInt(shardSum);
          if ((response.newerGenerationIndexes ?? []).length > 0) overtaken = overtakenCounters([name], [0]);
        }
        return { result: { sum }, overtaken };
      },
      (into, again) => {
        into.sum = again.sum;
      },
    );
    if (!isInt64(total.sum)) throw new TallyError(ErrorCode.outOfRange, `the window sum of ${name} is beyond int64`);
    return {
      counter: name,
      total: total.sum,
      exact: true,
      fromMs: range.fromMs,
      toMs: range.toMs,
      bucketMs,
      buckets: range.buckets,
      asOfMs,
      stalenessMs: 0,
    };
  }
}
