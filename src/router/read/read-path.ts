// The read path: EXACT reads sum every shard now; CACHED reads come from
// totals a refresher recomputes every refreshIntervalMs. A cached total older
// than refresh interval + read timeout is never served; the read falls back to
// summing now (G4).
import { IntervalTask, type Logger } from '../../common/index.ts';
import { steadyWallClock } from '../../wire/index.ts';
import { readExact, refuseDistinctRead } from './exact-reader.ts';
import { ReadCache } from './read-cache.ts';
import type { CounterInfo, ExactReadDirectory } from '../directory/index.ts';
import { sameCounter } from '../directory/index.ts';
import type { NodePool } from '../nodes/index.ts';
import type { RouterMetrics } from '../metrics/index.ts';

export interface TotalRead {
  counter: string;
  total: bigint;
  exact: boolean;
  asOfMs: number;
  stalenessMs: number;
  shardCount: number;
  /** The directory's counter read (undefined: none), at which generation. */
  source: CounterInfo | undefined;
  generation: number;
}

export class ReadPath {
  readonly cache: ReadCache;
  private readonly refresher: IntervalTask;
  /** Evictions already added to tally_cache_evictions_total. */
  private readonly evictionsReported = { full: 0, idle: 0 };

  constructor(
    private readonly directory: ExactReadDirectory,
    private readonly pool: NodePool,
    private readonly metrics: RouterMetrics,
    private readonly logger: Logger,
    private readonly settings: { refreshIntervalMs: number; readTimeoutMs: number; cacheIdleMs: number; cacheEntriesMax: number },
    /** Wall-clock times that are stored or shown and compared later: steady, so a step while running changes no decision. */
    private readonly now: () => number = steadyWallClock(),
  ) {
    this.cache = new ReadCache(settings.refreshIntervalMs + settings.readTimeoutMs, settings.cacheIdleMs, settings.cacheEntriesMax);
    // One round at a time: a slow round delays the next rather than racing it.
    this.refresher = new IntervalTask({ name: 'cache refresh round', intervalMs: settings.refreshIntervalMs, logger }, () =>
      this.refresh(),
    );
  }

  /** Totals summed now. A distinct counter among names is FAILED_PRECONDITION (checked where each name is resolved, once). */
  async readExact(names: readonly string[]): Promise<TotalRead[]> {
    // Taken before the first node call: everything acknowledged before it is in the sum.
    const asOfMs = this.now();
    const { totals, nodeCalls } = await readExact(names, this.directory, this.pool, this.settings.readTimeoutMs, { refuseDistinct: true });
    this.metrics.nodeCalls.inc({ kind: 'read' }, nodeCalls);
    return names.map((counter) => {
      const { total, shardCount, source, generation } = totals.get(counter)!;
      return { counter, total, exact: true, asOfMs, stalenessMs: 0, shardCount, source, generation };
    });
  }

  /** Totals from the cache, misses summed now. A distinct counter among names is FAILED_PRECONDITION, hit or miss. */
  async readCached(names: readonly string[]): Promise<TotalRead[]> {
    const nowMs = this.now();
    // One directory lookup per name (the dearest step per counter): the same handle serves every check below.
    const sources = names.map((name) => this.directory.get(name));
    // Before anything is served: a distinct counter is never cached, but the whole read is refused, not only its misses.
    for (let index = 0; index < names.length; index++) refuseDistinctRead(names[index]!, sources[index]);
    const served = new Map<
      string,
      { total: bigint; shardCount: number; asOfMs: number; source: CounterInfo | undefined; generation: number }
    >();
    const misses = new Set<string>();
    for (let index = 0; index < names.length; index++) {
      const name = names[index]!;
      if (served.has(name)) continue;
      const cached = this.cache.get(name, nowMs);
      const source = sources[index];
      if (cached !== undefined && this.isCurrent(source, cached)) {
        served.set(name, {
          total: cached.total,
          shardCount: cached.shardCount,
          asOfMs: cached.asOfMs,
          source,
          generation: cached.generation,
        });
        continue;
      }
      // Cleared or deleted since it was summed (through this router or another): its total is another counter's.
      if (cached !== undefined) this.cache.forget(name);
      misses.add(name);
    }
    if (misses.size > 0) {
      for (const read of await this.readExact([...misses])) {
        // A counter that does not exist (no shards) is answered but not cached: names nobody
        // writes must not fill the cache and push out the ones in use.
        if (read.shardCount > 0 && this.stillCurrent(read))
          this.cache.put(
            read.counter,
            { total: read.total, shardCount: read.shardCount, asOfMs: read.asOfMs, source: read.source!, generation: read.generation },
            this.now(),
          );
        served.set(read.counter, read);
      }
    }
    const servedMs = this.now();
    return names.map((counter) => {
      const { total, shardCount, asOfMs, source, generation } = served.get(counter)!;
      const stalenessMs = Math.max(0, servedMs - asOfMs);
      this.metrics.cacheAgeSeconds.observe(stalenessMs / 1000);
      return { counter, total, exact: false, asOfMs, stalenessMs, shardCount, source, generation };
    });
  }

  startRefresher(): void {
    this.refresher.start();
  }

  stopRefresher(): void {
    this.refresher.stop();
  }

  /** Recomputes every cached total (not while a round is under way); a counter whose shards cannot be read keeps aging. */
  refreshOnce(): Promise<void> {
    return this.refresher.runNow();
  }

  private async refresh(): Promise<void> {
    const startedMs = this.now();
    const names = this.cache.namesToRefresh(startedMs);
    this.metrics.cacheEntries.set(names.length);
    this.reportEvictions();
    const chunkSize = 1_000;
    for (let offset = 0; offset < names.length; offset += chunkSize) {
      const chunk = names.slice(offset, offset + chunkSize);
      try {
        this.store(await this.readExact(chunk));
      } catch {
        // One unreadable shard must not stop the others from refreshing.
        for (const name of chunk) {
          try {
            this.store(await this.readExact([name]));
          } catch (error) {
            this.logger.debug('cache refresh failed', { counter: name, error: (error as Error).message });
          }
        }
      }
    }
    this.metrics.cacheRefreshSeconds.observe((this.now() - startedMs) / 1000);
  }

  /**
   * True when the read's counter is still the directory's, at the same
   * generation: a sum taken before a delete or a clear must not be cached
   * after it (the cache forgot the counter then, and a new counter may have
   * its name).
   */
  private stillCurrent(read: TotalRead): boolean {
    return read.source !== undefined && this.isCurrent(this.directory.get(read.counter), read);
  }

  /** True when `held` (the directory's counter for the name now) is `summed.source`, at `summed.generation`. */
  private isCurrent(held: CounterInfo | undefined, summed: { source: CounterInfo | undefined; generation: number }): boolean {
    return summed.source !== undefined && sameCounter(held, summed.source) && summed.source.generation === summed.generation;
  }

  private store(reads: readonly TotalRead[]): void {
    // Only counters still cached (one evicted while the round ran stays out),
    // and only sums still current (not from before a delete or a clear).
    for (const read of reads) {
      if (!this.stillCurrent(read)) continue;
      this.cache.update(read.counter, {
        total: read.total,
        shardCount: read.shardCount,
        asOfMs: read.asOfMs,
        source: read.source!,
        generation: read.generation,
      });
    }
  }

  private reportEvictions(): void {
    const { fullEvictedCount: full, idleEvictedCount: idle } = this.cache;
    this.metrics.cacheEvictions.inc({ reason: 'full' }, full - this.evictionsReported.full);
    this.metrics.cacheEvictions.inc({ reason: 'idle' }, idle - this.evictionsReported.idle);
    this.evictionsReported.full = full;
    this.evictionsReported.idle = idle;
  }
}
