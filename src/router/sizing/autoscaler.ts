// Every intervalMs: closes a heat sample, grows counters the sizing policy
// says are too hot for their shards (through the same directory path as
// SetShards: no data moves), and publishes per-counter metrics for the
// top-K hottest only — never one series per counter.
import { ErrorCode, TallyError, monotonicNowMs } from '../../wire/index.ts';
import { IntervalTask, hotCountersListedMax, type Logger, type counterV1 } from '../../common/index.ts';
import type { SizingDirectory } from '../directory/index.ts';
import { skewOf, type HeatSample, type HeatTracker } from './heat.ts';
import type { SizingPolicy } from './sizing-policy.ts';
import type { RouterMetrics } from '../metrics/index.ts';

/** One of the hottest counters, as AdminService.Hot returns it. */
export type HotCounter = counterV1.HotCounter__Output;

/** Per-shard increments/s from a sample, one entry per shard of the counter. */
export function shardRatesOf(sample: HeatSample | undefined, shardCount: number): number[] {
  const windowSec = (sample?.sampleMs ?? 0) / 1000;
  return Array.from({ length: shardCount }, (_, index) => (windowSec > 0 ? (sample?.shardCounts[index] ?? 0) / windowSec : 0));
}

export class Autoscaler {
  private readonly ticker: IntervalTask;
  /** The head of the last ranking: no more than Hot may list. */
  private hottest: HotCounter[] = [];
  private tracked = 0;
  /** Heat evictions already added to tally_heat_counters_evicted_total. */
  private heatEvictionsReported = 0;
  /** Heat refusals already added to tally_heat_touches_refused_total. */
  private heatRefusalsReported = 0;

  constructor(
    private readonly directory: SizingDirectory,
    private readonly heat: HeatTracker,
    private readonly policy: SizingPolicy,
    private readonly metrics: RouterMetrics,
    private readonly logger: Logger,
    /** counterLabels false: no series labelled by counter name (--metrics-counter-labels off). */
    private readonly settings: { intervalMs: number; topK: number; skewMinIncrements: number; counterLabels?: boolean },
    private readonly now: () => number = monotonicNowMs,
  ) {
    this.ticker = new IntervalTask({ name: 'autoscale tick', intervalMs: settings.intervalMs, logger }, () => this.tick());
  }

  start(): void {
    this.ticker.start();
  }

  stop(): void {
    this.ticker.stop();
  }

  /** The hottest counters as of the last tick, hottest first. */
  hot(limit: number): { counters: HotCounter[]; tracked: number } {
    return { counters: this.hottest.slice(0, limit), tracked: this.tracked };
  }

  async tick(): Promise<void> {
    const nowMs = this.now();
    const samples = this.heat.sample();
    // The heat table holds up to heatCountersMax counters, most of them too
    // cool to grow: only the few above one shard's capacity are looked up
    // and decided on, and only the listed head of the ranking is built.
    if (this.policy.watchedCount > 0) this.policy.retain(new Set(samples.map((sample) => sample.counter)));
    const growFromPerSec = this.policy.growFromPerSec;
    for (const sample of samples) {
      if (sample.ratePerSec <= growFromPerSec) {
        this.policy.cool(sample.counter);
        continue;
      }
      const counter = this.directory.get(sample.counter);
      if (counter === undefined) continue;
      const grownTo = this.policy.decide(
        counter.name,
        counter.shards.length,
        sample.ratePerSec,
        sample.peakPerSec,
        nowMs,
        counter.autoscale,
      );
      const from = counter.shards.length;
      if (grownTo !== undefined && (await this.grow(counter.name, grownTo))) {
        this.metrics.shardGrowths.inc({ cause: 'heat' });
        this.logger.info('growth', {
          counter: counter.name,
          from,
          to: grownTo,
          cause: 'heat',
          ratePerSec: Math.round(sample.ratePerSec),
          peakPerSec: Math.round(sample.peakPerSec),
        });
      }
    }
    samples.sort((a, b) => b.ratePerSec - a.ratePerSec);
    const hot: HotCounter[] = [];
    let ratePerSecSum = 0;
    let tracked = 0;
    for (const sample of samples) {
      if (hot.length >= hotCountersListedMax) {
        // Beyond the list: counted, not looked up (a counter deleted since its last increment is forgotten by heat).
        ratePerSecSum += sample.ratePerSec;
        tracked++;
        continue;
      }
      const counter = this.directory.get(sample.counter);
      if (counter === undefined) continue;
      ratePerSecSum += sample.ratePerSec;
      tracked++;
      const shardCount = counter.shards.length;
      const sampled = sample.shardCounts.reduce((sum, count) => sum + (count ?? 0), 0);
      hot.push({
        counter: counter.name,
        ratePerSec: sample.ratePerSec,
        peakPerSec: sample.peakPerSec,
        shards: shardCount,
        // Too few increments say nothing about skew.
        skew: sampled >= this.settings.skewMinIncrements ? skewOf(sample.shardCounts, shardCount) : 1,
        shardRates: shardRatesOf(sample, shardCount),
        autoscale: counter.autoscale,
      });
    }
    this.hottest = hot;
    this.tracked = tracked;
    this.publish(hot, ratePerSecSum, tracked);
  }

  /** False when the directory's shard cap refused the growth: the counter keeps its shards and the tick goes on. */
  private async grow(name: string, shardCount: number): Promise<boolean> {
    try {
      await this.directory.setShards(name, shardCount);
      return true;
    } catch (error) {
      if (!(error instanceof TallyError) || error.code !== ErrorCode.resourceExhausted) throw error;
      this.logger.warn('growth refused', { counter: name, to: shardCount, reason: error.message });
      return false;
    }
  }

  /** ratePerSecSum: of every tracked counter, listed or not. */
  private publish(hot: HotCounter[], ratePerSecSum: number, tracked: number): void {
    const { metrics } = this;
    metrics.counterRate.reset();
    metrics.counterShards.reset();
    metrics.counterSkew.reset();
    const top = hot.slice(0, this.settings.topK);
    for (const entry of this.settings.counterLabels === false ? [] : top) {
      metrics.counterRate.set({ counter: entry.counter }, entry.ratePerSec);
      metrics.counterShards.set({ counter: entry.counter }, entry.shards);
      metrics.counterSkew.set({ counter: entry.counter }, entry.skew);
    }
    const topRatePerSec = top.reduce((sum, entry) => sum + entry.ratePerSec, 0);
    metrics.otherCountersRate.set(Math.max(0, ratePerSecSum - topRatePerSec));
    metrics.trackedCounters.set(tracked);
    metrics.heatEvictions.inc(this.heat.evictedCount - this.heatEvictionsReported);
    this.heatEvictionsReported = this.heat.evictedCount;
    metrics.heatRefusals.inc(this.heat.refusedCount - this.heatRefusalsReported);
    this.heatRefusalsReported = this.heat.refusedCount;
    metrics.shardSkewMax.set(top.filter((entry) => entry.shards > 1).reduce((max, entry) => Math.max(max, entry.skew), 1));
  }
}
